/**
 * Icons stored before icons were bounded (apps/app-icon.ts) could take megabytes each, and every list answer
 * carries every icon: each one larger than a bounded icon is made one as an upload makes it now, or dropped.
 * Rows are read one at a time, so the migration holds one old icon at most.
 */
import { type Kysely, sql } from 'kysely';
import { ICON_MAX_BYTES, storedIcon } from '../../apps/app-icon';

/** The longest data URL of a bounded icon (base64 is 4 characters for 3 bytes). */
export const MAX_STORED_ICON_CHARS = 'data:image/webp;base64,'.length + Math.ceil(ICON_MAX_BYTES / 3) * 4;

export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ id: string }>`SELECT id FROM applications
    WHERE length(icon_blob) > ${MAX_STORED_ICON_CHARS}`.execute(db);
  for (const { id } of rows) {
    const { rows: [row] } = await sql<{ icon_blob: string }>`SELECT icon_blob FROM applications WHERE id = ${id}`
      .execute(db);
    const base64 = /^data:image\/[a-z]+;base64,/.exec(row.icon_blob);
    const icon = base64 ? storedIcon(Buffer.from(row.icon_blob.slice(base64[0].length), 'base64')) : {};
    await sql`UPDATE applications SET icon_blob = ${icon.dataUrl ?? null} WHERE id = ${id}`.execute(db);
  }
}

export async function down(): Promise<void> {
  // The original icons are gone; the bounded ones stay.
}
