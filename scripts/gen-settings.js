// Writes docs/settings.md, docs/tuning.md and the README's table of variables from the settings
// registry in dist/ (src/shared/settings.ts; run `npm run settings`, which builds first).
// With --check, writes nothing and exits 1 when a page is out of date.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const { settingsPage, tuningPage, withReadmeTable, REGENERATE } = await import('../dist/shared/settings-docs.js');
const path = (name) => fileURLToPath(new URL(`../${name}`, import.meta.url));
const readme = await readFile(path('README.md'), 'utf8');
const pages = {
  'docs/settings.md': settingsPage(),
  'docs/tuning.md': tuningPage(),
  'README.md': withReadmeTable(readme),
};

const check = process.argv.includes('--check');
for (const [name, text] of Object.entries(pages)) {
  const current = await readFile(path(name), 'utf8').catch(() => '');
  if (current === text) continue;
  if (check) {
    console.error(`${name} is out of date: run \`${REGENERATE}\``);
    process.exitCode = 1;
  } else {
    await writeFile(path(name), text);
    console.log(`wrote ${name}`);
  }
}
