/**
 * The Android screen source while an Appium session runs: the UiAutomator2 server's own MJPEG stream
 * (MjpegScreenshotServer on device port 7810, frames of UiAutomation's screenshots at the session's
 * mjpegServerFramerate and mjpegScalingFactor), so the live screen takes nothing from the display the session does
 * not take already. The stream is read through the host's adb server (`tcp:7810` on the device), not through the
 * session's mjpegServerPort forward: that forward belongs to the session (a client may ask for another port or
 * none) and ends with it, the device port is the server's own. The server starts its stream once the session is
 * created and stops it with the session.
 *
 * Touch still goes through minitouch and keys and text through the shell, as with minicap: both reach the input
 * system below UiAutomator (minitouch writes the touch device, `input` injects events), as a person's finger
 * does, so the session is not disturbed. The frames are the display as it is (turned with it), as minicap's are.
 */
import type { DeviceClient } from '@devicefarmer/adbkit';
import type { Duplex } from 'node:stream';
import type { Logger, ScreenInput } from '@devicelab/shared';
import { DeviceCommandError } from '../../device-driver';
import type { ScreenSink, ScreenSource } from '../../../screen/screen-source';
import { MjpegResponseReader, mjpegRequest } from '../../../screen/mjpeg-reader';
import { readDisplayFacts, type DisplayFacts } from './android-screen';
import { applyDeviceInput, setUserRotation, TextInput } from './keys-and-text';
import { type Minitouch, startMinitouchIfAble } from './minitouch';
import { chooseScreenBinaries } from './screen-binaries';

/** The UiAutomator2 server's MJPEG port on the device (fixed in the server and the driver). */
const UIA2_MJPEG_DEVICE_PORT = 7810;
const UIA2_MJPEG_SOURCE = 'uiautomator2-mjpeg';
/** The server loops every 500 ms while it has no client; its first frame comes well within this. */
const FIRST_FRAME_MS = 10_000;

export interface Uia2MjpegOptions {
  logger: Logger;
  /** Largest frame accepted; the server's frames at its default 50 % scale are tens of KiB. */
  maxFrameBytes?: number;
}

export class UiAutomator2MjpegScreen implements ScreenSource {
  private sink: ScreenSink | undefined;
  private facts: DisplayFacts | undefined;
  private stream: Duplex | undefined;
  private touch: Minitouch | undefined;
  private readonly text: TextInput;
  private stopped = false;

  constructor(private readonly device: DeviceClient, private readonly options: Uia2MjpegOptions) {
    this.text = new TextInput(device);
  }

  async start(sink: ScreenSink): Promise<void> {
    this.sink = sink;
    this.facts = await readDisplayFacts(this.device);
    await this.openStream();
    const binaries = chooseScreenBinaries(this.facts);
    if (binaries.minitouch && !this.stopped) this.touch = await startMinitouchIfAble(this.device, binaries.minitouch.binary, this.options.logger);
    if (this.stopped) {
      const touch = this.touch;
      this.touch = undefined;
      this.stream?.destroy();
      await touch?.stop();
      return;
    }
    // The frames so far went to the sink, which holds the newest for the viewers until this start message.
    this.announce();
  }

  /** Connects to the stream; resolves at its first frame. */
  private async openStream(): Promise<void> {
    const serial = this.device.serial;
    let socket: Duplex;
    try {
      socket = await this.device.openTcp(UIA2_MJPEG_DEVICE_PORT);
    } catch (err) {
      throw new DeviceCommandError(`The UiAutomator2 server's MJPEG stream is not open on device ${serial}: ${err instanceof Error ? err.message : String(err)}`,
        'SCREEN_UNAVAILABLE');
    }
    this.stream = socket;
    let framed = false;
    return new Promise((resolve, reject) => {
      const fail = (reason: string): void => {
        clearTimeout(timer);
        socket.destroy();
        reject(new DeviceCommandError(`The UiAutomator2 server's MJPEG stream on device ${serial} ${reason}`, 'SCREEN_UNAVAILABLE'));
      };
      const timer = setTimeout(() => fail(`gave no frame within ${FIRST_FRAME_MS / 1000} s`), FIRST_FRAME_MS);
      const reader = new MjpegResponseReader({
        frame: (jpeg) => {
          this.sink?.frame(jpeg);
          if (framed) return;
          framed = true;
          clearTimeout(timer);
          resolve();
        },
        invalid: (reason) => (!framed ? fail(`sent ${reason}`) : socket.destroy(new Error(`the MJPEG stream sent ${reason}`))),
        closed: () => socket.end(),
      }, { maxPartBytes: this.options.maxFrameBytes });
      socket.on('data', (chunk: Buffer) => reader.push(chunk));
      socket.on('error', () => undefined);
      socket.once('close', () => {
        if (!framed) return fail('closed before its first frame');
        if (this.stopped || this.stream !== socket) return;
        this.options.logger.info({ device: serial }, 'the UiAutomator2 MJPEG stream ended');
        void this.stop().then(() => this.sink?.ended(new Error('the UiAutomator2 MJPEG stream ended')));
      });
      socket.write(mjpegRequest(`127.0.0.1:${UIA2_MJPEG_DEVICE_PORT}`));
    });
  }

  private announce(): void {
    const facts = this.facts!;
    this.sink?.started({
      width: facts.width, height: facts.height, rotation: facts.rotation,
      controls: { touch: this.touch !== undefined, keys: true, text: true, rotate: true },
      source: UIA2_MJPEG_SOURCE,
      note: 'An Appium session runs on this device: the picture is its UiAutomator2 server\'s MJPEG stream.'
        + (this.touch ? '' : ' Touch is not available (minitouch did not start); keys and text work.'),
    });
  }

  async input(input: ScreenInput): Promise<void> {
    if (this.stopped || !this.facts) return;
    if (await applyDeviceInput({ device: this.device, touch: this.touch, text: this.text }, this.facts.rotation, input)) return;
    switch (input.t) {
      case 'rotate':
        // The stream's frames turn with the display by themselves; only the touch mapping and the viewers change.
        if (input.rotation === this.facts.rotation) return;
        await setUserRotation(this.device, input.rotation);
        this.facts = { ...this.facts, rotation: input.rotation };
        if (!this.stopped) this.announce();
        return;
      default:
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stream?.destroy();
    const touch = this.touch;
    this.touch = undefined;
    await touch?.stop();
  }
}
