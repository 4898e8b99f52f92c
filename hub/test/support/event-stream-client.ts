/**
 * A client of GET /apiv1/Events for tests. `opened` resolves when the stream's first frame (`retry:`) has arrived:
 * the hub writes it after subscribing, so a change committed after that is one the stream must show. A test that
 * makes its change before then races the stream's opening (under load the request can take seconds to land).
 */
export interface StreamEvent { id: string; type: string; data: { id: string; object: any } }

export interface EventStreamClient {
  status: number;
  events: StreamEvent[];
  /** Resolves with the events so far once `until` holds; rejects after `timeoutMs`. */
  waitFor(until: (events: StreamEvent[]) => boolean, timeoutMs: number): Promise<StreamEvent[]>;
  close(): void;
}

/** Opens the stream and resolves once it is open (its first frame read), or with the refusal's status. */
export async function openEventStream(url: string, headers: Record<string, string>): Promise<EventStreamClient> {
  const controller = new AbortController();
  const res = await fetch(`${url}/apiv1/Events`, { headers, signal: controller.signal });
  const events: StreamEvent[] = [];
  const watchers = new Set<() => void>();
  const client: EventStreamClient = {
    status: res.status,
    events,
    waitFor: (until, timeoutMs) => new Promise((resolve, reject) => {
      const check = () => {
        if (!until(events)) return false;
        watchers.delete(check);
        clearTimeout(timer);
        resolve(events);
        return true;
      };
      const timer = setTimeout(() => {
        watchers.delete(check);
        reject(new Error(`no such event within ${timeoutMs} ms; events seen: ${JSON.stringify(events)}`));
      }, timeoutMs);
      if (!check()) watchers.add(check);
    }),
    close: () => controller.abort(),
  };
  if (res.status !== 200 || !res.body) {
    await res.body?.cancel();
    return client;
  }
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const readFrames = (text: string) => {
    buffer += text;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const fields = Object.fromEntries(block.split('\n').filter((l) => !l.startsWith(':') && l.includes(': '))
        .map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]));
      if (fields.event) events.push({ id: fields.id, type: fields.event, data: JSON.parse(fields.data) });
    }
    for (const check of [...watchers]) check();
  };
  // The opening frame.
  while (!buffer.includes('\n\n')) {
    const { value, done } = await reader.read();
    if (done) return client;
    buffer += decoder.decode(value, { stream: true });
  }
  readFrames('');
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        readFrames(decoder.decode(value, { stream: true }));
      }
    } catch {
      // aborted by close()
    }
  })();
  return client;
}

/** Reads a stream until `until` holds or `timeoutMs` passes; returns the events seen. */
export async function readEvents(
  url: string, headers: Record<string, string>, until: (events: StreamEvent[]) => boolean, timeoutMs = 5000,
): Promise<{ status: number; events: StreamEvent[] }> {
  const stream = await openEventStream(url, headers);
  try {
    if (stream.status === 200) await stream.waitFor(until, timeoutMs).catch(() => undefined);
  } finally {
    stream.close();
  }
  return { status: stream.status, events: stream.events };
}
