/**
 * WebDriverAgent running on a simulated iPhone: its HTTP server on device port 8100, reached through usbmuxd's
 * Connect as go-ios or iproxy forward it. One session at a time, as WDA has.
 */
import type { Duplex } from 'node:stream';
import { JsonWireServer } from '../../util/json-wire';
import { serveMjpeg } from '../../util/mjpeg-server';
import type { IosDeviceSpec } from '../spec';
import { XctestScreen } from './xctest-screen';
import { WDA_DEFAULT_SETTINGS, type WdaSession } from './wda-session';
import { wdaRoutes, type WdaState } from './wda-routes';

export const WDA_PORT = 8100;
/** WDA's MJPEG screenshot stream (FBMjpegServer). */
export const WDA_MJPEG_PORT = 9100;
/** The WebDriverAgent version the simulated runner reports. */
const WDA_VERSION = '9.15.3';

export class WdaServer implements WdaState {
  session: WdaSession | null = null;
  /** FBConfiguration: the runner's settings, which outlive its sessions. */
  readonly settings: Record<string, unknown> = { ...WDA_DEFAULT_SETTINGS };
  private readonly wire: JsonWireServer;
  private readonly startedAt = new Date();

  constructor(readonly screen: XctestScreen, private readonly spec: () => IosDeviceSpec) {
    // Every answer names the active session, whatever the request's path said (FBResponseWithStatus).
    this.wire = new JsonWireServer(wdaRoutes(this), () => this.session?.id ?? null);
  }

  accept(socket: Duplex): void {
    this.wire.accept(socket);
  }

  /** A client of the MJPEG stream: frames at mjpegServerFramerate, scaled and compressed as the settings say. */
  acceptMjpeg(socket: Duplex): void {
    const setting = (key: string) => Number(this.settings[key]);
    serveMjpeg(socket, {
      serverName: 'WDA MJPEG Server',
      framesPerSecond: () => setting('mjpegServerFramerate') || 10,
      frame: () => this.screen.jpeg(Math.max(1, Math.min(100, setting('mjpegServerScreenshotQuality') || 25)), Math.max(1, Math.min(100, setting('mjpegScalingFactor') || 100))),
    });
  }

  /** The device went away (reboot, unplug): connections drop and the session ends with the runner. */
  stop(): void {
    this.wire.closeAll();
    this.session = null;
  }

  status(): Record<string, unknown> {
    const spec = this.spec();
    return {
      build: { time: this.startedAt.toUTCString().replace(/^\w+, /, ''), productBundleIdentifier: 'com.facebook.WebDriverAgentRunner', version: WDA_VERSION },
      os: { testmanagerdVersion: 28, name: 'iOS', sdkVersion: spec.productVersion.split('.').slice(0, 2).join('.'), version: spec.productVersion },
      device: spec.deviceClass === 'iPad' ? 'ipad' : 'iphone',
      ios: { ip: '169.254.0.1' },
      message: 'WebDriverAgent is ready to accept commands',
      state: 'success',
      ready: true,
    };
  }

  deviceInfo(): Record<string, unknown> {
    const spec = this.spec();
    return {
      currentLocale: 'en_US', timeZone: spec.timezone, name: spec.deviceName, model: spec.deviceClass, uuid: spec.udid,
      userInterfaceIdiom: spec.deviceClass === 'iPad' ? 1 : 0, userInterfaceStyle: 'light', isSimulator: false,
      osVersion: spec.productVersion, thermalState: 0,
    };
  }
}
