/**
 * Every test file runs in exactly one tier: a file whose name matches no tier would never run, one
 * that matches two would run twice. The tiers are the vitest projects of vitest.config.ts.
 */
import { readdir } from 'node:fs/promises';
import { join, matchesGlob, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import config, { TIERS } from '../vitest.config.js';

const ROOT = join(import.meta.dirname, '..');

async function testFiles(): Promise<string[]> {
  const entries = await readdir(join(ROOT, 'test'), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && /\.test\.[cm]?[jt]s$/.test(entry.name))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

interface Project {
  test?: { name?: string; include?: string[] };
}

const projects = ((config as { test?: { projects?: Project[] } }).test?.projects ?? []).map((project) => ({
  name: project.test?.name ?? '',
  include: project.test?.include ?? [],
}));

function tiersOf(file: string): string[] {
  return projects.filter((p) => p.include.some((glob) => matchesGlob(file, glob))).map((p) => p.name);
}

describe('test tiers', () => {
  it('the projects are the three tiers', () => {
    expect(projects.map((p) => p.name)).toEqual(['unit', 'integration', 'e2e']);
    expect(projects.map((p) => p.include)).toEqual([[TIERS.unit], [TIERS.integration], [TIERS.e2e]]);
  });

  it('every test file belongs to exactly one tier', async () => {
    const files = await testFiles();
    // the control: the walk finds the tests, this one among them
    expect(files).toContain('test/tiers.unit.test.ts');
    expect(files.length).toBeGreaterThan(50);
    const wrong = files.map((file) => ({ file, tiers: tiersOf(file) })).filter((found) => found.tiers.length !== 1);
    expect(wrong, 'name each test file *.unit.test.ts, *.integration.test.ts or *.e2e.test.ts').toEqual([]);
  });

  it('a test file named after no tier is in none, so the check above catches it', () => {
    expect(tiersOf('test/cli/new.test.ts')).toEqual([]);
    expect(tiersOf('test/cli/new.unit.test.ts')).toEqual(['unit']);
    expect(tiersOf('test/engine/deep/new.e2e.test.ts')).toEqual(['e2e']);
  });
});
