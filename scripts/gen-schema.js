// Writes schema/mcpctl.schema.json, the JSON Schema editors use to complete and check a definition,
// from the zod schema in dist/ (run `npm run schema`, which builds first).
// With --check, writes nothing and exits 1 when the committed file is out of date.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const target = fileURLToPath(new URL('../schema/mcpctl.schema.json', import.meta.url));
const { toEditorJsonSchema } = await import('../dist/definition/schema.js');
const text = `${JSON.stringify(toEditorJsonSchema(), null, 2)}\n`;

if (process.argv.includes('--check')) {
  const current = await readFile(target, 'utf8').catch(() => '');
  if (current !== text) {
    console.error('schema/mcpctl.schema.json is out of date: run `npm run schema`');
    process.exitCode = 1;
  }
} else {
  await writeFile(target, text);
  console.log(`wrote ${target}`);
}
