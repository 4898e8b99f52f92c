/**
 * One capture per device, shared by all its viewers: the first viewer starts the device's screen source (from the
 * driver that owns the device), every frame goes to every viewer, and the capture stops once the last viewer has
 * been gone for `lingerMs` (a reloaded page does not restart it). A viewer joining a running capture gets its start
 * message and the newest frame at once. Input reaches the source only from viewers that may control; a view-only
 * viewer's input is dropped here, whatever the viewer's client sends.
 *
 * The automation servers say when an automation session starts or ends on a device (`automationChanged`); a
 * running capture then restarts with the platform's source for that situation (Android: the UiAutomator2 server's
 * MJPEG stream during a session, minicap otherwise) while its viewers stay attached: they get a new start message.
 * A session's source that ends or cannot start falls back to the ordinary source instead of ending the capture
 * (the session's server stops its stream when the session ends, which may come before the session's end is told).
 */
import { type Logger, type ScreenControl, type ScreenInput, isControlInput } from '@devicelab/shared';
import { NO_CONTROLS, type ScreenCapability, type ScreenSource, type ScreenSourceInfo } from './screen-source';

export interface ScreenViewer {
  readonly viewOnly: boolean;
  /** A control message (start, error): always delivered, in order. */
  control(message: ScreenControl): void;
  /** The newest image: a viewer that cannot keep up keeps only the newest one waiting. */
  frame(image: Buffer): void;
  /** The capture ended or could not start; the viewer is detached. */
  end(reason: string): void;
}

interface Capture {
  source: ScreenSource;
  /** Whether `source` was opened for a running automation session. */
  automation: boolean;
  /** The automation session's source failed: the ordinary one until the next session change. */
  automationFailed?: boolean;
  /** The run whose callbacks count; a source being replaced or stopped has none. */
  live?: object;
  /** The stop of a source replaced by a restart (what comes next on the device waits for it). */
  replaced?: Promise<void>;
  /** A restart under way, and whether another was asked for meanwhile (one more then covers all of them). */
  restart?: { done: Promise<void>; again: boolean };
  viewers: Set<ScreenViewer>;
  info?: ScreenSourceInfo;
  lastFrame?: Buffer;
  linger?: NodeJS.Timeout;
  /** Resolves once the source has stopped (a new capture of the device waits for it). */
  stopped?: Promise<void>;
}

export interface DeviceScreensOptions {
  /** How long a capture without viewers keeps running; default 2 s. */
  lingerMs?: number;
  logger: Logger;
}

export class DeviceScreens {
  private readonly captures = new Map<string, Capture>();
  /** Stops still running, by device: a new capture waits for them (minicap takes one client at a time). */
  private readonly stopping = new Map<string, Promise<void>>();
  /** Captures started since this gateway started (for tests and metrics). */
  startedCount = 0;
  /** Devices with an automation session running, as their automation server last said. */
  private readonly automationSessions = new Set<string>();

  constructor(private readonly capabilityOf: (vendorUniqueIdentifier: string) => ScreenCapability | undefined,
    private readonly options: DeviceScreensOptions) {}

  /** Devices with a running capture. */
  running(): string[] {
    return [...this.captures.keys()];
  }

  viewerCount(vendorUniqueIdentifier: string): number {
    return this.captures.get(vendorUniqueIdentifier)?.viewers.size ?? 0;
  }

  /** Adds a viewer of the device, starting its capture when none runs; returns the viewer's detach. */
  attach(vendorUniqueIdentifier: string, viewer: ScreenViewer): () => void {
    let capture = this.captures.get(vendorUniqueIdentifier);
    if (!capture) {
      const capability = this.capabilityOf(vendorUniqueIdentifier);
      if (!capability) {
        viewer.end('This device has no live screen on its gateway.');
        return () => undefined;
      }
      let opened: Pick<Capture, 'source' | 'automation'>;
      try {
        opened = this.openSource(vendorUniqueIdentifier, capability, false);
      } catch (err) {
        viewer.end(`The screen capture did not start: ${err instanceof Error ? err.message : String(err)}`);
        return () => undefined;
      }
      capture = { ...opened, viewers: new Set() };
      this.captures.set(vendorUniqueIdentifier, capture);
      this.start(vendorUniqueIdentifier, capture);
    }
    if (capture.linger) clearTimeout(capture.linger);
    capture.linger = undefined;
    capture.viewers.add(viewer);
    greet(viewer, capture);
    const joined = capture;
    return () => this.detach(vendorUniqueIdentifier, joined, viewer);
  }

