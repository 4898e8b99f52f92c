/** Android key codes (android.view.KeyEvent) by name, and the character a key types into a text field. */

const NAMED: Record<string, number> = {
  UNKNOWN: 0, SOFT_LEFT: 1, SOFT_RIGHT: 2, HOME: 3, BACK: 4, CALL: 5, ENDCALL: 6, STAR: 17, POUND: 18,
  DPAD_UP: 19, DPAD_DOWN: 20, DPAD_LEFT: 21, DPAD_RIGHT: 22, DPAD_CENTER: 23, VOLUME_UP: 24, VOLUME_DOWN: 25,
  POWER: 26, CAMERA: 27, CLEAR: 28, COMMA: 55, PERIOD: 56, TAB: 61, SPACE: 62, ENTER: 66, DEL: 67, GRAVE: 68,
  MINUS: 69, EQUALS: 70, LEFT_BRACKET: 71, RIGHT_BRACKET: 72, BACKSLASH: 73, SEMICOLON: 74, APOSTROPHE: 75,
  SLASH: 76, AT: 77, PLUS: 81, MENU: 82, NOTIFICATION: 83, SEARCH: 84, MEDIA_PLAY_PAUSE: 85, MEDIA_STOP: 86,
  MEDIA_NEXT: 87, MEDIA_PREVIOUS: 88, MUTE: 91, PAGE_UP: 92, PAGE_DOWN: 93, ESCAPE: 111, FORWARD_DEL: 112,
  MOVE_HOME: 122, MOVE_END: 123, VOLUME_MUTE: 164, APP_SWITCH: 187, SLEEP: 223, WAKEUP: 224, CUT: 277, COPY: 278, PASTE: 279,
};
for (let d = 0; d <= 9; d++) NAMED[String(d)] = 7 + d;
for (let i = 0; i < 26; i++) NAMED[String.fromCharCode(65 + i)] = 29 + i;

export const KEYCODE = {
  HOME: 3, BACK: 4, VOLUME_UP: 24, VOLUME_DOWN: 25, POWER: 26, ENTER: 66, DEL: 67, FORWARD_DEL: 112, MENU: 82,
  APP_SWITCH: 187, SLEEP: 223, WAKEUP: 224, PASTE: 279, VOLUME_MUTE: 164,
} as const;

/** The key code of `KEYCODE_HOME`, `HOME` or `3`; undefined for an unknown name. */
export function keycodeOf(word: string): number | undefined {
  if (/^\d{1,4}$/.test(word)) return Number(word);
  const name = word.toUpperCase().replace(/^KEYCODE_/, '');
  return NAMED[name];
}

const TYPED: Record<number, string> = { 17: '*', 18: '#', 55: ',', 56: '.', 62: ' ', 68: '`', 69: '-', 70: '=', 71: '[', 72: ']', 73: '\\', 74: ';', 75: "'", 76: '/', 77: '@', 81: '+' };

/** The character a key types (without shift), if it types one. */
export function typedChar(keycode: number): string | undefined {
  if (keycode >= 7 && keycode <= 16) return String(keycode - 7);
  if (keycode >= 29 && keycode <= 54) return String.fromCharCode(97 + keycode - 29);
  return TYPED[keycode];
}
