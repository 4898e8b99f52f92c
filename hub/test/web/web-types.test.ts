/**
 * The dashboard's hand-written API types (web/src/api/types.ts) against the hub's own OpenAPI document: every
 * property the web declares on a model must exist in that model's schema, so renaming a field on one side only
 * fails here instead of leaving the dashboard reading `undefined`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { buildOpenApiDocument } from '../../src/api/openapi/document';

const TYPES_FILE = path.resolve(__dirname, '../../../web/src/api/types.ts');

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

const schemas = (buildOpenApiDocument() as { components: { schemas: Record<string, { properties?: Record<string, unknown> }> } })
  .components.schemas;
const declared = declaredInterfaces(TYPES_FILE);
/** Web interfaces that share a name with a schema of the document: the models the dashboard reads from the API. */
const models = [...declared.keys()].filter((name) => schemas[name]?.properties);

it('the dashboard types the models it shows (Device, Application, GatewayDescription, UsbHub, …)', () => {
  expect(models).toEqual(expect.arrayContaining(['Device', 'Application', 'GatewayDescription', 'UsbHub', 'UsbHubDevice', 'User', 'Role']));
});

it.each(models)('every property of the web type %s exists in the OpenAPI schema of the same name', (name) => {
  const documented = Object.keys(schemas[name].properties!);
  const missing = declared.get(name)!.filter((property) => !documented.includes(property));
  expect(missing).toEqual([]);
});