  /**
   * One still of the device's screen: the newest frame of a running capture, else the platform's one-shot picture,
   * else the first frame of a capture started for it.
   */
  async still(vendorUniqueIdentifier: string, timeoutMs: number): Promise<Buffer> {
    const running = this.captures.get(vendorUniqueIdentifier)?.lastFrame;
    if (running) return running;
    const capability = this.capabilityOf(vendorUniqueIdentifier);
    if (!capability) throw new Error('This device has no live screen on its gateway.');
    if (capability.still) return capability.still(vendorUniqueIdentifier);
    return new Promise((resolve, reject) => {
      let detach = (): void => undefined;
      const timer = setTimeout(() => { detach(); reject(new Error('The device gave no screen image in time.')); }, timeoutMs);
      const viewer: ScreenViewer = {
        viewOnly: true,
        control: () => undefined,
        frame: (image) => { clearTimeout(timer); setImmediate(() => detach()); resolve(image); },
        end: (reason) => { clearTimeout(timer); reject(new Error(reason)); },
      };
      detach = this.attach(vendorUniqueIdentifier, viewer);
    });
  }

  /**
   * An automation session started (`running`) or the last one ended on the device: a running capture restarts with
   * the source for the new situation, keeping its viewers.
   */
  automationChanged(vendorUniqueIdentifier: string, running: boolean): void {
    if (running === this.automationSessions.has(vendorUniqueIdentifier)) return;
    if (running) this.automationSessions.add(vendorUniqueIdentifier);
    else this.automationSessions.delete(vendorUniqueIdentifier);
    const capture = this.captures.get(vendorUniqueIdentifier);
    if (!capture) return;
    capture.automationFailed = false;
    if (capture.automation !== running) {
      void this.restartCapture(vendorUniqueIdentifier, running ? 'an automation session started' : 'the automation session ended');
    }
  }

  /** Passes a viewer's input to the device's source; a view-only viewer's is dropped. */
  async input(vendorUniqueIdentifier: string, viewer: ScreenViewer, input: ScreenInput): Promise<void> {
    if (viewer.viewOnly && isControlInput(input)) return;
    const capture = this.captures.get(vendorUniqueIdentifier);
    if (!capture?.info || !capture.viewers.has(viewer)) return;
    await capture.source.input(input);
  }

  /** Stops every capture (the gateway stops). */
  async stop(): Promise<void> {
    const all = [...this.captures.entries()];
    for (const [id, capture] of all) this.end(id, capture, 'The gateway is stopping.');
    await Promise.allSettled([...this.stopping.values()]);
  }

  private start(vendorUniqueIdentifier: string, capture: Capture): void {
    this.startedCount++;
    const source = capture.source;
    const live = {};
    capture.live = live;
    const current = () => capture.live === live && !capture.stopped;
    const previous = this.stopping.get(vendorUniqueIdentifier) ?? Promise.resolve();
    void previous.then(() => source.start({
      started: (info) => {
        if (!current()) return;
        capture.info = info;
        for (const viewer of capture.viewers) greet(viewer, capture);
      },
      frame: (image) => {
        if (!current()) return;
        capture.lastFrame = image;
        // Frames before the start message (a capture still setting up its input) wait: a viewer learns the size and
        // rotation first, then gets the newest frame.
        if (capture.info) for (const viewer of capture.viewers) viewer.frame(image);
      },
      ended: (error) => {
        if (current()) this.failed(vendorUniqueIdentifier, capture, error?.message ?? 'The screen capture ended.');
      },
      restart: (reason) => {
        if (current()) void this.restartCapture(vendorUniqueIdentifier, reason);
      },
    })).catch((err: unknown) => {
      if (!current()) return;
      this.options.logger.warn({ err, device: vendorUniqueIdentifier, automation: capture.automation }, 'screen capture did not start');
      this.failed(vendorUniqueIdentifier, capture, `The screen capture did not start: ${err instanceof Error ? err.message : String(err)}`);
    });
  }

  /** The source ended or did not start: an automation session's source gives way to the ordinary one, else the end. */
  private failed(vendorUniqueIdentifier: string, capture: Capture, reason: string): void {
    if (!capture.automation) {
      this.end(vendorUniqueIdentifier, capture, reason);
      return;
    }
    capture.automationFailed = true;
    void this.restartCapture(vendorUniqueIdentifier, `the automation session's source failed: ${reason}`);
  }

