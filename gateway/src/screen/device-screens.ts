/**
 * One capture per device, shared by all its viewers: the first viewer starts the device's screen source (from the
 * driver that owns the device), every frame goes to every viewer, and the capture stops once the last viewer has
 * been gone for `lingerMs` (a reloaded page does not restart it). A viewer joining a running capture gets its start
 * message and the newest frame at once. Input reaches the source only from viewers that may control; a view-only
 * viewer's input is dropped here, whatever the viewer's client sends.
 *
 * The automation servers say when an automation session starts or ends on a device (`automationChanged`); a
 * running capture then changes to the platform's source for that situation (Android: the UiAutomator2 server's
 * MJPEG stream during a session, minicap otherwise) while its viewers stay attached: they get a new start message.
 * A session's source that ends or cannot start falls back to the ordinary source instead of ending the capture
 * (the session's server stops its stream when the session ends, which may come before the session's end is told).
 */
import { type Logger, type ScreenControl, type ScreenInput, isControlInput } from '@devicelab/shared';
import { NO_CONTROLS, type ScreenCapability, type ScreenSink, type ScreenSource, type ScreenSourceInfo } from './screen-source';

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
  /** Counts the sources this capture ran: what an older one tells after it was replaced is dropped. */
  generation: number;
  /** The change of source under way (changes run one after another). */
  switching?: Promise<void>;
  /** The replaced source's stop, while it runs (the capture's own stop waits for it too). */
  retiring?: Promise<void>;
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
  /** Devices with an automation session running, as their automation server last said. */
  private readonly automationSessions = new Set<string>();
  /** Captures started since this gateway started (for tests and metrics). */
  startedCount = 0;

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
      const automation = this.automationSessions.has(vendorUniqueIdentifier);
      let source: ScreenSource;
      try {
        source = capability.open(vendorUniqueIdentifier, { automationSession: automation });
      } catch (err) {
        viewer.end(`The screen capture did not start: ${err instanceof Error ? err.message : String(err)}`);
        return () => undefined;
      }
      capture = { source, automation, generation: 0, viewers: new Set() };
      this.captures.set(vendorUniqueIdentifier, capture);
      this.start(vendorUniqueIdentifier, capture);
    }
    if (capture.linger) clearTimeout(capture.linger);
    capture.linger = undefined;
    capture.viewers.add(viewer);
    if (capture.info) {
      viewer.control(startMessage(capture.info, viewer.viewOnly));
      if (capture.lastFrame) viewer.frame(capture.lastFrame);
    }
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
   * An automation session started (`running`) or the last one ended on the device: a running capture changes to
   * the source for the new situation, keeping its viewers.
   */
  automationChanged(vendorUniqueIdentifier: string, running: boolean): void {
    if (running === this.automationSessions.has(vendorUniqueIdentifier)) return;
    if (running) this.automationSessions.add(vendorUniqueIdentifier);
    else this.automationSessions.delete(vendorUniqueIdentifier);
    const capture = this.captures.get(vendorUniqueIdentifier);
    if (capture) this.switchSource(vendorUniqueIdentifier, capture, running);
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
    const previous = this.stopping.get(vendorUniqueIdentifier) ?? Promise.resolve();
    void previous.then(() => this.run(vendorUniqueIdentifier, capture));
  }

  /** Starts the capture's current source; its sink speaks for the capture until the source is replaced. */
  private async run(vendorUniqueIdentifier: string, capture: Capture): Promise<void> {
    const generation = ++capture.generation;
    const current = (): boolean => capture.generation === generation && !capture.stopped;
    const failed = (reason: string): void => {
      if (!current()) return;
      if (capture.automation) this.switchSource(vendorUniqueIdentifier, capture, false);
      else this.end(vendorUniqueIdentifier, capture, reason);
    };
    const sink: ScreenSink = {
      started: (info) => {
        if (!current()) return;
        capture.info = info;
        for (const viewer of capture.viewers) viewer.control(startMessage(info, viewer.viewOnly));
      },
      frame: (image) => {
        if (!current()) return;
        capture.lastFrame = image;
        for (const viewer of capture.viewers) viewer.frame(image);
      },
      ended: (error) => failed(error?.message ?? 'The screen capture ended.'),
    };
    await capture.source.start(sink).catch((err: unknown) => {
      if (!current()) return;
      this.options.logger.warn({ err, device: vendorUniqueIdentifier, automation: capture.automation }, 'screen capture did not start');
      failed(`The screen capture did not start: ${err instanceof Error ? err.message : String(err)}`);
    });
  }

  /**
   * Replaces the capture's source by the platform's source for `automation`: the old one is stopped first (a
   * device program may take one client at a time), the viewers stay and get the new source's start message.
   */
  private switchSource(vendorUniqueIdentifier: string, capture: Capture, automation: boolean): void {
    capture.switching = (capture.switching ?? Promise.resolve()).then(async () => {
      if (capture.stopped || capture.automation === automation) return;
      const capability = this.capabilityOf(vendorUniqueIdentifier);
      if (!capability) return;
      const old = capture.source;
      capture.source = capability.open(vendorUniqueIdentifier, { automationSession: automation });
      capture.automation = automation;
      capture.generation++; // the old source's last words are not the capture's
      this.options.logger.info({ device: vendorUniqueIdentifier, automation }, 'screen capture changes its source');
      capture.retiring = old.stop().catch((err: unknown) => this.options.logger.warn({ err, device: vendorUniqueIdentifier }, 'screen source did not stop cleanly'));
      await capture.retiring;
      capture.retiring = undefined;
      if (capture.stopped) return; // end() stops the new source
      await this.run(vendorUniqueIdentifier, capture);
    }).catch((err: unknown) => {
      this.options.logger.warn({ err, device: vendorUniqueIdentifier }, 'screen capture could not change its source');
      this.end(vendorUniqueIdentifier, capture, `The screen capture could not change its source: ${err instanceof Error ? err.message : String(err)}`);
    });
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
    const stopped = previous.then(() => Promise.all([capture.retiring, capture.source.stop()])).then(() => undefined).catch((err: unknown) => {
      this.options.logger.warn({ err, device: vendorUniqueIdentifier }, 'screen capture did not stop cleanly');
    });
    capture.stopped = stopped;
    this.stopping.set(vendorUniqueIdentifier, stopped);
    void stopped.then(() => {
      if (this.stopping.get(vendorUniqueIdentifier) === stopped) this.stopping.delete(vendorUniqueIdentifier);
    });
  }
}

function startMessage(info: ScreenSourceInfo, viewOnly: boolean): ScreenControl {
  return {
    t: 'start', width: info.width, height: info.height, rotation: info.rotation, source: info.source, viewOnly,
    controls: viewOnly ? NO_CONTROLS : info.controls, ...(info.note ? { note: info.note } : {}),
  };
}
