/** Which hub replica a gateway dials next and when (hub-rotation.ts); the backoff's jitter pinned to its maximum. */
import { HubRotation, OWNER_BUSY_RETRY_MS, parseHubAddresses } from '../../src/link/hub-rotation';

const backoff = { initialMs: 200, maxMs: 1600 };
const rotation = (addresses: string[]) => new HubRotation(addresses, backoff, OWNER_BUSY_RETRY_MS, () => 1);

describe('hub rotation', () => {
  it('after a lost session dials the next replica at once, then round-robins with backoff between rounds', () => {
    const hubs = rotation(['a:1', 'b:1', 'c:1']);
    hubs.connected();
    expect(hubs.current).toBe('a:1');
    const attempts: [number, string][] = [];
    attempts.push([hubs.next('lost'), hubs.current]);
    for (let i = 0; i < 6; i++) attempts.push([hubs.next('failed'), hubs.current]);
    expect(attempts).toEqual([
      [0, 'b:1'], [0, 'c:1'], [200, 'a:1'], // a round: b and c at once; a again only after a backoff
      [0, 'b:1'], [0, 'c:1'], [400, 'a:1'], // the backoff grows per round
      [0, 'b:1'],
    ]);
  });

  it('a verified session starts a fresh round and resets the backoff', () => {
    const hubs = rotation(['a:1', 'b:1']);
    expect([hubs.next('failed'), hubs.next('failed'), hubs.next('failed'), hubs.next('failed')]).toEqual([0, 200, 0, 400]);
    hubs.connected();
    expect([hubs.next('lost'), hubs.next('failed')]).toEqual([0, 200]);
  });

  it('a round with a replica saying another still owns the link waits only briefly, without growing the backoff', () => {
    const hubs = rotation(['a:1', 'b:1']);
    hubs.next('failed');
    hubs.next('failed'); // 200
    expect([hubs.next('ownerBusy'), hubs.next('failed')]).toEqual([0, OWNER_BUSY_RETRY_MS]);
    expect([hubs.next('failed'), hubs.next('failed')]).toEqual([0, 400]);
  });

  it('with one hub behaves as a plain reconnect with backoff', () => {
    const hubs = rotation(['a:1']);
    hubs.connected();
    expect([hubs.next('lost'), hubs.next('failed'), hubs.next('ownerBusy'), hubs.next('failed')])
      .toEqual([200, 400, OWNER_BUSY_RETRY_MS, 800]);
    expect(hubs.current).toBe('a:1');
  });

  it('rounds refused for an owned link one after another wait longer each time, up to the backoff maximum', () => {
    const hubs = rotation(['a:1']);
    const delays = Array.from({ length: 5 }, () => hubs.next('ownerBusy'));
    expect(delays).toEqual([OWNER_BUSY_RETRY_MS, 2 * OWNER_BUSY_RETRY_MS, 4 * OWNER_BUSY_RETRY_MS, 1600, 1600]);
    expect([hubs.next('failed'), hubs.next('ownerBusy')]).toEqual([200, OWNER_BUSY_RETRY_MS]);
    hubs.next('ownerBusy');
    hubs.connected();
    expect(hubs.next('ownerBusy')).toBe(OWNER_BUSY_RETRY_MS);
  });

  it('reads a DEVICELAB_HUB list', () => {
    expect(parseHubAddresses('a:7443')).toEqual(['a:7443']);
    expect(parseHubAddresses(' a:7443 , b:7443,,a:7443')).toEqual(['a:7443', 'b:7443']);
    expect(parseHubAddresses(' , ')).toEqual([]);
    expect(() => new HubRotation([])).toThrow(/at least one hub address/);
  });
});
