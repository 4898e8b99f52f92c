/**
 * The Android screen source: minicap (native binary and library for the device's ABI and SDK, or its apk through
 * `app_process` where no library exists) read through the host's adb server on `localabstract:minicap`, touch
 * through minitouch, keys and text through the shell (keys-and-text.ts). A rotation restarts minicap with the new
 * projection; touch points are turned back with it.
 */
import type { DeviceClient } from '@devicefarmer/adbkit';
import type { Duplex } from 'node:stream';
import type { Logger, ScreenInput } from '@devicelab/shared';
import { DeviceCommandError } from '../../device-driver';
import type { ScreenSink, ScreenSource } from '../../../screen/screen-source';
import Adb from '@devicefarmer/adbkit';
import { asCommandError, runShell, withDeviceSlot } from '../shell';
import { AGENT_DIR, connectAgent, killAgent, pushFile, readGreeting, startAgent } from './device-agent';
import { applyDeviceInput, setUserRotation, TextInput } from './keys-and-text';
import { type MinicapBanner, MinicapStreamReader, projection } from './minicap-stream';
import { type Minitouch, startMinitouchIfAble } from './minitouch';
import { chooseScreenBinaries, type MinicapFiles } from './screen-binaries';
import { parseInputRotation, readDisplayRotation, ROTATION_COMMAND, RotationWatch } from './display-rotation';

export interface AndroidScreenOptions {
  /** Longest edge of the frames in pixels (the device's own size when smaller). */
  maxEdge?: number;
  /** JPEG quality 1..100. */
  quality?: number;
  logger: Logger;
}

export interface DisplayFacts {
  abis: string[];
  sdk: number;
  width: number;
  height: number;
  rotation: number;
  /** Whether the device tells its rotation (`dumpsys input`), so that a turn of the display can be followed. */
  rotationKnown: boolean;
}

export async function readDisplayFacts(device: DeviceClient): Promise<DisplayFacts> {
  const out = await runShell(device, [
    'getprop ro.product.cpu.abilist', 'echo ::', 'getprop ro.product.cpu.abi', 'echo ::', 'getprop ro.build.version.sdk',
    'echo ::', 'wm size', 'echo ::', 'settings get system user_rotation', 'echo ::', ROTATION_COMMAND,
  ].join('; '), 15_000);
  const [abilist = '', abi = '', sdk = '', size = '', userRotation = '', inputRotation = ''] = out.split('::\n').map((part) => part.trim());
  const physical = /Physical size:\s*(\d+)x(\d+)/.exec(size);
  if (!physical) throw new DeviceCommandError(`Device ${device.serial} did not tell its display size`, 'SCREEN_UNAVAILABLE');
  // The user's rotation setting only where the input system does not say (it misses an app's own orientation).
  const quarter = Number(userRotation);
  const rotation = parseInputRotation(inputRotation);
  return {
    abis: (abilist || abi).split(',').map((a) => a.trim()).filter(Boolean),
    sdk: Number(sdk) || 0,
    width: Number(physical[1]),
    height: Number(physical[2]),
    rotation: rotation ?? (Number.isInteger(quarter) && quarter >= 0 && quarter <= 3 ? quarter * 90 : 0),
    rotationKnown: rotation !== undefined,
  };
}

/** One PNG of the screen by the device's own `screencap -p`, in a shell admission slot, within 15 s. */
export function screencap(device: DeviceClient): Promise<Buffer> {
  return withDeviceSlot(device, async () => {
    const stream = await device.screencap();
    const timer = setTimeout(() => stream.destroy(new Error('screencap did not finish within 15 s')), 15_000);
    try {
      const png = await Adb.util.readAll(stream);
      if (png.length < 8 || png.readUInt32BE(0) !== 0x89504e47) throw new Error('screencap gave no PNG');
      return png;
    } finally {
      clearTimeout(timer);
    }
  }).catch((err: unknown) => { throw asCommandError(device.serial, err); });
}

export class AndroidScreen implements ScreenSource {
  private sink: ScreenSink | undefined;
  private facts: DisplayFacts | undefined;
  private minicap: MinicapFiles | undefined;
  private capture: { socket: Duplex; shell: Duplex; banner: MinicapBanner } | undefined;
  private touch: Minitouch | undefined;
  private rotationWatch: RotationWatch | undefined;
  private readonly text: TextInput;
  private stopped = false;
  /** Counts captures started: an old capture's end after a restart (rotation) is not the source's end. */
  private generation = 0;

  constructor(private readonly device: DeviceClient, private readonly options: AndroidScreenOptions) {
    this.text = new TextInput(device);
  }

  async start(sink: ScreenSink): Promise<void> {
    this.sink = sink;
    const facts = await readDisplayFacts(this.device);
    this.facts = facts;
    const binaries = chooseScreenBinaries(facts);
    this.minicap = binaries.minicap;
    if (binaries.minicap.kind === 'native') {
      await pushFile(this.device, binaries.minicap.binary, `${AGENT_DIR}/minicap`);
      await pushFile(this.device, binaries.minicap.library, `${AGENT_DIR}/minicap.so`, 0o644);
    } else {
      await pushFile(this.device, binaries.minicap.apk, `${AGENT_DIR}/minicap.apk`, 0o644);
    }
    await this.startCapture();
    if (binaries.minitouch) this.touch = await startMinitouchIfAble(this.device, binaries.minitouch.binary, this.options.logger);
    if (this.stopped) {
      // Stopped while starting: what started meanwhile is not the stop's to know of.
      const touch = this.touch;
      this.touch = undefined;
      await Promise.all([this.stopCapture(), touch?.stop()]);
      return;
    }
    this.announce();
    this.watchRotation();
  }

