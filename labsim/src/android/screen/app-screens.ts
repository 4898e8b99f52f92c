/** What each app's screen holds: its text field's text and focus, and its status line. */
import type { AppUiState, UiNode } from './hierarchy';

/** A field holds a bounded text, so a flood of input cannot grow the hierarchy without end. */
const MAX_FIELD_TEXT = 10_000;

export class AppScreens {
  private readonly states = new Map<string, AppUiState>();

  /** The app's screen state; an app shown the first time has an empty, focused field. */
  state(pkg: string): AppUiState {
    let ui = this.states.get(pkg);
    if (!ui) {
      ui = { text: '', focused: true, status: '' };
      this.states.set(pkg, ui);
    }
    return ui;
  }

  forget(pkg: string): void {
    this.states.delete(pkg);
  }

  clear(): void {
    this.states.clear();
  }

  /** The focused field's text after an edit; undefined when nothing changes (no focus, same text). */
  edited(pkg: string, edit: (current: string) => string): string | undefined {
    const ui = this.state(pkg);
    const next = ui.focused ? edit(ui.text).slice(0, MAX_FIELD_TEXT) : undefined;
    if (next === undefined || next === ui.text) return undefined;
    ui.text = next;
    return next;
  }

  /** A tap on one of the app's views: the field takes the focus, the button counts its taps. */
  tapped(pkg: string, target: UiNode): void {
    const ui = this.state(pkg);
    if (target.resourceId.endsWith(':id/input')) ui.focused = true;
    else if (target.resourceId.endsWith(':id/button')) {
      const count = Number(/^Tapped (\d+) times?$/.exec(ui.status)?.[1] ?? 0) + 1;
      ui.status = `Tapped ${count} time${count === 1 ? '' : 's'}`;
    }
  }
}
