/**
 * For the retainer: view-only shares of the live screen (a link anyone signed in can open, or a named user), who
 * watches now, and revoking a share (its viewers are cut at once). Read from `/Device/Share` every few seconds.
 */
import { useEffect, useState } from 'preact/hooks';
import { call, getJson, query } from '../api/client';
import { CopyLine } from './copy-line';

interface Share { id: string; userLogin?: string; token?: string; createdAt: string }
interface Viewer { login: string; displayName: string; remoteAddress: string; viewOnly: boolean; shareId?: string; since: string }

export function ScreenShares({ deviceId }: { deviceId: string }) {
  const [shares, setShares] = useState<Share[]>([]);
  const [viewers, setViewers] = useState<Viewer[]>([]);
  const [link, setLink] = useState('');
  const [login, setLogin] = useState('');
  const [error, setError] = useState('');
  const load = () => getJson<{ data: { shares: Share[]; viewers: Viewer[] } }>(`/Device/Share${query({ id: deviceId })}`)
    .then((body) => { setShares(body.data.shares); setViewers(body.data.viewers); }, () => undefined);
  useEffect(() => {
    void load();
    const timer = setInterval(load, 3000);
    return () => clearInterval(timer);
  }, [deviceId]);
  const create = async (user?: string) => {
    setError('');
    try {
      const share = await call<Share>('POST', `/Device/Share${query({ id: deviceId, user })}`);
      if (share?.token) setLink(`${location.origin}/devices/${deviceId}?share=${encodeURIComponent(share.token)}`);
      setLogin('');
      void load();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const revoke = async (shareId: string) => {
    await call('DELETE', `/Device/Share${query({ id: deviceId, shareId })}`).catch((err: Error) => setError(err.message));
    void load();
  };
  return (
    <section class="card" aria-labelledby="share-title">
      <h2 id="share-title">Share view-only</h2>
      <div class="buttons">
        <button type="button" onClick={() => create()}>Share view-only link</button>
      </div>
      {link && <CopyLine text={link} label="view-only link" />}
      <form class="inline" onSubmit={(e) => { e.preventDefault(); if (login) void create(login); }}>
        <label>Share with user<input type="text" value={login} onInput={(e) => setLogin((e.target as HTMLInputElement).value)} placeholder="login" /></label>
        <button type="submit" disabled={!login}>Share</button>
      </form>
      {error && <p class="error" role="alert">{error}</p>}
      <h3>Shares</h3>
      <ul data-testid="screen-shares">
        {shares.length === 0 && <li class="muted">None.</li>}
        {shares.map((s) => <li key={s.id}>{s.userLogin ? `User ${s.userLogin}` : 'Link'} · {new Date(s.createdAt).toLocaleTimeString()}
          {' '}<button type="button" onClick={() => revoke(s.id)}>Revoke</button></li>)}
      </ul>
      <h3>Watching now</h3>
      <ul data-testid="screen-viewers">
        {viewers.length === 0 && <li class="muted">Nobody.</li>}
        {viewers.map((v, i) => <li key={i}>{v.displayName} ({v.login}) from {v.remoteAddress}{v.viewOnly ? ' · view only' : ' · controls'}</li>)}
      </ul>
    </section>
  );
}
