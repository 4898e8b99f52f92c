/**
 * The User resource (spec 2.3, 2.4, 4.4): its wire model, the filters of `GET /User` and the User list rule.
 * Names and the login are columns; the other profile fields live in `users.profile` (jsonb) under their
 * camelCase wire names; properties in `user_properties`.
 */
import { sql } from 'kysely';
import { formatWireDate, type User, type UserProperty } from '@devicelab/shared';
import type { AuthenticatedUser } from '../auth/authenticated-user';
import { hasEntitlement } from '../auth/entitlements';
import type { Db, Tx } from '../store/database';
import type { UserRow } from '../store/schema';

/** Name fields: wire name -> column. */
export const NAME_FIELDS = { firstName: 'first_name', middleName: 'middle_name', lastName: 'last_name' } as const;
export type NameField = keyof typeof NAME_FIELDS;

/** Profile fields kept in `users.profile`, in the order of the wire model. */
export const PROFILE_FIELDS = [
  'notes', 'organization', 'title', 'location', 'address1', 'address2', 'city', 'region', 'postalCode', 'country',
  'homePhone', 'mobilePhone', 'officePhone', 'faxPhone',
] as const;
type ProfileField = (typeof PROFILE_FIELDS)[number];

export const userNotFound = (id: string): string => `User '${id}' not found.`;
/** Exact vendor text (wire rule 29, docs/wire-rules.md; real newline). */
export const INVALID_USERNAME = 'Invalid username, an email is expected.\nParameter name: UserName';
export const BUILT_IN_ADMIN_LOGIN = 'admin';

/** A checked change of a user (`POST /User?update`, `?add`); absent fields stay as they are. */
export interface UserChange {
  /** New login as given (case preserved); `admin` only passes here to be checked against the row. */
  login?: string;
  password?: string;
  isActive?: boolean;
  /** null clears the field. */
  names: Partial<Record<NameField, string | null>>;
  profile: Partial<Record<ProfileField, string | null>>;
  /** Role names as given; replaces the user's roles. */
  roles?: string[];
  /** Replaces the user's properties. */
  properties?: UserProperty[];
}

/** Filters of spec 2.4; text filters match whole values, ignoring letter case. */
export interface UserFilters {
  id?: string;
  /** The login (wire `email`). */
  userName?: string;
  isActive?: boolean;
  names?: Partial<Record<NameField, string>>;
  profile?: Partial<Record<ProfileField, string>>;
}

/**
 * GET /User. Without UserList only the caller is considered; the filters still apply (wire rule 20,
 * docs/wire-rules.md).
 */
export async function listUsers(db: Db, caller: AuthenticatedUser, filters: UserFilters = {}): Promise<User[]> {
  let q = db.selectFrom('users').selectAll();
  if (!hasEntitlement(caller, 'UserList')) q = q.where('id', '=', caller.id);
  if (filters.id !== undefined) q = q.where('id', '=', filters.id);
  if (filters.userName !== undefined) q = q.where(sql<boolean>`lower(login) = lower(${filters.userName})`);
  if (filters.isActive !== undefined) q = q.where('is_active', '=', filters.isActive);
  for (const [field, value] of Object.entries(filters.names ?? {})) {
    const column = NAME_FIELDS[field as NameField];
    q = q.where((eb) => eb(eb.fn('lower', [column]), '=', value.toLowerCase()));
  }
  for (const [field, value] of Object.entries(filters.profile ?? {})) {
    // The key is one of PROFILE_FIELDS and travels as a bound parameter like the value.
    q = q.where(sql<boolean>`lower(profile ->> ${field}) = lower(${value})`);
  }
  const rows = await q.orderBy(sql`lower(login)`).orderBy('id').execute();
  return toUserModels(db, rows);
}

/** The wire models of some user rows, with their role names and properties. */
async function toUserModels(db: Db | Tx, rows: UserRow[]): Promise<User[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const roles = await db.selectFrom('user_roles').innerJoin('roles', 'roles.id', 'user_roles.role_id')
    .select(['user_roles.user_id', 'roles.name']).where('user_roles.user_id', 'in', ids).orderBy('roles.name').execute();
  const properties = await db.selectFrom('user_properties').select(['user_id', 'name', 'value'])
    .where('user_id', 'in', ids).orderBy('position').execute();
  return rows.map((row) => toUserModel(
    row,
    roles.filter((r) => r.user_id === row.id).map((r) => r.name),
    properties.filter((p) => p.user_id === row.id).map((p) => ({ name: p.name, value: p.value })),
  ));
}

function toUserModel(row: UserRow, roles: string[], properties: UserProperty[]): User {
  const profile = row.profile ?? {};
  const model = {
    id: row.id,
    email: row.login,
    isActive: row.is_active,
    firstName: row.first_name ?? undefined,
    middleName: row.middle_name ?? undefined,
    lastName: row.last_name ?? undefined,
  } as User;
  const fields = model as unknown as Record<string, unknown>;
  for (const field of PROFILE_FIELDS) {
    const value = profile[field];
    if (typeof value === 'string' && value !== '') fields[field] = value;
  }
  model.createdDate = formatWireDate(row.created_at);
  if (row.last_login_at) model.lastLoginDate = formatWireDate(new Date(row.last_login_at));
  model.roles = roles;
  model.properties = properties;
  return model;
}
