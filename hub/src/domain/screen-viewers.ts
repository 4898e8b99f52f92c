/**
 * The live screen viewers this hub replica relays, by device: who watches (the retainer's page lists them), and a
 * way to end them (a revoked share ends its viewers at once). A device's viewers all land on the replica that
 * holds its gateway's link (the others forward their WebSockets there), so the owner's list is the whole list.
 */

export interface ScreenViewerInfo {
  login: string;
  displayName: string;
  remoteAddress: string;
  viewOnly: boolean;
  /** The share the viewer came through, if any. */
  shareId?: string;
  since: Date;
}

interface Entry {
  info: ScreenViewerInfo;
  end(reason: string): void;
}

export class ScreenViewers {
  private readonly byDevice = new Map<string, Set<Entry>>();

  /** Registers a viewer of the device (Guid); returns its removal. */
  add(deviceId: string, info: ScreenViewerInfo, end: (reason: string) => void): () => void {
    const entry: Entry = { info, end };
    const set = this.byDevice.get(deviceId) ?? new Set<Entry>();
    set.add(entry);
    this.byDevice.set(deviceId, set);
    return () => {
      set.delete(entry);
      if (set.size === 0 && this.byDevice.get(deviceId) === set) this.byDevice.delete(deviceId);
    };
  }

  of(deviceId: string): ScreenViewerInfo[] {
    return [...this.byDevice.get(deviceId) ?? []].map((entry) => entry.info);
  }

  count(): number {
    let n = 0;
    for (const set of this.byDevice.values()) n += set.size;
    return n;
  }

  /** Ends the device's viewers that came through `shareId`. */
  endShare(deviceId: string, shareId: string): void {
    for (const entry of [...this.byDevice.get(deviceId) ?? []]) {
      if (entry.info.shareId === shareId) entry.end('The share was revoked.');
    }
  }
}
