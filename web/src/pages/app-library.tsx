/** The app library: drag-and-drop upload with a progress bar, the list with icons, warnings, enable/edit/delete. */
import { useEffect, useState } from 'preact/hooks';
import { awaitJob, call, getJson, query, uploadWithProgress } from '../api/client';
import type { Application, SessionUser } from '../api/types';
import { may } from '../session';

type UploadState = { name: string; fraction: number; phase: 'uploading' | 'inspecting' | 'done' | 'failed'; message?: string };

/** Bytes as "812 KiB", "23.4 MiB". */
function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** The hub's warnings from the upload, and what the profile's dates say now; an expiry the hub named is not repeated. */
function warnings(app: Application): string[] {
  const list = [...(app.applicationErrors ?? [])];
  const expiryNamed = list.some((w) => /provisioning profile expired/i.test(w));
  if (app.provisionExpirationDate && Date.parse(app.provisionExpirationDate) < Date.now()) {
    if (!expiryNamed) list.push('Provisioning profile expired');
  }
  else if (app.provisionExpirationDate && Date.parse(app.provisionExpirationDate) < Date.now() + 14 * 86_400_000) list.push('Provisioning profile expires soon');
  if (app.operatingSystem === 'iOS' && !app.provisionsAllDevices && app.provisionExpirationDate) list.push('Runs only on the devices in its profile');
  return list;
}

export function AppLibrary({ user }: { user: SessionUser }) {
  const [apps, setApps] = useState<Application[]>([]);
  const [uploads, setUploads] = useState<UploadState[]>([]);
  const [dragging, setDragging] = useState(false);
  const [error, setError] = useState('');
  const load = () => getJson<Application[]>('/Application').then(setApps, (err: Error) => setError(err.message));
  useEffect(() => { void load(); }, []);

  const upload = async (file: File) => {
    const update = (patch: Partial<UploadState>) => setUploads((list) => list.map((u) => (u.name === file.name ? { ...u, ...patch } : u)));
    setUploads((list) => [...list.filter((u) => u.name !== file.name), { name: file.name, fraction: 0, phase: 'uploading' }]);
    try {
      const jobId = await uploadWithProgress(file, (fraction) => update({ fraction }));
      update({ fraction: 1, phase: 'inspecting' });
      const outcome = await awaitJob<{ isSuccess?: boolean; errorMessage?: string }>(jobId);
      if (outcome && outcome.isSuccess === false) throw new Error(outcome.errorMessage);
      update({ phase: 'done' });
      void load();
    } catch (err) {
      update({ phase: 'failed', message: (err as Error).message });
    }
  };
  const files = (list: FileList | null | undefined) => { for (const f of Array.from(list ?? [])) void upload(f); };
  const update = (app: Application, changes: { displayName?: string; enabled?: boolean; notes?: string }) =>
    call('POST', `/Application${query({ verb: 'update', id: app.id })}`, undefined, changes);
  const change = async (app: Application, work: () => Promise<unknown>) => {
    setError('');
    try { await work(); await load(); } catch (err) { setError(`${app.displayName}: ${(err as Error).message}`); }
  };

  return (
    <main class="page">
      <h1>App library</h1>
      {may(user, 'ApplicationUpload') && (
        <label class={`dropzone ${dragging ? 'over' : ''}`}
          onDragOver={(e) => { e.preventDefault(); setDragging(true); }}
          onDragLeave={() => setDragging(false)}
          onDrop={(e) => { e.preventDefault(); setDragging(false); files(e.dataTransfer?.files); }}>
          <span>Drop an .apk or .ipa here, or choose a file</span>
          <input type="file" name="package" accept=".apk,.ipa,.zip" multiple onChange={(e) => files((e.target as HTMLInputElement).files)} />
        </label>
      )}
      {uploads.map((u) => (
        <div class="progress upload" key={u.name} role="status" data-phase={u.phase}>
          <span>{u.name}: {u.phase === 'uploading' ? `${Math.round(u.fraction * 100)}%` : u.phase}{u.message ? ` (${u.message})` : ''}</span>
          <progress aria-label={`Upload of ${u.name}`} max={1} value={u.phase === 'inspecting' ? undefined : u.fraction} />
        </div>
      ))}
      {error && <p class="error" role="alert">{error}</p>}
      <div class="table-scroll"><table class="table apps-table">
        <thead><tr><th aria-label="Icon" /><th>App</th><th>Version</th><th>Upload</th><th>Platform</th><th>Warnings</th><th>Enabled</th><th /></tr></thead>
        <tbody>
          {apps.map((app) => (
            <tr key={app.id} data-app-id={app.id}>
              <td>{app.iconBlob ? <img class="icon" alt="" src={app.iconBlob.startsWith('data:') ? app.iconBlob : `data:image/png;base64,${app.iconBlob}`} /> : <span class="icon" />}</td>
              <td><strong>{app.displayName}</strong><br /><small>{app.applicationIdentifier}</small>{app.notes && <><br /><small class="muted">{app.notes}</small></>}</td>
              <td>{app.version ?? '—'} <small data-testid="version-counter">(v{app.versionCounter})</small></td>
              <td data-testid="upload"><span>{new Date(app.createdDate).toLocaleString()}</span><br />
                <small>{app.uploadedByName && <>by {app.uploadedByName} · </>}{formatSize(app.fileByteCount)} · {app.fileName}</small></td>
              <td>{app.operatingSystem}</td>
              <td>{warnings(app).map((w) => <div class="warn" key={w}>{w}</div>)}</td>
              <td data-testid="app-enabled">{app.enabled ? 'yes' : 'no'}</td>
              <td><span class="buttons">
                {may(user, 'ApplicationModify') && <>
                  <button type="button" onClick={() => void change(app, () => update(app, { enabled: !app.enabled }))}>
                    {app.enabled ? 'Disable' : 'Enable'}</button>
                  <button type="button" onClick={() => {
                    const displayName = prompt('Display name', app.displayName);
                    if (displayName === null) return;
                    const notes = prompt('Notes (empty clears them)', app.notes ?? '');
                    if (notes === null) return;
                    void change(app, () => update(app, { displayName, notes }));
                  }}>Edit</button>
                </>}
                {may(user, 'ApplicationDelete') && <button type="button" onClick={() =>
                  confirm(`Delete ${app.displayName} v${app.versionCounter}?`) && change(app, () => call('POST', `/Application${query({ verb: 'delete', id: app.id })}`))}>Delete</button>}
              </span></td>
            </tr>
          ))}
        </tbody>
      </table></div>
    </main>
  );
}
