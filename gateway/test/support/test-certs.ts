/** Throwaway CA + server certificate for 127.0.0.1/localhost, made with the system openssl. */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface TestCerts { ca: Buffer; cert: Buffer; key: Buffer }

export function makeTestCerts(dir: string): TestCerts {
  const f = (name: string) => path.join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=DeviceLab Test CA',
    '-keyout', f('ca.key'), '-out', f('ca.pem'));
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', f('hub.key'), '-out', f('hub.csr'));
  writeFileSync(f('ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  ssl('x509', '-req', '-in', f('hub.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '1',
    '-extfile', f('ext.cnf'), '-out', f('hub.pem'));
  return { ca: readFileSync(f('ca.pem')), cert: readFileSync(f('hub.pem')), key: readFileSync(f('hub.key')) };
}
