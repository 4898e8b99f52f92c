/**
 * Every `DEVICELAB_*` variable the processes, the demo and `deploy/` read is in the README, where operators look
 * for it. A variable added without a word there fails this test.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
/** Named in the sources but no setting: the hub's marker for its own re-executed child. */
const INTERNAL = new Set(['DEVICELAB_OWN_PROCESS_GROUP']);

function files(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && keep(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

test('every DEVICELAB_ variable the code and deploy/ read is documented in the README', () => {
  const sources = [
    ...['hub/src', 'gateway/src', 'cli/src', 'shared/src', 'labsim/src', 'web/src'].flatMap((dir) => files(dir, (n) => /\.tsx?$/.test(n))),
    ...files('scripts', (n) => n.endsWith('.mjs')).filter((f) => path.dirname(f) === path.join(root, 'scripts')),
    ...files('deploy', () => true),
  ];
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const undocumented = new Map<string, string>();
  for (const file of sources) {
    for (const [name] of readFileSync(file, 'utf8').matchAll(/\bDEVICELAB_[A-Z0-9_]*[A-Z0-9]\b/g)) {
      if (!INTERNAL.has(name) && !new RegExp(`\\b${name}\\b`).test(readme)) undocumented.set(name, path.relative(root, file));
    }
  }
  expect(Object.fromEntries(undocumented)).toEqual({});
});
