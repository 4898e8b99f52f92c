import { useState } from 'preact/hooks';
import type { SessionUser } from '../api/types';
import { signIn } from '../session';

export function SignIn({ onSignedIn }: { onSignedIn: (user: SessionUser) => void }) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    setError('');
    try {
      onSignedIn(await signIn(String(form.get('login') ?? ''), String(form.get('token') ?? '')));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="center">
      <form class="signin card" onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">DeviceLab</h1>
        <label>Login<input name="login" autoComplete="username" required autoFocus /></label>
        <label>API token<input name="token" type="password" autoComplete="current-password" required /></label>
        {error && <p class="error" role="alert">{error}</p>}
        <button type="submit" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
        <p class="hint">Your login and API token, as printed by <code>npm run demo</code> or given by your lab admin.</p>
      </form>
    </main>
  );
}
