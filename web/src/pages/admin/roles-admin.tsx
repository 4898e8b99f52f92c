/**
 * Roles for admins with UserRolesModify: create, edit and delete roles, offering only the entitlements the admin
 * holds (the hub refuses the rest). Without UserRolesModify the roles are listed read-only.
 */
import { useState } from 'preact/hooks';
import { call, query } from '../../api/client';
import type { Role, SessionUser } from '../../api/types';
import { may } from '../../session';

export function RolesAdmin({ me, roles, onChanged }: { me: SessionUser; roles: Role[]; onChanged: () => void }) {
  const [editing, setEditing] = useState<string | undefined>();
  const [error, setError] = useState('');
  const manage = may(me, 'UserRolesModify');
  const run = async (work: () => Promise<unknown>) => {
    setError('');
    try {
      await work();
      setEditing(undefined);
      onChanged();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const save = (role: Role | undefined) => (e: Event) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget as HTMLFormElement);
    const entitlements = data.getAll('entitlement').map(String);
    void run(() => role
      ? call('POST', `/Role${query({ verb: 'update', name: role.name })}`, undefined, { entitlements })
      : call('POST', '/Role?verb=add', undefined, { name: String(data.get('name') ?? '').trim(), entitlements }));
  };
  return (
    <div class="roles">
      <h3>Roles</h3>
      {error && <p class="error" role="alert">{error}</p>}
      <div class="table-scroll">
        <table class="table roles-table"><thead><tr><th>Role</th><th>Entitlements</th>{manage && <th />}</tr></thead>
          <tbody>{roles.map((r) => (
            <tr key={r.id} data-role={r.name}>
              <td>{r.name}</td>
              <td>{editing === r.name
                ? <EntitlementForm me={me} held={r.entitlements} onSubmit={save(r)} onCancel={() => setEditing(undefined)} />
                : <small>{r.entitlements.join(', ')}</small>}</td>
              {manage && <td><span class="buttons">{r.name !== 'Administrator' && editing !== r.name && <>
                <button type="button" onClick={() => setEditing(r.name)}>Edit</button>
                {!r.isBuiltIn && <button type="button" onClick={() => confirm(`Delete role ${r.name}?`)
                  && run(() => call('POST', `/Role${query({ verb: 'delete', name: r.name })}`))}>Delete</button>}
              </>}</span></td>}
            </tr>
          ))}</tbody>
        </table>
      </div>
      {manage && (editing === ''
        ? <EntitlementForm me={me} held={[]} named onSubmit={save(undefined)} onCancel={() => setEditing(undefined)} />
        : <button type="button" onClick={() => setEditing('')}>New role</button>)}
    </div>
  );
}

/** Checkboxes of the admin's own entitlements; a role's entitlements beyond them are shown but cannot be changed. */
function EntitlementForm({ me, held, named, onSubmit, onCancel }: {
  me: SessionUser; held: string[]; named?: boolean; onSubmit: (e: Event) => void; onCancel: () => void;
}) {
  const beyond = held.filter((e) => !me.entitlements.includes(e));
  return (
    <form class="entitlements" onSubmit={onSubmit} aria-label={named ? 'New role' : 'Role entitlements'}>
      {named && <label>Role name<input name="name" required /></label>}
      <fieldset class="choices"><legend>Entitlements</legend>
        {me.entitlements.map((e) => <label class="check" key={e}><input type="checkbox" name="entitlement" value={e} defaultChecked={held.includes(e)} />{e}</label>)}
        {beyond.map((e) => <label class="check" key={e}><input type="checkbox" name="entitlement" value={e} checked disabled />{e}</label>)}
      </fieldset>
      <span class="buttons"><button type="submit">Save role</button><button type="button" onClick={onCancel}>Cancel</button></span>
    </form>
  );
}
