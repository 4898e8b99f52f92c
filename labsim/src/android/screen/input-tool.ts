/**
 * `input`, as Android's InputShellCommand reads it: `[<source>] [-d DISPLAY_ID] <command> [<arg>...]` with text,
 * keyevent, tap, swipe, draganddrop, motionevent, keycombination, press and roll, applied to the device's screen.
 * `input text` types through the selected keyboard: the stock one maps ASCII only (anything else fails the whole
 * command, as KeyCharacterMap.getEvents does), Appium's Unicode IME decodes modified UTF-7 into any text.
 */
import type { ToolIO } from '../tool-io';
import type { DeviceScreen } from './device-screen';
import { keycodeOf } from './keys';
import { decodeModifiedUtf7 } from './utf7';

export const UNICODE_IME = 'io.appium.settings/.UnicodeIME';

export interface InputHost {
  screen: DeviceScreen;
  /** The selected keyboard's id (`settings get secure default_input_method`). */
  inputMethod(): string;
  record(args: string[]): void;
}

const SOURCES = new Set(['keyboard', 'mouse', 'joystick', 'touchnavigation', 'touchpad', 'trackball', 'dpad', 'stylus', 'gamepad', 'touchscreen', 'rotaryencoder']);
const USAGE = `Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]

The sources are:
      dpad, keyboard, mouse, touchpad, gamepad, touchnavigation, joystick, touchscreen, stylus, trackball

-d: specify the display ID.
      (Default: -1 for key event, 0 for motion event if not specified.)
The commands and default sources are:
      text <string> (Default: keyboard)
      keyevent [--longpress|--duration <duration to hold key down in ms>] [--doubletap] [--async] [--delay <duration between keycodes in ms>] <key code number or name> ... (Default: keyboard)
      tap <x> <y> (Default: touchscreen)
      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)
      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)
      press (Default: trackball)
      roll <dx> <dy> (Default: trackball)
      motionevent <DOWN|UP|MOVE|CANCEL> <x> <y> (Default: touchscreen)
      keycombination [-t duration(ms)] <key code 1> <key code 2> ... (Default: keyboard)
`;

/** Whether an input method id names Appium's Unicode IME (short or full class form). */
export function isUnicodeIme(id: string): boolean {
  return id === UNICODE_IME || id === 'io.appium.settings/io.appium.settings.UnicodeIME';
}

const number = (s: string | undefined): number | undefined => (s !== undefined && /^-?\d+(\.\d+)?$/.test(s) ? Number(s) : undefined);

export async function inputTool(host: InputHost, args: string[], io: ToolIO): Promise<number> {
  let rest = [...args];
  if (rest[0] && SOURCES.has(rest[0])) rest = rest.slice(1);
  if (rest[0] === '-d') rest = rest.slice(2);
  const [command, ...params] = rest;
  const bad = () => {
    io.err(`Error: Invalid arguments for command: ${command ?? ''}\n${USAGE}`);
    return 1;
  };
  const screen = host.screen;
  switch (command) {
    case 'text': {
      if (params[0] === undefined) return bad();
      // Only the first argument is the text; "%s" stands for a space.
      const raw = params[0].replace(/%s/g, ' ');
      const unicode = isUnicodeIme(host.inputMethod());
      if (!unicode && /[^\x20-\x7e\t\n]/.test(raw)) {
        io.err("Exception occurred while executing 'text':\njava.lang.NullPointerException: Attempt to get length of null array\n\tat com.android.server.input.InputShellCommand.sendText(InputShellCommand.java:307)\n");
        return 255;
      }
      host.record(args);
      screen.typeText(unicode ? decodeModifiedUtf7(raw) : raw);
      return 0;
    }
    case 'keyevent':
    case 'keycombination': {
      const codes: number[] = [];
      for (let i = 0; i < params.length; i++) {
        const p = params[i];
        if (p === '--duration' || p === '--delay' || p === '-t') i++;
        else if (p.startsWith('--')) continue;
        else {
          const code = keycodeOf(p);
          if (code !== undefined) codes.push(code);
        }
      }
      if (codes.length === 0) return bad();
      host.record(args);
      for (const code of codes) screen.pressKey(code);
      return 0;
    }
    case 'tap': {
      const [x, y] = params.map(number);
      if (params.length !== 2 || x === undefined || y === undefined) return bad();
      host.record(args);
      screen.touch(0, 'down', x, y);
      screen.touch(0, 'up', x, y);
      return 0;
    }
    case 'swipe':
    case 'draganddrop': {
      const [x1, y1, x2, y2, ms] = params.map(number);
      if ((params.length !== 4 && params.length !== 5) || [x1, y1, x2, y2].some((v) => v === undefined) || (params.length === 5 && ms === undefined)) return bad();
      host.record(args);
      const steps = 8;
      screen.touch(0, 'down', x1!, y1!);
      for (let i = 1; i <= steps; i++) {
        screen.touch(0, 'move', x1! + ((x2! - x1!) * i) / steps, y1! + ((y2! - y1!) * i) / steps);
        if (ms) await new Promise((r) => setTimeout(r, Math.min(ms, 10_000) / steps));
      }
      screen.touch(0, 'up', x2!, y2!);
      return 0;
    }
    case 'motionevent': {
      const action = params[0]?.toUpperCase();
      const [x, y] = params.slice(1).map(number);
      if (!['DOWN', 'UP', 'MOVE', 'CANCEL'].includes(action ?? '') || x === undefined || y === undefined) return bad();
      host.record(args);
      screen.touch(0, action === 'DOWN' ? 'down' : action === 'MOVE' ? 'move' : action === 'UP' ? 'up' : 'cancel', x, y);
      return 0;
    }
    case 'press':
    case 'roll':
      host.record(args);
      return 0;
    default:
      io.err(`Error: Unknown command: ${command ?? ''}\n${USAGE}`);
      return 1;
  }
}
