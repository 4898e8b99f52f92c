/**
 * The team's shared folder (`../shared` beside the repository: spec, fixtures, research). CI clones the
 * repository with shared/ beside it; DEVICELAB_SHARED_DIR points elsewhere when needed.
 */
import path from 'node:path';

export const SHARED_DIR = process.env.DEVICELAB_SHARED_DIR ?? path.resolve(__dirname, '../../../shared');
export const FIXTURES_DIR = path.join(SHARED_DIR, 'fixtures');
export const fixture = (name: string): string => path.join(FIXTURES_DIR, name);
