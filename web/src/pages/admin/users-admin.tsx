/**
 * Users for admins: add a user, and per user its roles, an API token (shown once), deactivation and adb keys. The
 * page offers only the roles whose entitlements the admin holds; the hub refuses anything beyond the admin's reach
 * and the page shows its words.
 */
import { useEffect, useState } from 'preact/hooks';
import { call, getJson, query } from '../../api/client';
import type { AdbKey, Role, SessionUser, User } from '../../api/types';
import { CopyLine } from '../../components/copy-line';
import { may } from '../../session';
import { RolesAdmin } from './roles-admin';

const fullName = (u: User): string => [u.firstName, u.lastName].filter(Boolean).join(' ');
/** Roles the signed-in admin may hand out: every entitlement they grant is one of the admin's own. */
const assignable = (roles: Role[], me: SessionUser): Role[] => roles.filter((r) => r.entitlements.every((e) => me.entitlements.includes(e)));

export function UsersAdmin({ user }: { user: SessionUser }) {
  const [users, setUsers] = useState<User[]>([]);
  const [roles, setRoles] = useState<Role[]>([]);
  const [selected, setSelected] = useState<string | undefined>();
  const [error, setError] = useState('');
  const load = () => {
    getJson<User[]>('/User').then(setUsers, (err: Error) => setError(err.message));
    getJson<Role[]>('/Role').then(setRoles, () => setRoles([]));
  };
  useEffect(load, []);
  const chosen = users.find((u) => u.id === selected);
  return (
    <section class="card" aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      {error && <p class="error" role="alert">{error}</p>}
      {may(user, 'UserImport') && <AddUser me={user} roles={roles} onAdded={(id) => { load(); setError(''); setSelected(id); }} />}
      <div class="table-scroll">
        <table class="table users-table"><thead><tr><th>User</th><th>Roles</th><th>Last login</th><th>Active</th><th /></tr></thead>
          <tbody>{users.map((u) => (
            <tr key={u.id} data-user={u.email} aria-selected={u.id === selected}>
              <td><strong>{fullName(u) || u.email}</strong>{fullName(u) && <><br /><small>{u.email}</small></>}</td>
              <td>{u.roles.join(', ')}</td>
              <td>{u.lastLoginDate ? new Date(u.lastLoginDate).toLocaleString() : '—'}</td>
              <td data-testid="user-active">{u.isActive ? 'yes' : 'no'}</td>
              <td><button type="button" onClick={() => setSelected(u.id === selected ? undefined : u.id)}>{u.id === selected ? 'Close' : 'Manage'}</button></td>
            </tr>
          ))}</tbody>
        </table>
      </div>
      {chosen && <UserDetail key={chosen.id} target={chosen} me={user} roles={roles} onChanged={load} />}
      <RolesAdmin me={user} roles={roles} onChanged={load} />
    </section>
  );
}

function AddUser({ me, roles, onAdded }: { me: SessionUser; roles: Role[]; onAdded: (id: string) => void }) {
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const login = String(data.get('login') ?? '').trim();
    const chosenRoles = data.getAll('role').map(String);
    setError('');
    try {
      await call('POST', '/User?verb=add', undefined, {
        userName: login, firstName: String(data.get('firstName') ?? ''), lastName: String(data.get('lastName') ?? ''),
        ...(chosenRoles.length > 0 ? { roles: chosenRoles } : {}),
      });
      form.reset();
      const [added] = await getJson<User[]>(`/User${query({ userName: login })}`);
      onAdded(added?.id ?? '');
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form class="inline add-user" onSubmit={submit} aria-label="Add a user">
      <label>Login (e-mail)<input name="login" type="email" required /></label>
      <label>First name<input name="firstName" /></label>
      <label>Last name<input name="lastName" /></label>
      {may(me, 'UserRolesModify') && <RoleChoice roles={assignable(roles, me)} held={['Tester']} />}
      <button type="submit">Add user</button>
      {error && <p class="error" role="alert">{error}</p>}
    </form>
  );
}

function RoleChoice({ roles, held }: { roles: Role[]; held: string[] }) {
  return (
    <fieldset class="choices"><legend>Roles</legend>
      {roles.map((r) => <label class="check" key={r.id}><input type="checkbox" name="role" value={r.name} defaultChecked={held.includes(r.name)} />{r.name}</label>)}
    </fieldset>
  );
}

