/**
 * The team's shared folder (`../shared` beside the repository: spec, fixtures, research). CI clones the
 * repository with shared/ beside it; DEVICELAB_SHARED_DIR points elsewhere when needed.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

export const SHARED_DIR = process.env.DEVICELAB_SHARED_DIR ?? path.resolve(__dirname, '../../../shared');
export const FIXTURES_DIR = path.join(SHARED_DIR, 'fixtures');
export const fixture = (name: string): string => path.join(FIXTURES_DIR, name);

/** Why the fixtures cannot be read, in words that say how to fix it; undefined when they are there. */
export function missingFixturesProblem(): string | undefined {
  if (existsSync(path.join(FIXTURES_DIR, 'ContactManager.apk'))) return undefined;
  return `The test fixtures (real APK and IPA files) are not in ${FIXTURES_DIR}. The tests read them from the team's ` +
    'shared folder beside the repository (../shared/fixtures); put it there or set DEVICELAB_SHARED_DIR to its path.';
}
