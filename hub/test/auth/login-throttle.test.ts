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
      throttle.waitMs(address, `spray${i}@example.com`);
      throttle.recordFailure(address, `spray${i}@example.com`);
      if (i % 10 === 0) throttle.recordSuccess(address, `spray${i}@example.com`);
    }
    expect(throttle.size).toBeLessThanOrEqual(4 * maxEntries);
  });

  it('refills a budget with time, and trust expires', () => {
    let now = 0;
    const throttle = new LoginThrottle({ now: () => now });
    for (let i = 0; i < 10; i++) throttle.recordFailure('192.0.2.1', 'a@example.com');
    expect(throttle.waitMs('192.0.2.1', 'b@example.com')).toBe(6_000);
    now += 60_000;
    expect(throttle.waitMs('192.0.2.1', 'a@example.com')).toBe(0);
    throttle.recordSuccess('192.0.2.1', 'a@example.com');
    now += 8 * 24 * 3600_000;
    for (let i = 0; i < 10; i++) throttle.recordFailure('198.51.100.1', 'a@example.com');
    expect(throttle.waitMs('192.0.2.1', 'a@example.com')).toBeGreaterThan(0); // trust expired: the login's budget applies
  });
});