  /**
   * Replaces the device's running capture by a new one from its capability, keeping the viewers: the display
   * turned (the projection changes), or what the device offers changed (an automation session's stream began or
   * ended). The old source stops first (a device's capture program takes one client); the viewers then get the new
   * start message and the new source's frames. Requests while one runs are folded into one more restart.
   */
  restartCapture(vendorUniqueIdentifier: string, reason: string): Promise<void> {
    const capture = this.captures.get(vendorUniqueIdentifier);
    if (!capture || capture.stopped) return Promise.resolve();
    if (capture.restart) {
      capture.restart.again = true;
      return capture.restart.done;
    }
    const restart = { again: false, done: Promise.resolve() };
    capture.restart = restart;
    restart.done = (async () => {
      do {
        restart.again = false;
        await this.replaceSource(vendorUniqueIdentifier, capture, reason);
      } while (restart.again && !capture.stopped);
      capture.restart = undefined;
    })();
    return restart.done;
  }

  private async replaceSource(vendorUniqueIdentifier: string, capture: Capture, reason: string): Promise<void> {
    this.options.logger.info({ device: vendorUniqueIdentifier, reason }, 'screen capture restarts');
    const old = capture.source;
    capture.live = undefined;
    capture.info = undefined;
    capture.lastFrame = undefined;
    capture.replaced = old.stop().catch((err: unknown) => {
      this.options.logger.warn({ err, device: vendorUniqueIdentifier }, 'screen capture did not stop cleanly');
    });
    await capture.replaced;
    if (capture.stopped) return;
    try {
      const capability = this.capabilityOf(vendorUniqueIdentifier);
      if (!capability) throw new Error('This device has no live screen on its gateway.');
      Object.assign(capture, this.openSource(vendorUniqueIdentifier, capability, capture.automationFailed === true));
    } catch (err) {
      this.end(vendorUniqueIdentifier, capture, `The screen capture did not restart: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    this.start(vendorUniqueIdentifier, capture);
  }

  /** Opens the device's source: the automation session's while one runs and its source has not failed. */
  private openSource(vendorUniqueIdentifier: string, capability: ScreenCapability, automationFailed: boolean): Pick<Capture, 'source' | 'automation'> {
    const automation = this.automationSessions.has(vendorUniqueIdentifier) && !automationFailed;
    return { source: capability.open(vendorUniqueIdentifier, { automationSession: automation }), automation };
  }

  private detach(vendorUniqueIdentifier: string, capture: Capture, viewer: ScreenViewer): void {
    if (!capture.viewers.delete(viewer) || capture.viewers.size > 0) return;
    if (this.captures.get(vendorUniqueIdentifier) !== capture) return;
    capture.linger = setTimeout(() => {
      if (capture.viewers.size === 0) this.end(vendorUniqueIdentifier, capture, 'No viewers are left.');
    }, this.options.lingerMs ?? 2_000);
    capture.linger.unref();
  }

  private end(vendorUniqueIdentifier: string, capture: Capture, reason: string): void {
    if (capture.stopped) return;
    if (capture.linger) clearTimeout(capture.linger);
    if (this.captures.get(vendorUniqueIdentifier) === capture) this.captures.delete(vendorUniqueIdentifier);
    const viewers = [...capture.viewers];
    capture.viewers.clear();
    capture.lastFrame = undefined;
    for (const viewer of viewers) viewer.end(reason);
    const previous = this.stopping.get(vendorUniqueIdentifier) ?? Promise.resolve();
    const stopped = previous.then(() => capture.replaced).then(() => capture.source.stop()).catch((err: unknown) => {
      this.options.logger.warn({ err, device: vendorUniqueIdentifier }, 'screen capture did not stop cleanly');
    });
    capture.stopped = stopped;
    this.stopping.set(vendorUniqueIdentifier, stopped);
    void stopped.then(() => {
      if (this.stopping.get(vendorUniqueIdentifier) === stopped) this.stopping.delete(vendorUniqueIdentifier);
    });
  }
}

/** A viewer of a started capture learns its size and rotation first, then gets the newest frame; before, nothing. */
function greet(viewer: ScreenViewer, capture: Capture): void {
  if (!capture.info) return;
  viewer.control(startMessage(capture.info, viewer.viewOnly));
  if (capture.lastFrame) viewer.frame(capture.lastFrame);
}

function startMessage(info: ScreenSourceInfo, viewOnly: boolean): ScreenControl {
  return {
    t: 'start', width: info.width, height: info.height, rotation: info.rotation, source: info.source, viewOnly,
    controls: viewOnly ? NO_CONTROLS : info.controls, ...(info.note ? { note: info.note } : {}),
    ...(info.keys && !viewOnly ? { keys: [...info.keys] } : {}),
  };
}
