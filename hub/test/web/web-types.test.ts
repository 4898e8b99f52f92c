/**
 * The dashboard's API types against the hub's own OpenAPI document. The dashboard imports the wire models of
 * shared/src/models.ts (type-only) and declares only its own envelopes in web/src/api/types.ts: every property
 * those declare on a model must exist in that model's schema, so a field renamed on one side only fails here
 * instead of leaving the dashboard reading `undefined`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { buildOpenApiDocument } from '../../src/api/openapi/document';

const WEB_TYPES = path.resolve(__dirname, '../../../web/src/api/types.ts');
const SHARED_MODELS = path.resolve(__dirname, '../../../shared/src/models.ts');

/** Interface name → its declared property names, read with the TypeScript compiler (not regexes). */
function declaredInterfaces(file: string): Map<string, string[]> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found = new Map<string, string[]>();
  source.forEachChild((node) => {
    if (!ts.isInterfaceDeclaration(node)) return;
    const names = node.members.filter(ts.isPropertySignature).map((member) => member.name.getText(source));
    found.set(node.name.text, names);
  });
  return found;
}

/** The names web/src/api/types.ts takes from shared/src/models.ts (`export type { A, B as C } from ...models`). */
function reexportedModels(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const names: string[] = [];
  source.forEachChild((node) => {
    if (!ts.isExportDeclaration(node) || !node.moduleSpecifier || !node.exportClause || !ts.isNamedExports(node.exportClause)) return;
    if (!(node.moduleSpecifier as ts.StringLiteral).text.endsWith('/shared/src/models')) return;
    for (const element of node.exportClause.elements) names.push((element.propertyName ?? element.name).text);
  });
  return names;
}

const schemas = (buildOpenApiDocument() as { components: { schemas: Record<string, { properties?: Record<string, unknown> }> } })
  .components.schemas;
const shared = declaredInterfaces(SHARED_MODELS);
const web = declaredInterfaces(WEB_TYPES);
const used = reexportedModels(WEB_TYPES);

it('the dashboard takes the models it shows from the hub\'s wire models (Device, Application, UsbHub, …)', () => {
  expect(used).toEqual(expect.arrayContaining(['Device', 'Application', 'FleetGatewayDescription', 'UsbHub', 'UsbHubDevice', 'User', 'Role']));
});

/** Interfaces the dashboard reads that share a name with a schema of the document. */
const checked = [
  ...used.filter((name) => shared.has(name) && schemas[name]?.properties).map((name) => ({ name, properties: shared.get(name)! })),
  // FleetGatewayDescription is GatewayDescription & the fleet fields: both parts are in the GatewayDescription schema.
  { name: 'GatewayDescription', properties: [...shared.get('GatewayDescription')!, 'isConnected', 'lastSeenAt', 'version', 'hubReplica'] },
  ...[...web.keys()].filter((name) => schemas[name]?.properties).map((name) => ({ name, properties: web.get(name)! })),
];

it.each(checked.map((c) => [c.name, c.properties] as const))('every property of %s the dashboard reads exists in the OpenAPI schema of the same name', (name, properties) => {
  const documented = Object.keys(schemas[name].properties!);
  const missing = properties.filter((property) => !documented.includes(property));
  expect(missing).toEqual([]);
});

it('the dashboard type-checks against those models (web/tsconfig.json, as `npx tsc -p web` does)', () => {
  const configFile = path.resolve(__dirname, '../../../web/tsconfig.json');
  const config = ts.getParsedCommandLineOfConfigFile(configFile, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!;
  const program = ts.createProgram(config.fileNames, config.options);
  const problems = ts.getPreEmitDiagnostics(program)
    .map((d) => `${d.file ? path.relative(path.dirname(configFile), d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
  expect(problems).toEqual([]);
}, 60_000);
