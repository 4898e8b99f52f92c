import { hubConfigFromEnv } from '../../src/config';

describe('DEVICELAB_TRUST_PROXY', () => {
  it('trusts no proxy by default, named proxies or a hop count when set', () => {
    expect(hubConfigFromEnv({}).trustProxy).toBeUndefined();
    expect(hubConfigFromEnv({ DEVICELAB_TRUST_PROXY: 'loopback, 10.0.0.0/8,2001:db8::1' }).trustProxy)
      .toEqual(['loopback', '10.0.0.0/8', '2001:db8::1']);
    expect(hubConfigFromEnv({ DEVICELAB_TRUST_PROXY: '2' }).trustProxy).toBe(2);
  });

  it('refuses to trust every sender, and what is not an address', () => {
    for (const value of ['true', '*', '10.0.0.0/33', 'proxy.example', '10.0.0.1/8/1']) {
      expect(() => hubConfigFromEnv({ DEVICELAB_TRUST_PROXY: value })).toThrow(/DEVICELAB_TRUST_PROXY/);
    }
  });
});
