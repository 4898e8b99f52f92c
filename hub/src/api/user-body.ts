/**
 * Reading the JSON body of `POST /User?update` and `?add` (spec 2.4 "update" properties; `UserName` and `Email`
 * alike, wire rule 31 of docs/wire-rules.md) into a checked change set. Everything is validated here, before anything
 * is written: one bad key or value fails the whole request.
 */
import { ApiFailure, type UserProperty } from '@devicelab/shared';
import type { ChangeRequest } from '../domain/deferred-input';
import { readableName } from '../domain/name-rules';
import {
  BUILT_IN_ADMIN_LOGIN, INVALID_USERNAME, NAME_FIELDS, PROFILE_FIELDS, type NameField, type UserChange,
} from '../domain/users';
import type { BodyReader, JsonBody } from '../http/json-body';
import { echo } from '../http/echo';

/** The longest e-mail address (RFC 5321); also keeps the unique login index within PostgreSQL's entry size. */
const MAX_LOGIN_LENGTH = 254;
const LOGIN_TOO_LONG = `UserName must not be longer than ${MAX_LOGIN_LENGTH} characters.`;

const EMAIL = /^[^@\s]+@[^@\s.]+(\.[^@\s.]+)*$/;
const isEmail = (text: string): boolean => EMAIL.test(text);

const NAME_KEYS = new Map(Object.keys(NAME_FIELDS).map((f) => [f.toLowerCase(), f as NameField]));
const PROFILE_KEYS = new Map(PROFILE_FIELDS.map((f) => [f.toLowerCase(), f]));
const OTHER_KEYS = ['username', 'email', 'password', 'isactive', 'roles', 'properties'];

const UPDATABLE_USER_PROPERTIES = [
  'UserName (or Email)', 'Password', 'IsActive', 'FirstName', 'MiddleName', 'LastName',
  ...PROFILE_FIELDS.map((f) => f[0].toUpperCase() + f.slice(1)), 'roles', 'properties',
];
const notUpdatable = (key: string): string =>
  `Property '${echo(key)}' cannot be updated. Updatable properties: ${UPDATABLE_USER_PROPERTIES.join(', ')}.`;

/** Body keys (lower case) -> the change they make; `properties()` tells the domain which, before any value is read. */
const CHANGED_BY_KEY = new Map<string, keyof UserChange>([
  ...[...NAME_KEYS.keys()].map((k) => [k, 'names'] as const), ...[...PROFILE_KEYS.keys()].map((k) => [k, 'profile'] as const),
  ['username', 'login'], ['email', 'login'], ['password', 'password'], ['isactive', 'isActive'], ['roles', 'roles'],
  ['properties', 'properties'],
]);

/** The body, read when the domain first asks (after the entitlement checks). */
export function userChangeRequest(readBody: BodyReader): ChangeRequest<UserChange> {
  let body: JsonBody | undefined;
  const parsed = () => (body ??= readBody());
  return {
    properties: () => [...new Set(parsed().keys().flatMap((key) => CHANGED_BY_KEY.get(key) ?? []))],
    read: () => readUserChange(parsed()),
  };
}

function readUserChange(body: JsonBody): UserChange {
  const unknown = body.keys().filter((k) => !NAME_KEYS.has(k) && !PROFILE_KEYS.has(k) && !OTHER_KEYS.includes(k));
  if (unknown.length > 0) throw new ApiFailure(notUpdatable(unknown[0]));

  const change: UserChange = { names: {}, profile: {} };
  const login = readLogin(body);
  if (login !== undefined) change.login = login;

  const password = body.string('password');
  if (password !== undefined) {
    if (password === null || password === '') throw new ApiFailure('Password must not be empty.');
    change.password = password;
  }
  const isActive = body.bool('isActive');
  if (isActive !== undefined) change.isActive = isActive;

  for (const [key, field] of NAME_KEYS) {
    if (!body.has(key)) continue;
    const name = emptyToNull(body.string(key));
    change.names[field] = name === null ? null : readableName(name, field);
  }
  for (const [key, field] of PROFILE_KEYS) {
    if (body.has(key)) change.profile[field] = emptyToNull(body.string(key));
  }
  if (body.has('roles')) change.roles = readRoles(body);
  if (body.has('properties')) change.properties = readProperties(body.raw('properties'));
  return change;
}

/** `UserName` (update, filters) or `Email` (add): both accepted everywhere; if both are sent they must agree. */
function readLogin(body: JsonBody): string | undefined {
  const userName = body.string('userName');
  const email = body.string('email');
  if (userName === undefined && email === undefined) return undefined;
  if (userName != null && email != null && userName.trim() !== email.trim()) {
    throw new ApiFailure('UserName and Email differ: send one of them.');
  }
  const login = readableName((userName ?? email ?? '').trim(), 'UserName');
  if (login.length > MAX_LOGIN_LENGTH) throw new ApiFailure(LOGIN_TOO_LONG);
  if (login.toLowerCase() !== BUILT_IN_ADMIN_LOGIN && !isEmail(login)) throw new ApiFailure(INVALID_USERNAME);
  return login;
}

function readRoles(body: JsonBody): string[] {
  const raw = body.raw('roles');
  if (raw === null) return [];
  if (Array.isArray(raw) && raw.some((r) => typeof r !== 'string')) {
    throw new ApiFailure('roles must be a list of role names.');
  }
  const roles = (body.stringArray('roles') ?? []).map((r) => r.trim().normalize('NFC')); // as role names are stored
  if (roles.some((r) => r === '')) throw new ApiFailure('roles must not contain an empty name.');
  return roles;
}

/** `[{"name":..,"value":..}]`, or an object `{"name":"value"}` for convenience; null clears. */
function readProperties(raw: unknown): UserProperty[] {
  if (raw === null) return [];
  let pairs: [unknown, unknown][];
  if (Array.isArray(raw)) {
    pairs = raw.map((item) => {
      if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new ApiFailure(BAD_PROPERTIES);
      const entries = new Map(Object.entries(item as Record<string, unknown>).map(([k, v]) => [k.toLowerCase(), v]));
      return [entries.get('name'), entries.get('value')];
    });
  } else if (typeof raw === 'object') {
    pairs = Object.entries(raw as Record<string, unknown>);
  } else {
    throw new ApiFailure(BAD_PROPERTIES);
  }
  const seen = new Set<string>();
  return pairs.map(([name, value]) => {
    if (typeof name !== 'string' || name.trim() === '') throw new ApiFailure(BAD_PROPERTIES);
    if (value !== null && value !== undefined && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new ApiFailure(BAD_PROPERTIES);
    }
    if (seen.has(name)) throw new ApiFailure(`Property '${echo(name)}' is given more than once.`);
    seen.add(name);
    return { name, value: value === null || value === undefined ? '' : String(value) };
  });
}

const BAD_PROPERTIES = 'properties must be a list of {"name":"...","value":"..."} objects.';

function emptyToNull(value: string | null | undefined): string | null {
  return value === undefined || value === null || value === '' ? null : value;
}