function UserDetail({ target, me, roles, onChanged }: { target: User; me: SessionUser; roles: Role[]; onChanged: () => void }) {
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [token, setToken] = useState<string | undefined>();
  const self = target.id === me.id;
  const modify = may(me, 'UserModify') || (self && may(me, 'UserModifySelf'));
  const run = async (work: () => Promise<unknown>, done: string) => {
    setError('');
    setNotice('');
    try {
      await work();
      setNotice(done);
      onChanged();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const update = (changes: Record<string, unknown>) => call('POST', `/User${query({ verb: 'update', id: target.id })}`, undefined, changes);
  const saveRoles = (e: Event) => {
    e.preventDefault();
    const offered = assignable(roles, me).map((r) => r.name);
    // Roles the admin cannot hand out stay as they are: they are not offered, so they are kept.
    const kept = target.roles.filter((r) => !offered.includes(r));
    const chosen = new FormData(e.currentTarget as HTMLFormElement).getAll('role').map(String);
    void run(() => update({ roles: [...kept, ...chosen] }), 'Roles saved.');
  };
  const generate = () => run(async () => {
    setToken(undefined);
    const reply = await call<{ apiToken: string }>('POST', `/User${query({ action: 'generateToken', id: target.id })}`);
    setToken(reply?.apiToken);
  }, 'New token issued; the previous one no longer works.');
  return (
    <article class="user-detail" aria-label={`Manage ${target.email}`}>
      <h3>{fullName(target) || target.email} <small class="muted">{target.email}</small></h3>
      {error && <p class="error" role="alert">{error}</p>}
      {notice && <p class="notice" role="status">{notice}</p>}
      {may(me, 'UserRolesModify') && (
        <form class="inline" onSubmit={saveRoles} aria-label="Roles">
          <RoleChoice roles={assignable(roles, me)} held={target.roles} />
          <button type="submit">Save roles</button>
        </form>
      )}
      {modify && <div class="buttons">
        <button type="button" onClick={generate}>Generate token</button>
        {!self && <button type="button" onClick={() => run(() => update({ isActive: !target.isActive }), target.isActive ? 'Deactivated.' : 'Reactivated.')}>
          {target.isActive ? 'Deactivate' : 'Reactivate'}</button>}
      </div>}
      {token && (
        <div class="token-once" role="status">
          <p><strong>API token for {target.email}, shown once:</strong> copy it now; the hub keeps only its hash and cannot show it again.</p>
          <CopyLine text={token} label="API token" />
        </div>
      )}
      <AdbKeys target={target} modify={modify} />
    </article>
  );
}

function AdbKeys({ target, modify }: { target: User; modify: boolean }) {
  const [keys, setKeys] = useState<AdbKey[]>([]);
  const [error, setError] = useState('');
  const load = () => getJson<AdbKey[]>(`/User/AdbKey${query({ id: target.id })}`).then(setKeys, (err: Error) => setError(err.message));
  useEffect(() => { void load(); }, [target.id]);
  const change = async (work: () => Promise<unknown>) => {
    setError('');
    try { await work(); await load(); } catch (err) { setError((err as Error).message); }
  };
  const add = (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const key = String(new FormData(form).get('key') ?? '').trim();
    void change(async () => {
      await call('POST', `/User${query({ action: 'addAdbKey', id: target.id })}`, { key });
      form.reset();
    });
  };
  return (
    <div class="adb-keys">
      <h4>adb keys</h4>
      {error && <p class="error" role="alert">{error}</p>}
      {keys.length === 0 && <p class="muted">No adb key: this user cannot open retained Android devices over adb.</p>}
      <ul class="apps">{keys.map((k) => (
        <li key={k.fingerprint} data-fingerprint={k.fingerprint}>
          <span><code class="fingerprint">{k.fingerprint}</code> <small>{k.comment} · added {new Date(k.addedAt).toLocaleDateString()}</small></span>
          {modify && <button type="button" onClick={() => change(() => call('POST', `/User${query({ action: 'removeAdbKey', id: target.id, fingerprint: k.fingerprint })}`))}>Remove</button>}
        </li>
      ))}</ul>
      {modify && (
        <form class="inline" onSubmit={add} aria-label="Add an adb key">
          <label class="wide">Public key (the text of ~/.android/adbkey.pub)<textarea name="key" rows={2} required /></label>
          <button type="submit">Add key</button>
        </form>
      )}
    </div>
  );
}
