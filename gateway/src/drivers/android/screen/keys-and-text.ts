/**
 * Hardware keys and typed text on Android. Keys are `input keyevent`. ASCII text is `input text`; other text goes
 * through Appium Settings' Unicode IME, which turns IMAP modified UTF-7 typed by `input text` back into the
 * characters (`input text` itself can only type ASCII). The IME's APK ships with the UiAutomator2 driver package
 * and is installed on first use.
 */
import type { DeviceClient } from '@devicefarmer/adbkit';
import { shellQuote, type ScreenInput, type ScreenKey } from '@devicelab/shared';
import { DeviceCommandError } from '../../device-driver';
import { runShell } from '../shell';
import type { Minitouch } from './minitouch';
import { appiumSettingsApk } from './screen-binaries';

const KEYCODES: Record<ScreenKey, number> = {
  home: 3, back: 4, app_switch: 187, volume_up: 24, volume_down: 25, power: 26, enter: 66, delete: 67, menu: 82,
};

const UNICODE_IME = 'io.appium.settings/.UnicodeIME';
const SETTINGS_PACKAGE = 'io.appium.settings';

export async function pressKey(device: DeviceClient, key: ScreenKey): Promise<void> {
  await runShell(device, `input keyevent ${KEYCODES[key]}`, 10_000);
}

/** IMAP modified UTF-7 (RFC 3501 5.1.3): printable ASCII as is (`&` as `&-`), the rest as `&<base64 of UTF-16BE>-`. */
export function encodeModifiedUtf7(text: string): string {
  let out = '';
  let run = '';
  const flush = () => {
    if (!run) return;
    const utf16 = Buffer.alloc(run.length * 2);
    for (let i = 0; i < run.length; i++) utf16.writeUInt16BE(run.charCodeAt(i), i * 2);
    out += `&${utf16.toString('base64').replace(/=+$/, '').replace(/\//g, ',')}-`;
    run = '';
  };
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (code >= 0x20 && code <= 0x7e) {
      flush();
      out += ch === '&' ? '&-' : ch;
    } else {
      run += ch;
    }
  }
  flush();
  return out;
}

/** `input text` reads `%s` as a space. */
const inputTextArgument = (text: string): string => shellQuote(text.replace(/ /g, '%s'));

export class TextInput {
  private imeReady = false;

  constructor(private readonly device: DeviceClient) {}

  async type(text: string): Promise<void> {
    // Line ends are Enter presses; other control characters have no key to type them.
    const lines = text.replace(/\r\n?/g, '\n').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (i > 0) await pressKey(this.device, 'enter');
      const line = lines[i].replace(/[\u0000-\u001f\u007f]/g, '');
      if (line) await this.typeLine(line);
    }
  }

  private async typeLine(line: string): Promise<void> {
    if (/^[\x20-\x7e]*$/.test(line) && !this.imeReady) {
      await runShell(this.device, `input text ${inputTextArgument(line)}`, 30_000);
      return;
    }
    await this.useUnicodeIme();
    await runShell(this.device, `input text ${inputTextArgument(encodeModifiedUtf7(line))}`, 30_000);
  }

  private async useUnicodeIme(): Promise<void> {
    if (this.imeReady) return;
    const installed = await runShell(this.device, `pm path ${SETTINGS_PACKAGE}`, 15_000);
    if (!installed.includes('package:')) {
      const apk = appiumSettingsApk();
      if (!apk) throw new DeviceCommandError('Typing this text needs the Appium Settings app, which is not available on this gateway', 'UNSUPPORTED_COMMAND');
      await this.device.install(apk);
    }
    await runShell(this.device, `ime enable ${UNICODE_IME}`, 15_000);
    const set = await runShell(this.device, `ime set ${UNICODE_IME}`, 15_000);
    if (/error|unknown|not/i.test(set) && !/selected/i.test(set)) {
      throw new DeviceCommandError(`The device refused the Unicode keyboard: ${set.trim().slice(0, 200)}`, 'SCREEN_UNAVAILABLE');
    }
    this.imeReady = true;
  }
}

/** What every Android screen source does with a finger, a key or text (all enter below UiAutomator, as a finger). */
export interface DeviceInputs {
  device: DeviceClient;
  touch?: Minitouch;
  text: TextInput;
}

/** Applies a touch, key or text input; false for an input the source handles itself (rotate). */
export async function applyDeviceInput(inputs: DeviceInputs, rotation: number, input: ScreenInput): Promise<boolean> {
  switch (input.t) {
    case 'touch':
      inputs.touch?.touch(input.a, input.c ?? 0, input.x, input.y, rotation);
      return true;
    case 'key':
      await pressKey(inputs.device, input.key);
      return true;
    case 'text':
      await inputs.text.type(input.text);
      return true;
    default:
      return false;
  }
}

/** Turns the display as the Rotate button asks: auto-rotate off, the user's rotation set (quarter turns). */
export async function setUserRotation(device: DeviceClient, degrees: number): Promise<void> {
  await runShell(device, `settings put system accelerometer_rotation 0; settings put system user_rotation ${degrees / 90}`, 10_000);
}
