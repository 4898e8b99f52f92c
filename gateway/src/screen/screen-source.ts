/**
 * What a platform gives the live screen: a capture of one device's display (frames as still images) that may also
 * take input. The screen module (device-screens.ts) runs at most one per device and knows no platform; each
 * platform driver offers its own (`DeviceDriver.screen`).
 */
import type { ScreenControls, ScreenInput, ScreenKey } from '@devicelab/shared';

export interface ScreenSourceInfo {
  /** The display as upright, in pixels. */
  width: number;
  height: number;
  /** Degrees the frames are turned (0, 90, 180, 270). */
  rotation: number;
  controls: ScreenControls;
  /** The hardware keys the source takes, where it takes only some of them. */
  keys?: readonly ScreenKey[];
  /** The capture's name for viewers (`minicap`, `minicap-apk`, `uiautomator2-mjpeg`, `screenshotr`, `wda-mjpeg`). */
  source: string;
  note?: string;
}

export interface ScreenSink {
  /** The capture runs (again, after a rotation or a change of source): size, rotation and controls as they are now. */
  started(info: ScreenSourceInfo): void;
  /** One whole image (JPEG or PNG). */
  frame(image: Buffer): void;
  /** The capture ended on its own (device gone, process died); not called after `stop()`. */
  ended(error?: Error): void;
  /**
   * The source cannot go on as it was started (the display turned): it is stopped and a new one opened for the
   * same viewers. Without it, the source keeps running as it is.
   */
  restart?(reason: string): void;
}

export interface ScreenSource {
  /** Starts capturing into `sink`; resolves once the first `started` was given, rejects when it cannot start. */
  start(sink: ScreenSink): Promise<void>;
  /** Applies one input (touch, key, text, rotate); rejects with a user-facing error it cannot. */
  input(input: ScreenInput): Promise<void>;
  /** Ends the capture and whatever runs on the device for it. */
  stop(): Promise<void>;
}

/** What the screen module knows of the device when it opens a capture. */
export interface ScreenOpenOptions {
  /**
   * An automation session (Appium) runs on the device: a platform whose automation server streams the screen
   * itself reads that stream, so the capture does not compete with the session for the display.
   */
  automationSession: boolean;
}

/** A driver's screen capability: a new capture of one of its devices. */
export interface ScreenCapability {
  open(vendorUniqueIdentifier: string, options?: ScreenOpenOptions): ScreenSource;
  /** One still image taken now, cheaper than starting a capture (a grid's thumbnail); without it a capture is started. */
  still?(vendorUniqueIdentifier: string): Promise<Buffer>;
}

export const NO_CONTROLS: ScreenControls = { touch: false, keys: false, text: false, rotate: false };
