/** Who is making a request, once Basic auth has accepted their credentials (`req.user` in the HTTP layer). */
import type { Entitlement } from '@devicelab/shared';

export interface AuthenticatedUser {
  id: string;
  login: string;
  /** "First Middle Last" when any name is set, else the login. */
  displayName: string;
  /** Union of the entitlements of all the user's roles. */
  entitlements: ReadonlySet<Entitlement>;
  /** Role names, as stored. */
  roles: string[];
}

export function displayNameOf(row: {
  login: string;
  first_name: string | null;
  middle_name: string | null;
  last_name: string | null;
}): string {
  const name = [row.first_name, row.middle_name, row.last_name].filter((part) => part && part.trim()).join(' ');
  return name || row.login;
}
