import { API_TOKEN_PATTERN, hashToken } from '../../src/auth/api-tokens';
import { authenticateGateway, InvalidGatewayNameError, registerGateway } from '../../src/gateways/gateway-tokens';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.drop());

describe('gateway tokens', () => {
  it('are stored as SHA-256 only, and registering again rotates them without a new record', async () => {
    const first = await registerGateway(t.db, 'rack-1');
    expect(first).toMatch(API_TOKEN_PATTERN);
    const row = await t.db.selectFrom('gateways').selectAll().where('name', '=', 'rack-1').executeTakeFirstOrThrow();
    expect(row.token_sha256).toEqual(hashToken(first));
    expect(JSON.stringify(row)).not.toContain(first);
    expect(await authenticateGateway(t.db, 'rack-1', first)).toMatchObject({ id: row.id });

    const second = await registerGateway(t.db, 'rack-1');
    expect(await authenticateGateway(t.db, 'rack-1', first)).toBeUndefined();
    expect(await authenticateGateway(t.db, 'rack-1', second)).toMatchObject({ id: row.id });
    expect(await t.db.selectFrom('gateways').select('id').execute()).toHaveLength(1);
  });

  it('fails wrong tokens, other gateways and bad names', async () => {
    const token = await registerGateway(t.db, 'rack-2');
    expect(await authenticateGateway(t.db, 'rack-3', token)).toBeUndefined();
    expect(await authenticateGateway(t.db, 'rack-2', token.toUpperCase())).toBeUndefined();
    expect(await authenticateGateway(t.db, 'rack 2', token)).toBeUndefined();
    await expect(registerGateway(t.db, '')).rejects.toBeInstanceOf(InvalidGatewayNameError);
    await expect(registerGateway(t.db, 'has space')).rejects.toBeInstanceOf(InvalidGatewayNameError);
  });
});
