export * from './drivers/device-driver';
export { AndroidDriver, type AndroidDriverOptions } from './drivers/android/android-driver';
export { AppCache, BlobDigestMismatchError } from './apps/app-cache';
export { HubLink, GATEWAY_VERSION, type HubLinkOptions, type HubLinkTls } from './link/hub-link';
export { hubProof, verifyHubProof } from './link/hub-proof';
export { Backoff, DEFAULT_BACKOFF, type BackoffOptions } from './link/backoff';
export { CommandExecutor } from './link/command-executor';
export { startGateway, type GatewayOptions, type RunningGateway } from './gateway';
export { optionsFromEnv } from './main';
