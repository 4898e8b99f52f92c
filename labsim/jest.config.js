/** Local jest config for labsim (tests drive the real adb binary, so they are slow-ish and run in parallel files). */
module.exports = {
  rootDir: __dirname,
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json' }] },
  testTimeout: 30000,
};
