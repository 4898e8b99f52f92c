/**
 * What a user's login and a role's name may be, beyond their own format rules: text that reads as what it is.
 *  - No control or format characters (a name that renders the same as another, or reorders the text around it),
 *    no line or paragraph separators, no private-use characters or lone surrogates; stored in Unicode NFC, so one
 *    name has one spelling.
 *  - Not confusable with an existing name: `Аdministrator` with a Cyrillic А beside `Administrator`. Two names are
 *    confusable when their skeletons (Unicode TR39: compatibility decomposition, then look-alike characters mapped
 *    to one prototype) are equal, taken as written, lower-cased and upper-cased (names are compared ignoring case).
 *    The table covers the common Latin, Cyrillic and Greek look-alikes, digits and fullwidth forms (by NFKD).
 */
import { sql } from 'kysely';
import { ApiFailure } from '@devicelab/shared';
import { LockKind } from '../fleet/advisory-locks';
import type { Tx } from '../store/database';

const UNREADABLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Zl}\p{Zp}]/u;

/**
 * TR39 prototypes, as pairs "<look-alike><prototype>" separated by spaces (a prototype may be two letters). From
 * Unicode's confusables.txt, restricted to Latin, Cyrillic, Greek and ASCII digits and signs.
 */
const LOOK_ALIKES = (
  'АA ВB СC ЕE НH Іl ЈJ КK МM ОO РP ЅS ТT ХX УY ҮY ԚQ ԜW Ӏl ' +
  'аa сc еe һh іi јj оo рp ѕs хx уy үy ԁd ԛq ԝw ӏl гr пn ьb ' +
  'ΑA ΒB ΕE ΖZ ΗH Ιl ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX ' +
  'αa γy ιi νv οo ρp υu χx ϲc ϳj ' +
  '0O 1l Il |l ǀl mrn'
).split(' ');
const PROTOTYPES = new Map(LOOK_ALIKES.map((pair) => [[...pair][0], [...pair].slice(1).join('')]));

/** The name in NFC; an ApiFailure naming `what` ("UserName", "A role name") when it holds an unreadable character. */
export function readableName(text: string, what: string): string {
  if (UNREADABLE.test(text)) {
    throw new ApiFailure(`${what} must not contain control, format or separator characters.`);
  }
  return text.normalize('NFC');
}

/** The TR39 skeleton of `text`, case as given. */
export function skeleton(text: string): string {
  let out = '';
  for (const char of text.normalize('NFKD')) out += PROTOTYPES.get(char) ?? char;
  return out.normalize('NFKD');
}

/** Whether two names read alike (see the module comment); names equal ignoring case are alike too. */
export function areConfusable(a: string, b: string): boolean {
  return skeleton(a) === skeleton(b)
    || skeleton(a.toLowerCase()) === skeleton(b.toLowerCase())
    || skeleton(a.toUpperCase()) === skeleton(b.toUpperCase());
}

type NameSpace = 'login' | 'role';
const TABLES = { login: { key: 1, label: 'user' }, role: { key: 2, label: 'role' } } as const;

/**
 * Fails when `name` is confusable with an existing login or role name (other than `selfId`'s own). A name equal to
 * another ignoring case is left to the unique index, whose failure clients know. Holds a transaction lock per
 * name space, so two confusable names created at once cannot both pass.
 */
export async function requireDistinctName(trx: Tx, space: NameSpace, name: string, selfId?: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${LockKind.names}, ${TABLES[space].key})`.execute(trx);
  const rows = space === 'login'
    ? await trx.selectFrom('users').select(['id', 'login as name']).execute()
    : await trx.selectFrom('roles').select(['id', 'name']).execute();
  const lower = name.toLowerCase();
  const alike = rows.find((row) => row.id !== selfId && row.name.toLowerCase() !== lower && areConfusable(row.name, name));
  if (alike) {
    throw new ApiFailure(`The ${TABLES[space].label} name '${name}' can be mistaken for the existing '${alike.name}'; choose another.`);
  }
}
