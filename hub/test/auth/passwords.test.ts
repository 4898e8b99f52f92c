import { hashPassword, verifyPassword } from '../../src/auth/passwords';

describe('password hashes', () => {
  it('are salted scrypt hashes that verify only the right password', async () => {
    const a = await hashPassword('Password');
    const b = await hashPassword('Password');
    expect(a).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(a).not.toBe(b); // per-hash salt
    expect(a).not.toContain('Password');
    expect(await verifyPassword('Password', a)).toBe(true);
    expect(await verifyPassword('Password', b)).toBe(true);
    expect(await verifyPassword('password', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });

  it('treat missing or malformed hashes as no match', async () => {
    expect(await verifyPassword('x', null)).toBe(false);
    expect(await verifyPassword('x', 'plain-text')).toBe(false);
    expect(await verifyPassword('x', 'scrypt$0$8$1$AAAA$AAAA')).toBe(false);
    expect(await verifyPassword('x', 'scrypt$16384$8$1$AAAA$AAAA')).toBe(false);
  });
});
