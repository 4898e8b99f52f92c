export * from './enums';
export * from './entitlements';
export * from './models';
export * from './result';
export * from './wire-time';
export * from './readiness';
export * from './logger';
export * from './shell-words';