  /**
   * Follows a turn of the display made on the device (the user, the accelerometer, an app): the projection must
   * change with it, so the capture is restarted (minicap takes its rotation only at start), as for the Rotate input.
   */
  private watchRotation(): void {
    const facts = this.facts!;
    if (!facts.rotationKnown || !this.sink?.restart) return;
    this.rotationWatch = new RotationWatch(() => readDisplayRotation(this.device), facts.rotation, (rotation) => {
      if (this.stopped) return;
      this.options.logger.info({ device: this.device.serial, from: facts.rotation, to: rotation }, 'the display turned');
      this.sink?.restart?.(`The display turned to ${rotation}°.`);
    });
  }

  private announce(): void {
    const facts = this.facts!;
    this.sink?.started({
      width: facts.width, height: facts.height, rotation: facts.rotation,
      controls: { touch: this.touch !== undefined, keys: true, text: true, rotate: true },
      source: this.minicap?.kind === 'apk' ? 'minicap-apk' : 'minicap',
      ...(this.touch ? {} : { note: 'Touch is not available on this device (minitouch did not start); keys and text work.' }),
    });
  }

  private async startCapture(): Promise<void> {
    const facts = this.facts!;
    const generation = ++this.generation;
    const args = `-P ${projection(facts.width, facts.height, facts.rotation, this.options.maxEdge ?? 960)} -S -Q ${this.options.quality ?? 80}`;
    const command = this.minicap?.kind === 'apk'
      ? `CLASSPATH=${AGENT_DIR}/minicap.apk exec app_process /system/bin io.devicefarmer.minicap.Main ${args}`
      : `LD_LIBRARY_PATH=${AGENT_DIR} exec ${AGENT_DIR}/minicap ${args}`;
    const agent = await startAgent(this.device, command);
    let shellOpen = true;
    agent.stream.once('close', () => { shellOpen = false; });
    let reader: MinicapStreamReader | undefined;
    let banner: MinicapBanner | undefined;
    const frames: Buffer[] = [];
    const connected = await connectAgent(this.device, 'minicap', 15_000, async (socket) => {
      reader = new MinicapStreamReader({
        banner: (b) => { banner = b; },
        frame: (jpeg) => {
          if (this.capture?.socket === socket) this.sink?.frame(jpeg);
          else frames.splice(0, frames.length, jpeg); // before the capture is in place, only the newest is kept
        },
        invalid: (reason) => socket.destroy(new Error(`minicap sent ${reason}`)),
      });
      const { rest } = await readGreeting(socket, (bytes) => (bytes.length >= 2 && bytes.length >= bytes[1] ? true : undefined), 5_000);
      reader.push(rest);
      return true;
    }, () => shellOpen).catch((err: unknown) => {
      agent.stream.destroy();
      const output = agent.output();
      throw new DeviceCommandError(`minicap did not start on device ${this.device.serial}${output ? `: ${output.slice(0, 300)}` : ''}`
        + (err instanceof Error ? ` (${err.message})` : ''), 'SCREEN_UNAVAILABLE');
    });
    const { socket } = connected;
    this.capture = { socket, shell: agent.stream, banner: banner! };
    socket.on('data', (chunk: Buffer) => reader!.push(chunk));
    socket.on('error', () => undefined);
    socket.once('close', () => {
      if (this.stopped || generation !== this.generation) return;
      this.options.logger.info({ device: this.device.serial, output: agent.output().slice(0, 300) }, 'minicap ended');
      void this.stop().then(() => this.sink?.ended(new Error('the screen capture ended on the device')));
    });
    for (const frame of frames) this.sink?.frame(frame);
    socket.resume();
  }

  private async stopCapture(): Promise<void> {
    const capture = this.capture;
    this.capture = undefined;
    if (!capture) return;
    capture.socket.destroy();
    capture.shell.destroy();
    await killAgent(this.device, capture.banner?.pid);
  }

  async input(input: ScreenInput): Promise<void> {
    if (this.stopped || !this.facts) return;
    if (await applyDeviceInput({ device: this.device, touch: this.touch, text: this.text }, this.facts.rotation, input)) return;
    switch (input.t) {
      case 'rotate': {
        if (input.rotation === this.facts.rotation) return;
        await setUserRotation(this.device, input.rotation);
        if (this.rotationWatch) {
          // The display turns on its own time (and not at all under an app fixed to one orientation): the watch
          // restarts the capture once it has.
          this.rotationWatch.check();
          return;
        }
        this.facts = { ...this.facts, rotation: input.rotation };
        await this.stopCapture();
        if (this.stopped) return;
        await this.startCapture();
        this.announce();
        return;
      }
      default:
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.generation++;
    this.rotationWatch?.stop();
    const touch = this.touch;
    this.touch = undefined;
    await Promise.all([this.stopCapture(), touch?.stop()]);
  }
}
