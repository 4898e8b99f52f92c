// One jest run over every package; tests live in each package's test/ folder as *.test.ts.
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/shared', '<rootDir>/proto', '<rootDir>/labsim', '<rootDir>/gateway', '<rootDir>/hub', '<rootDir>/cli', '<rootDir>/scripts'],
  testMatch: ['**/test/**/*.test.ts'],
  transform: {
    // Type checking happens once in `tsc -b` (scripts/test.mjs); jest only transpiles.
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.test.json', }],
  },
  moduleNameMapper: { '^@devicelab/(shared|proto|hub|gateway|labsim)$': '<rootDir>/$1/src' },
  globalSetup: '<rootDir>/scripts/jest/global-setup.ts',
  setupFiles: ['<rootDir>/scripts/jest/transaction-guard.ts'],
  globalTeardown: '<rootDir>/scripts/jest/global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
};
