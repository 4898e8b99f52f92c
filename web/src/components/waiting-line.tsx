/** The lab's waiting line for devices (GET /Device/WaitingLine), for those who may take devices back; refreshed every 5 s. */
import { useEffect, useState } from 'preact/hooks';
import { getJson } from '../api/client';

interface Waiter { place: number; userName: string; filter: string; purpose: string; leaseName?: string; since: string; replicaId: string }

export function WaitingLine() {
  const [line, setLine] = useState<Waiter[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let stopped = false;
    const load = () => getJson<{ data?: Waiter[] }>('/Device/WaitingLine')
      .then((body) => { if (!stopped) { setLine(body.data ?? []); setError(undefined); } })
      .catch((err: Error) => { if (!stopped) setError(err.message); });
    void load();
    const timer = setInterval(load, 5_000);
    return () => { stopped = true; clearInterval(timer); };
  }, []);
  return (
    <section class="card" data-testid="waiting-line">
      <h2>Waiting line</h2>
      {error && <p class="error" role="alert">{error}</p>}
      {line && line.length === 0 && <p class="muted">Nobody is waiting for a device.</p>}
      {line && line.length > 0 && (
        <table>
          <thead><tr><th>#</th><th>Who</th><th>Waits for</th><th>For</th><th>Since</th></tr></thead>
          <tbody>
            {line.map((w) => (
              <tr key={`${w.place}-${w.since}`}>
                <td>{w.place}</td><td>{w.userName}{w.leaseName ? ` (${w.leaseName})` : ''}</td><td>{w.filter || 'any device'}</td>
                <td>{w.purpose}</td><td>{new Date(w.since).toLocaleTimeString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
