/** The user behind this CLI's credentials. */
import type { ApiClient } from './api-client';
import { CliError, EXIT } from './errors';
import type { User } from './models';

/** Who this login is on the hub (GET /User answers only yourself without User list). */
export async function currentUser(api: ApiClient): Promise<User> {
  const [me] = await api.get<User[]>('/User', { params: { userName: api.credentials.user } });
  if (!me) throw new CliError(`The hub does not list the login '${api.credentials.user}'. Check DEVICELAB_USER or run \`devicelab login\`.`, EXIT.notAuthorised);
  return me;
}
