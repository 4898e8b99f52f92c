/**
 * The failure-code catalog: what counts as a code, that a gateway throw site cannot name another (a type error, so
 * the type check of the tests is this test's other half), and that the README's table documents every code.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DeviceCommandError } from '../../gateway/src/drivers/device-driver';
import { FAILURE_CODE_FAMILIES, FAILURE_CODES, isFailureCode } from '../src/failure-codes';

test('catalogued codes and members of a family are codes; anything else is not', () => {
  expect(isFailureCode('DEVICE_NOT_READY')).toBe(true);
  expect(isFailureCode('INSTALL_FAILED_INSUFFICIENT_STORAGE')).toBe(true);
  expect(isFailureCode('INSTALL_PARSE_FAILED_NO_CERTIFICATES')).toBe(true);
  expect(isFailureCode('INSTALLD_ApplicationVerificationFailed')).toBe(true);
  for (const text of ['', 'closed', 'timeout', 'not installed for 0', 'ApplicationVerificationFailed', 'INSTALL_FAILED_',
    'INSTALL_FAILED_X: with a message', 'toString', '__proto__']) {
    expect(isFailureCode(text)).toBe(false);
  }
});

test('a gateway failure takes a catalog code only', () => {
  expect(new DeviceCommandError('Device 1 is not ready', 'DEVICE_NOT_READY').code).toBe('DEVICE_NOT_READY');
  // @ts-expect-error: a code outside the catalog does not compile.
  expect(new DeviceCommandError('Device 1 is on fire', 'DEVICE_ON_FIRE').code).toBe('DEVICE_ON_FIRE');
});

test('the README\'s "Failure codes" table lists every code and family with its meaning and origin', () => {
  const readme = readFileSync(path.resolve(__dirname, '../../README.md'), 'utf8');
  const start = readme.indexOf('### Failure codes');
  const section = readme.slice(start, readme.indexOf('\n## ', start));
  const rows = new Map(section.split('\n').filter((line) => line.startsWith('| `'))
    .map((line) => line.replace(/^\| | \|$/g, '').split(' | '))
    .map(([code, meaning, from]) => [code.replace(/`/g, ''), { meaning, from }]));
  const documented = [
    ...Object.entries(FAILURE_CODES),
    ...Object.entries(FAILURE_CODE_FAMILIES).map(([prefix, entry]) => [`${prefix}...`, entry] as const),
  ];
  for (const [code, entry] of documented) expect({ code, ...rows.get(code) }).toEqual({ code, meaning: entry.meaning, from: entry.from });
  expect(rows.size).toBe(documented.length);
});
