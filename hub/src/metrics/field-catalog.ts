/**
 * The PostgreSQL field catalog (`metrics.fields`): the spec's field names mapped to generated, safe column
 * names. Fields of the fixed tables are seeded by migration 009; a `sample` field gets its column on first
 * sight (ALTER TABLE ... ADD COLUMN, metadata-only for a nullable column), under an advisory lock so two hubs
 * never add the same field twice.
 */
import { sql } from 'kysely';
import { withTx, type Db, type Tx } from '../store/database';
import type { CatalogField, FieldCatalog, FieldKind, MetricTableName } from './metrics-store';
import { METRIC_TABLES } from './metrics-store';

/** PostgreSQL allows 1600 columns per table; stay well below, whatever a device sends. */
const MAX_SAMPLE_FIELDS = 1000;
/** Longest accepted field name (bytes of UTF-8 text); longer ones are dropped at ingest. */
const MAX_FIELD_NAME_LENGTH = 200;
const SAFE_COLUMN = /^[a-z][a-z0-9_]{0,62}$/;
/**
 * How long a loaded catalog is trusted: another hub on the same database may add `sample` fields, and a query
 * without `fields` (all of them) must show those too, at most this much later.
 */
export const CATALOG_MAX_AGE_MS = 10_000;

/** Whether a field name may enter the catalog: printable, not too long. */
export function acceptableFieldName(field: string): boolean {
  return field.trim().length > 0 && Buffer.byteLength(field) <= MAX_FIELD_NAME_LENGTH && !/[\u0000-\u001f\u007f]/.test(field);
}

/** A column name for a new field: `f_` + a lower-case slug, made unique against `taken`. */
export function columnNameFor(field: string, taken: ReadonlySet<string>): string {
  const slug = field.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 48) || 'field';
  const base = `f_${slug}`;
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
  return name;
}

/** Only catalog columns reach SQL, and they are checked once more on the way. */
export function safeColumn(column: string): string {
  if (!SAFE_COLUMN.test(column)) throw new Error(`unsafe metrics column name ${JSON.stringify(column)}`);
  return column;
}

export class PostgresFieldCatalog {
  private current: Map<MetricTableName, CatalogField[]> | undefined;
  private byName = new Map<string, CatalogField>();
  private loadedAt = 0;

  constructor(private readonly db: Db, private readonly now: () => number = Date.now) {}

  async load(refresh = false): Promise<FieldCatalog> {
    if (!this.current || refresh || this.now() - this.loadedAt > CATALOG_MAX_AGE_MS) this.install(await this.read(this.db));
    return this.current!;
  }

  /** The entry of `field` in `table`, if the catalog (as last loaded) has one. */
  lookup(table: MetricTableName, field: string): CatalogField | undefined {
    return this.byName.get(key(table, field));
  }

  /**
   * Adds `sample` fields not yet in the catalog, with the kind of their first value. Returns how many could
   * not be added because the catalog is full.
   */
  async addSampleFields(fields: ReadonlyMap<string, FieldKind>): Promise<number> {
    let refused = 0;
    const catalog = await withTx(this.db, async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext('metrics.fields'))`.execute(trx);
      const existing = await this.read(trx);
      const sample = existing.get('sample') ?? [];
      const taken = new Set(sample.map((f) => f.column));
      const known = new Set(sample.map((f) => f.field));
      for (const [field, kind] of fields) {
        if (known.has(field)) continue;
        if (taken.size >= MAX_SAMPLE_FIELDS) {
          refused++;
          continue;
        }
        const column = safeColumn(columnNameFor(field, taken));
        taken.add(column);
        known.add(field);
        const type = kind === 'number' ? sql`double precision` : kind === 'flag' ? sql`boolean` : sql`text`;
        await sql`ALTER TABLE metrics.sample ADD COLUMN ${sql.id(column)} ${type}`.execute(trx);
        await sql`INSERT INTO metrics.fields (table_name, field, column_name, kind) VALUES ('sample', ${field}, ${column}, ${kind})`
          .execute(trx);
      }
      return this.read(trx);
    });
    this.install(catalog);
    return refused;
  }

  private install(catalog: Map<MetricTableName, CatalogField[]>): void {
    this.current = catalog;
    this.loadedAt = this.now();
    this.byName = new Map();
    for (const fields of catalog.values()) for (const f of fields) this.byName.set(key(f.table, f.field), f);
  }

  private async read(db: Db | Tx): Promise<Map<MetricTableName, CatalogField[]>> {
    const { rows } = await sql<{ table_name: string; field: string; column_name: string; kind: FieldKind }>`
      SELECT table_name, field, column_name, kind FROM metrics.fields ORDER BY position`.execute(db);
    const catalog = new Map<MetricTableName, CatalogField[]>(METRIC_TABLES.map((t) => [t, []]));
    for (const row of rows) {
      const table = row.table_name as MetricTableName;
      catalog.get(table)?.push({ table, field: row.field, column: safeColumn(row.column_name), kind: row.kind });
    }
    return catalog;
  }
}

const key = (table: string, field: string): string => `${table}\u0000${field}`;
