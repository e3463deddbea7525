import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toBuildRequest } from '../../src/api/build-request.js';
import { loadDefinition } from '../../src/definition/load.js';
import { looksLikeCredential, parseIgnoreRules } from '../../src/definition/shipped-files.js';
import { runCli } from '../support/cli.js';

let dir: string;

async function write(files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

const BASE = 'name: demo\ntemplate: basic\n';

async function shipped(yaml: string) {
  await write({ 'server.yaml': `${BASE}${yaml}` });
  const loaded = await loadDefinition('server.yaml', { cwd: dir });
  const request = await toBuildRequest(loaded);
  const warnings = loaded.warnings.filter((warning) => warning.message.includes('looks like a credential'));
  return { files: Object.keys(request.files ?? {}).sort(), warnings };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcpctl-shipped-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('what an include folder ships', () => {
  it('ATTACK: include ["."] leaves .env, .npmrc, .git and every other dot-file behind', async () => {
    await write({
      '.env': 'DATABASE_URL=postgres://u:p@db/x',
      '.npmrc': '//registry.npmjs.org/:_authToken=npm_secret',
      '.git/config': '[core]',
      '.ssh/id_ed25519': 'key',
      'data/.hidden': 'x',
      'data/cities.json': '[]',
      'README.md': '# demo',
    });
    const { files } = await shipped('include: ["."]\n');
    expect(files).toEqual(['README.md', 'data/cities.json', 'server.yaml']);
  });

  it('ships a dot-file or dot-folder that is named itself', async () => {
    await write({
      '.env.example': 'DATABASE_URL=',
      '.config/app.json': '{}',
      '.config/.inner': 'x',
      '.env': 'SECRET=1',
    });
    const { files, warnings } = await shipped('include: [".env.example", ".config"]\n');
    expect(files).toEqual(['.config/app.json', '.env.example']);
    expect(warnings).toEqual([]);
  });

  it('ATTACK: .mcpctlignore beside the definition leaves out what it names (gitignore syntax)', async () => {
    await write({
      '.mcpctlignore': '# local only\n*.log\nfixtures/\n!keep.log\n',
      'app.log': 'x',
      'keep.log': 'x',
      'fixtures/big.json': '{}',
      'data/debug.log': 'x',
      'data/a.txt': 'a',
    });
    const { files } = await shipped('include: ["."]\n');
    expect(files).toEqual(['data/a.txt', 'keep.log', 'server.yaml']);
  });

  it('ATTACK: warns, at the include entry, for each shipped file that looks like a credential', async () => {
    await write({
      'certs/server.pem': 'x',
      'certs/server.key': 'x',
      id_rsa: 'x',
      'gcp/credentials-prod.json': '{}',
      'data.json': '{}',
    });
    const { files, warnings } = await shipped('include:\n  - certs\n  - id_rsa\n  - gcp\n  - data.json\n');
    expect(files).toContain('certs/server.key');
    const messages = warnings.map((w) => `${w.where} ${w.path} ${w.message}`);
    expect(messages).toHaveLength(4);
    expect(messages[0]).toMatch(
      /^server\.yaml:4:5 include\[0\] ships certs\/server\.key, which looks like a credential; .*\.mcpctlignore/,
    );
    expect(messages.join('\n')).toContain('ships id_rsa');
    expect(messages.join('\n')).toContain('ships gcp/credentials-prod.json');
    expect(messages.join('\n')).not.toContain('data.json,');
  });

  it('validate shows the credential warning with the file and the entry that ships it', async () => {
    await write({ 'server.yaml': `${BASE}include: [keys]\n`, 'keys/deploy.p12': 'x' });
    const result = await runCli(['validate', 'server.yaml'], { cwd: dir, env: {} });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'server.yaml:3:11  include[0]  ships keys/deploy.p12, which looks like a credential',
    );
  });
});

describe('looksLikeCredential', () => {
  it.each([
    'a.pem',
    'tls/server.KEY',
    'id_rsa',
    'id_ed25519.pub',
    'store.p12',
    'credentials.json',
    'credentials-dev.json',
    'service-account.json',
    '.env',
    '.env.production',
    '.npmrc',
    '.pypirc',
    '.netrc',
    'kubeconfig',
    'kubeconfig.yaml',
    '.aws/credentials',
    'home/.ssh/config',
    'state/terraform.tfstate',
  ])('%s looks like a credential', (path) => expect(looksLikeCredential(path)).toBe(true));

  it.each([
    'README.md',
    '.env.example',
    'config/.env.sample',
    'keys.ts',
    'data/keyboard.json',
    'credentials.md',
    'monkey.txt',
  ])('%s does not', (path) => expect(looksLikeCredential(path)).toBe(false));
});

describe('parseIgnoreRules', () => {
  it('matches files and folders in gitignore syntax, and nothing without a file', async () => {
    const rules = await parseIgnoreRules('build/\n*.tmp\n/secret.txt\n');
    expect(rules.ignores('build/')).toBe(true);
    expect(rules.ignores('a/b.tmp')).toBe(true);
    expect(rules.ignores('secret.txt')).toBe(true);
    expect(rules.ignores('a/secret.txt')).toBe(false);
    expect((await parseIgnoreRules(undefined)).ignores('anything')).toBe(false);
  });
});
