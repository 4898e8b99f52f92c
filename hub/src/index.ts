export { startHub, type RunningHub } from './server';
export { hubConfigFromEnv, type HubConfig } from './config';
export { onShutdown } from './shutdown';
export { rotateUserToken, createUser } from './auth/users';
export { inOwnProcessGroup } from './cli/own-process-group';
