import { addressKey, LoginThrottle } from '../../src/auth/login-throttle';

describe('login throttle', () => {
  it('keys IPv4 (also IPv4-mapped) by address and IPv6 by /64', () => {
    expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('2001:db8:0:1::5')).toBe('2001:db8:0:1::/64');
    expect(addressKey('2001:0db8:0000:0001:ffff:0:0:9')).toBe('2001:db8:0:1::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
  });

  it('stays bounded while an attacker sprays addresses and logins', () => {
    const maxEntries = 1_000;
    const throttle = new LoginThrottle({ maxEntries });
    for (let i = 0; i < 100_000; i++) {
      const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
      const attempt = throttle.begin(address, `spray${i}@example.com`);
      if (i % 10 === 0) attempt.succeeded();
    }
    expect(throttle.size).toBeLessThanOrEqual(4 * maxEntries);
  });

  it('holds concurrent attempts to the budget: each reserves a failure before its credentials are checked', () => {
    const throttle = new LoginThrottle();
    const inFlight = Array.from({ length: 16 }, () => throttle.begin('192.0.2.9', 'c@example.com'));
    expect(inFlight.filter((attempt) => attempt.waitMs === 0)).toHaveLength(10);
    // A success gives its reservation back.
    inFlight[0].succeeded();
    expect(throttle.begin('192.0.2.10', 'c@example.com').waitMs).toBe(0);
  });

  it('refills a budget with time, and trust expires', () => {
    let now = 0;
    const throttle = new LoginThrottle({ now: () => now });
    for (let i = 0; i < 10; i++) expect(throttle.begin('192.0.2.1', 'a@example.com').waitMs).toBe(0);
    expect(throttle.begin('192.0.2.1', 'b@example.com').waitMs).toBe(6_000);
    now += 60_000;
    throttle.begin('192.0.2.1', 'a@example.com').succeeded();
    now += 8 * 24 * 3600_000;
    for (let i = 0; i < 10; i++) throttle.begin('198.51.100.1', 'a@example.com');
    expect(throttle.begin('192.0.2.1', 'a@example.com').waitMs).toBeGreaterThan(0); // trust expired: the login's budget applies
  });
});
