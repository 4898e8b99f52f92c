/**
 * The UiAutomator2 server as the instrumentation of io.appium.uiautomator2.server.test runs it: an HTTP server on
 * the device's port 6790 that lives until its session is deleted (it stops itself shortly after answering, as
 * DeleteSession does) or its process is killed.
 */
import type { DeviceSockets } from '../device-sockets';
import type { InstrumentationProgram } from '../instrumentation';
import type { DeviceScreen } from '../screen';
import type { AndroidDeviceSpec } from '../spec';
import { JsonWireServer } from '../../util/json-wire';
import { serveMjpeg } from '../../util/mjpeg-server';
import { uia2Routes, type Uia2State } from './routes';
import { DEFAULT_SETTINGS, Uia2Session } from './session';

export const UIA2_SERVER_PACKAGE = 'io.appium.uiautomator2.server';
export const UIA2_INSTRUMENTATION = `${UIA2_SERVER_PACKAGE}.test/androidx.test.runner.AndroidJUnitRunner`;
/** The test class AndroidJUnitRunner runs (what `am instrument` prints when it starts). */
export const UIA2_TEST_CLASS = `${UIA2_SERVER_PACKAGE}.test.AppiumUiAutomator2Server`;
export const UIA2_PORT = 6790;
/** The server's MJPEG screenshot stream (MjpegScreenshotServer). */
export const UIA2_MJPEG_PORT = 7810;
/** How long after answering DELETE /session the server stops (DeleteSession's delay). */
const STOP_AFTER_DELETE_MS = 15;

/** What the server reads of its device. */
export interface Uia2Host {
  readonly sockets: DeviceSockets;
  readonly screen: DeviceScreen;
  readonly spec: AndroidDeviceSpec;
  props(): Record<string, string>;
  androidId(): string;
  /** The installed server package's version (`/status` build). */
  serverVersion(): { version: string; versionCode: number };
}

export class UiAutomator2Server implements Uia2State {
  session: Uia2Session | null = null;
  /** Resolves when the server stopped on its own (after its session was deleted). */
  readonly finished: Promise<void>;
  private finish!: () => void;
  private readonly wire: JsonWireServer;
  private listening: Array<{ close(): void }> = [];
  private readonly streams = new Set<{ destroy(): void }>();

  constructor(readonly host: Uia2Host) {
    this.finished = new Promise((resolve) => (this.finish = resolve));
    this.wire = new JsonWireServer(uia2Routes(this), (params) => params.sessionId ?? this.session?.id ?? null, ['/wd/hub']);
  }

  /** Binds ports 6790 and 7810; throws EADDRINUSE as the real server's bind does when another one runs. */
  start(): void {
    try {
      this.bind();
    } catch (e) {
      this.stop();
      throw e;
    }
  }

  private bind(): void {
    this.listening.push(this.host.sockets.listen({ kind: 'tcp', port: UIA2_PORT }, (socket) => this.wire.accept(socket)));
    this.listening.push(this.host.sockets.listen({ kind: 'tcp', port: UIA2_MJPEG_PORT }, (socket) => {
      this.streams.add(socket);
      socket.once('close', () => this.streams.delete(socket));
      serveMjpeg(socket, { serverName: 'UiAutomator2', frame: () => this.mjpegFrame(), framesPerSecond: () => Number(this.settings().mjpegServerFramerate) || 10 });
    }));
  }

  private settings(): Record<string, unknown> {
    return this.session?.settings ?? DEFAULT_SETTINGS;
  }

  /** A frame scaled by mjpegScalingFactor (percent) at mjpegServerScreenshotQuality, as the server's stream sends. */
  private mjpegFrame(): Buffer {
    const { screen } = this.host;
    const scale = Math.max(1, Math.min(100, Number(this.settings().mjpegScalingFactor) || 50)) / 100;
    const quality = Math.max(1, Math.min(100, Number(this.settings().mjpegServerScreenshotQuality) || 50));
    return screen.jpeg(quality, Math.max(1, Math.round(screen.displayWidth * scale)), Math.max(1, Math.round(screen.displayHeight * scale)));
  }

  /** The process ended: the port closes and open connections drop. */
  stop(): void {
    for (const l of this.listening.splice(0)) l.close();
    for (const s of [...this.streams]) s.destroy();
    this.wire.closeAll();
    this.session = null;
  }

  newSession(caps: Record<string, unknown>): Uia2Session {
    this.session = new Uia2Session(caps, this.host.screen);
    return this.session;
  }

  deleteSession(): void {
    this.session = null;
    setTimeout(() => {
      this.stop();
      this.finish();
    }, STOP_AFTER_DELETE_MS);
  }
}

/** The server's instrumentation code: started by `am instrument`, printing what AndroidJUnitRunner prints. */
export function uiautomator2Program(host: Uia2Host): InstrumentationProgram {
  return () => {
    const server = new UiAutomator2Server(host);
    server.start();
    const startedAt = Date.now();
    return {
      startText: `\n${UIA2_TEST_CLASS}:\n`,
      get finishText() {
        return `.\nTime: ${((Date.now() - startedAt) / 1000).toFixed(3)}\n\nOK (1 test)\n\n\n`;
      },
      finished: server.finished,
      kill: () => server.stop(),
    };
  };
}
