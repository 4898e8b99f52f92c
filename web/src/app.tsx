/** The shell: sign-in gate, navigation, and the page for the current path. */
import { useEffect, useState } from 'preact/hooks';
import { lazy, Suspense } from 'preact/compat';
import { onSignedOut } from './api/client';
import type { SessionUser } from './api/types';
import { live } from './live/store';
import { useLive } from './live/use-live';
import { DeviceGrid } from './pages/device-grid';
import { SignIn } from './pages/sign-in';
import { linkClick, navigate, usePath } from './router';
import { currentUser, may, signOut } from './session';

// Pages past the grid load on first visit: the grid's initial load stays small.
const DevicePage = lazy(() => import('./pages/device-page').then((m) => ({ default: m.DevicePage })));
const AppLibrary = lazy(() => import('./pages/app-library').then((m) => ({ default: m.AppLibrary })));
const CalendarPage = lazy(() => import('./pages/calendar-page').then((m) => ({ default: m.CalendarPage })));
const LabOps = lazy(() => import('./pages/lab-ops').then((m) => ({ default: m.LabOps })));

export function App() {
  const [user, setUser] = useState<SessionUser | null | undefined>(undefined);
  const path = usePath();
  useEffect(() => {
    currentUser().then((u) => setUser(u ?? null), () => setUser(null));
    return onSignedOut(() => {
      live.stop();
      setUser(null);
    });
  }, []);
  useEffect(() => {
    if (user) live.start(may(user, 'SystemViewGateways'));
  }, [user]);

  if (user === undefined) return <main class="center" aria-busy="true">Loading…</main>;
  if (user === null) return <SignIn onSignedIn={setUser} />;

  const doSignOut = async () => {
    await signOut().catch(() => undefined);
    live.stop();
    setUser(null);
    navigate('/');
  };
  const deviceMatch = /^\/devices\/([^/]+)$/.exec(path);
  let page;
  if (deviceMatch) page = <DevicePage id={decodeURIComponent(deviceMatch[1])} user={user} />;
  else if (path === '/apps') page = <AppLibrary user={user} />;
  else if (path === '/calendar') page = <CalendarPage user={user} />;
  else if (path === '/lab') page = <LabOps user={user} />;
  else page = <DeviceGrid user={user} />;

  return (
    <>
      <header class="topbar">
        <a class="brand" href="/" onClick={(e) => linkClick(e, '/')}>DeviceLab</a>
        <nav aria-label="Main">
          <NavLink href="/" path={path} label="Devices" />
          {may(user, 'ApplicationList') && <NavLink href="/apps" path={path} label="Apps" />}
          {may(user, 'DeviceList') && <NavLink href="/calendar" path={path} label="Calendar" />}
          <NavLink href="/lab" path={path} label="Lab" />
        </nav>
        <LiveBadge />
        <span class="who" title={user.roles.join(', ')}>{user.displayName || user.login}</span>
        <button type="button" onClick={doSignOut}>Sign out</button>
      </header>
      <Suspense fallback={<main class="center">Loading…</main>}>{page}</Suspense>
    </>
  );
}

function NavLink({ href, path, label }: { href: string; path: string; label: string }) {
  const current = href === '/' ? path === '/' || path.startsWith('/devices') : path.startsWith(href);
  return <a href={href} aria-current={current ? 'page' : undefined} onClick={(e) => linkClick(e, href)}>{label}</a>;
}

function LiveBadge() {
  const store = useLive();
  return (
    <span class={`live ${store.connected ? 'on' : 'off'}`} role="status" aria-live="polite">
      {store.connected ? 'Live' : 'Reconnecting…'}
    </span>
  );
}
