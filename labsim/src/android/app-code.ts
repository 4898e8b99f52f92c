/**
 * What some installed apps do when the system starts them, for apps whose behaviour a client depends on: an
 * activity that starts a service, broadcast receivers that answer. Plus the running services of app processes
 * (`dumpsys activity services`), which end with their process.
 */
import { shortComponent } from './packages';

export interface AppContext {
  /** Starts one of the app's services in the foreground (startForegroundService + startForeground). */
  startForegroundService(cls: string): void;
}

export interface AppProgram {
  /** One of the app's activities was started; 'finished' when it finishes at once (nothing of it stays in front). */
  activityStarted?(cls: string, app: AppContext): 'finished' | void;
  /** A broadcast for the app: the result its receiver sets, or undefined when none of its receivers takes it. */
  broadcast?(action: string): { code: number; data?: string } | undefined;
}

interface ServiceRecord {
  pkg: string;
  cls: string;
  foreground: boolean;
  startedMs: number;
  hash: string;
}

export class RunningServices {
  private readonly records: ServiceRecord[] = [];

  start(pkg: string, cls: string, foreground: boolean): void {
    if (this.records.some((r) => r.pkg === pkg && r.cls === cls)) return;
    const hash = (Math.floor(Math.random() * 0xfffffff) + 0x1000000).toString(16);
    this.records.push({ pkg, cls, foreground, startedMs: Date.now(), hash });
  }

  /** The package's process died: its services are gone. */
  stopAll(pkg: string): void {
    for (let i = this.records.length - 1; i >= 0; i--) if (this.records[i].pkg === pkg) this.records.splice(i, 1);
  }

  /** `dumpsys activity services [pkg | pkg/cls]`, with ActiveServices' record lines. */
  dumpsys(filter: string | undefined, process: (pkg: string) => { pid: number; user: string } | undefined): string {
    const matches = (r: ServiceRecord) => !filter || r.pkg === filter || shortComponent(r.pkg, r.cls) === filter || `${r.pkg}/${r.cls}` === filter;
    const shown = this.records.filter(matches);
    const head = 'ACTIVITY MANAGER SERVICES (dumpsys activity services)\n';
    if (!shown.length) return `${head}  (nothing)\n`;
    const ago = (ms: number) => `-${Math.max(0, Math.round((Date.now() - ms) / 1000))}s0ms`;
    return head + '  User 0 active services:\n' + shown.map((r) => {
      const name = shortComponent(r.pkg, r.cls);
      const proc = process(r.pkg);
      return [
        `  * ServiceRecord{${r.hash} u0 ${name}}`,
        `    intent={cmp=${name}}`,
        `    packageName=${r.pkg}`,
        `    processName=${r.pkg}`,
        `    app=ProcessRecord{${r.hash.slice(0, 7)} ${proc?.pid ?? 0}:${r.pkg}/${proc?.user ?? 'u0a0'}}`,
        `    isForeground=${r.foreground} foregroundId=${r.foreground ? 1 : 0} foregroundNoti=${r.foreground ? `Notification(channel=${r.pkg} shortcut=null contentView=null vibrate=null sound=null defaults=0x0 flags=0x62 color=0x00000000 vis=PRIVATE)` : 'null'}`,
        `    createTime=${ago(r.startedMs)} startingBgTimeout=--`,
        `    lastActivity=${ago(r.startedMs)} restartTime=${ago(r.startedMs)} createdFromFg=true`,
        '    startRequested=true delayedStop=false stopIfKilled=false callStart=true lastStartId=1',
        '',
      ].join('\n');
    }).join('\n');
  }
}

/**
 * io.appium.settings: its Settings activity starts ForegroundService and finishes; its receivers (actions named
 * `io.appium.settings.*`) set RESULT_OK.
 */
export const APPIUM_SETTINGS: AppProgram = {
  activityStarted(cls, app) {
    if (cls !== 'io.appium.settings.Settings') return undefined;
    app.startForegroundService('io.appium.settings.ForegroundService');
    return 'finished';
  },
  broadcast(action) {
    if (!action.startsWith('io.appium.settings.')) return undefined;
    if (action === 'io.appium.settings.clipboard.get') return { code: -1, data: '' };
    return { code: -1 };
  },
};
