/**
 * What a sandboxed runtime process is given: read-only system folders, Node and the package; its
 * own bundle read-only and its socket folder writable, at the same paths as outside; never the
 * engine's home (covered by an empty folder when a bound folder holds it); and a warm process's
 * slot that gets its bundle's files linked in. Plus the heap limit that stands in for missing
 * control groups. No process is started.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { heapLimitArgs, isolate } from '../../src/runtime/host/isolation.js';
import { Sandbox } from '../../src/runtime/host/sandbox.js';
import { packageRoot } from '../../src/shared/package-root.js';

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcpctl-sandbox-'));
  temps.push(dir);
  return dir;
}

/** The pairs of `--flag source dest` in bwrap's arguments. */
function binds(args: string[], flag: string): string[] {
  const found: string[] = [];
  args.forEach((arg, i) => {
    if (arg === flag) found.push(args[i + 1]!);
  });
  return found;
}

describe('the sandbox’s arguments', () => {
  it('bind the system and the package read-only, the bundle read-only and the socket folder writable, and never the home', () => {
    const home = join(temp(), 'home');
    const bundle = join(home, 'bundles', 'b1');
    mkdirSync(bundle, { recursive: true });
    const sandbox = new Sandbox({ bwrap: '/usr/bin/bwrap', home });
    const slot = sandbox.slot(bundle);
    const readOnly = binds(slot.args, '--ro-bind');
    expect(readOnly).toContain('/usr');
    expect(readOnly).toContain(bundle);
    expect(
      readOnly.some((path) => path === home || path === join(home, 'store') || path === join(home, 'bundles')),
    ).toBe(false);
    expect(binds(slot.args, '--bind')).toEqual([join(slot.dir, 'sock')]);
    expect(slot.socketPath.startsWith(join(slot.dir, 'sock'))).toBe(true);
    expect(slot.args).toEqual(
      expect.arrayContaining([
        '--unshare-all',
        '--share-net',
        '--die-with-parent',
        '--new-session',
        '--cap-drop',
        'ALL',
      ]),
    );
    expect(slot.args.at(-1)).toBe('--');
    // the private /tmp comes before the binds: a package or bundle under /tmp stays visible
    expect(slot.args.indexOf('/tmp')).toBeLessThan(slot.args.indexOf(packageRoot()));
    expect(slot.args.indexOf('/tmp')).toBeLessThan(slot.args.indexOf(bundle));
    expect((statSync(slot.dir).mode & 0o777).toString(8)).toBe('700');
  });

  it('bind a deployment’s task folder writable, and only that folder of the home', () => {
    const home = join(temp(), 'home');
    const bundle = join(home, 'bundles', 'b1');
    const tasks = join(home, 'tasks', 'deploy_1');
    mkdirSync(bundle, { recursive: true });
    mkdirSync(tasks, { recursive: true });
    const slot = new Sandbox({ bwrap: '/usr/bin/bwrap', home }).slot(bundle, tasks);
    expect(binds(slot.args, '--bind')).toEqual([join(slot.dir, 'sock'), tasks]);
    expect(binds(slot.args, '--ro-bind')).not.toContain(join(home, 'tasks'));
    expect(slot.args.at(-1)).toBe('--');
  });

  it('cover a home that lies inside a bound folder with an empty one', () => {
    const root = packageRoot();
    const home = join(root, 'node_modules', '.mcpctl-home-test');
    const sandbox = new Sandbox({ bwrap: '/usr/bin/bwrap', home });
    const args = sandbox.slot(temp()).args;
    expect(binds(args, '--tmpfs')).toContain(home);
    sandbox.clear();
    expect(existsSync(join(home, 'sandboxes'))).toBe(false);
    rmSync(home, { recursive: true, force: true });
  });

  it('give a warm process its bundle by linking the files into its slot', () => {
    const home = temp();
    const bundle = join(home, 'bundles', 'b2');
    mkdirSync(join(bundle, 'lib'), { recursive: true });
    writeFileSync(join(bundle, 'server.json'), '{}');
    writeFileSync(join(bundle, 'lib', 'tool.mjs'), 'export const x = 1;');
    const isolated = isolate({ sandbox: new Sandbox({ bwrap: '/usr/bin/bwrap', home }) });
    expect(isolated.reportsPid).toBe(true);
    const inside = isolated.bundle(bundle);
    expect(inside).not.toBe(bundle);
    expect(inside.startsWith(join(home, 'sandboxes'))).toBe(true);
    expect(readFileSync(join(inside, 'lib', 'tool.mjs'), 'utf8')).toBe('export const x = 1;');
    const { program, args } = isolated.command(['serve-bundle.js', '--warm']);
    expect(program).toBe('/usr/bin/bwrap');
    expect(args.slice(0, 2)).toEqual(['--info-fd', '3']);
    expect(binds(args, '--ro-bind')).toContain(inside);
  });

  it('run Node itself without a sandbox, and say when limits cannot be enforced', () => {
    const isolated = isolate(undefined, '/b');
    expect(isolated.command(['x.js'])).toEqual({ program: process.execPath, args: ['x.js'] });
    expect(isolated.socketPath('/run/a.sock')).toBe('/run/a.sock');
    expect(isolated.limit(1, { memoryMb: 64 })).toBe(false);
    expect(isolated.limit(1, undefined)).toBe(true);
    expect(heapLimitArgs(undefined, { memoryMb: 200 })).toEqual(['--max-old-space-size=150']);
    expect(heapLimitArgs(undefined, { cpus: 1 })).toEqual([]);
  });
});
