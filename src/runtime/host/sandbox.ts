/**
 * The process runner's sandbox: on Linux, each runtime process runs under bubblewrap (`bwrap`,
 * Debian's `bubblewrap`) in mount, PID, IPC and UTS namespaces of its own, with every capability
 * dropped. Inside, it sees the system's programs and libraries (read-only), the Node runtime and
 * the mcpctl package (read-only), its own slot of the engine's home and a private /tmp, and nothing
 * else: not the engine's state, settings, keys or logs, no other bundle, no other process. The
 * network is the host's (an instance listens on loopback; what it may call is its egress policy's
 * business).
 *
 * A slot is a folder `<home>/sandboxes/<id>/` holding `bundle/` (read-only inside) and `sock/` (its
 * Unix socket, the one folder it may write). Bound at the same paths inside as outside, so every
 * path the engine and the runtime exchange means the same on both sides. A cold start binds its
 * bundle where it is; a warm process, spawned before its bundle is known, gets the bundle's files
 * linked into its slot's `bundle/` when it is given one (hard links: no copy).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { delimiter, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { packageRoot } from '../../shared/package-root.js';

/** What the system offers a runtime process, read-only. */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** What of /etc a program needs to resolve names, speak TLS and know the time, and nothing more. */
const ETC_PATHS = [
  '/etc/alternatives',
  '/etc/ca-certificates',
  '/etc/ca-certificates.conf',
  '/etc/gai.conf',
  '/etc/group',
  '/etc/host.conf',
  '/etc/hosts',
  '/etc/ld.so.cache',
  '/etc/localtime',
  '/etc/nsswitch.conf',
  '/etc/passwd',
  '/etc/pki',
  '/etc/resolv.conf',
  '/etc/ssl',
];
/** The size of an instance's private /tmp. */
const TMP_SIZE_BYTES = 256 * 1024 * 1024;

export interface SandboxOptions {
  /** the bwrap program */
  bwrap: string;
  /** the engine's home: hidden, but for each instance's slot */
  home: string;
  /** more folders an instance may read (MCPCTL_SANDBOX_PATHS): programs installed elsewhere */
  readOnly?: string[];
}

/** One instance's place in the sandbox. */
export interface SandboxSlot {
  readonly dir: string;
  /** where the runtime reads its bundle inside */
  bundleDir: string;
  /** a Unix socket path the instance may create */
  readonly socketPath: string;
  /** bwrap's arguments up to the command (`--` included) */
  readonly args: string[];
  /** links a bundle's files into the slot (a warm process given its bundle); the bundle path inside */
  adopt(bundleDir: string): string;
  /** removes the slot (its process has ended) */
  remove(): Promise<void>;
}

export class Sandbox {
  readonly kind = 'bubblewrap';
  private readonly slots: string;
  private readonly fixedArgs: string[];

  constructor(private readonly options: SandboxOptions) {
    this.slots = join(options.home, 'sandboxes');
    this.fixedArgs = baseArgs(options);
  }

  get program(): string {
    return this.options.bwrap;
  }

  /** Removes the slots an earlier engine left (its processes are gone: they died with it). */
  clear(): void {
    rmSync(this.slots, { recursive: true, force: true });
  }

  /**
   * A new slot: for `bundleDir` (bound where it is), or empty for a warm process; `sharedDir`, a
   * folder the instances of its deployment share (their tasks), is bound writable where it is.
   */
  slot(bundleDir?: string, sharedDir?: string): SandboxSlot {
    const dir = join(this.slots, randomBytes(6).toString('hex'));
    const own = join(dir, 'bundle');
    const sock = join(dir, 'sock');
    mkdirSync(own, { recursive: true, mode: 0o700 });
    mkdirSync(sock, { mode: 0o700 });
    const bundle = bundleDir === undefined ? own : resolve(bundleDir);
    const shared = sharedDir === undefined ? [] : ['--bind', resolve(sharedDir), resolve(sharedDir)];
    const args = [
      ...this.fixedArgs,
      '--ro-bind',
      bundle,
      bundle,
      '--bind',
      sock,
      sock,
      ...shared,
      '--chdir',
      bundle,
      '--',
    ];
    let current = bundle;
    return {
      dir,
      get bundleDir() {
        return current;
      },
      socketPath: join(sock, 's.sock'),
      args,
      adopt(source: string): string {
        linkTree(resolve(source), own);
        current = own;
        return own;
      },
      remove: () => rm(dir, { recursive: true, force: true }),
    };
  }
}

/** The namespaces, the read-only system, the runtime, the hidden home, a private /tmp. */
function baseArgs(options: SandboxOptions): string[] {
  const args = [
    '--unshare-all',
    '--share-net',
    '--as-pid-1',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
  ];
  const readOnly = new Set<string>();
  for (const path of [...SYSTEM_PATHS, ...ETC_PATHS]) if (existsSync(path)) readOnly.add(path);
  const bound = [...readOnly];
  const covered = (path: string) => bound.some((base) => path === base || path.startsWith(`${base}${sep}`));
  // Node and the package, where the system folders do not already hold them
  for (const path of [dirname(dirname(process.execPath)), packageRoot(), ...(options.readOnly ?? [])]) {
    if (isAbsolute(path) && existsSync(path) && !covered(path)) {
      readOnly.add(path);
      bound.push(path);
    }
  }
  // the private /tmp first: what is bound below may live under /tmp (a package unpacked there)
  args.push('--proc', '/proc', '--dev', '/dev', '--size', String(TMP_SIZE_BYTES), '--tmpfs', '/tmp');
  for (const path of readOnly) args.push('--ro-bind', path, path);
  // a home inside a folder bound above (a package checkout, say) is covered by an empty one
  const home = resolve(options.home);
  if (covered(home)) args.push('--tmpfs', home);
  return args;
}

/** Recreates `source`'s tree under `target` with hard links (copies across file systems). */
function linkTree(source: string, target: string): void {
  for (const entry of readdirSync(source, { withFileTypes: true })) {
    const from = join(source, entry.name);
    const to = join(target, entry.name);
    if (entry.isDirectory()) {
      mkdirSync(to, { recursive: true });
      linkTree(from, to);
    } else if (entry.isFile()) {
      try {
        linkSync(from, to);
      } catch {
        copyFileSync(from, to);
      }
    }
  }
}

/** Whether a path lies inside a folder (or is it). */
export function isInside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

export type SandboxSetting = 'auto' | 'bubblewrap' | 'off';

export interface SandboxChoice {
  sandbox?: Sandbox;
  /** why there is none, for `engine status` and deploy notices */
  reason?: string;
}

/**
 * The sandbox this machine offers: bubblewrap when it is installed and works here (a first run
 * proves it: user namespaces may be forbidden), none with the reason otherwise. `bubblewrap`
 * makes its absence an error; `off` chooses none.
 */
export function findSandbox(
  setting: SandboxSetting,
  options: Omit<SandboxOptions, 'bwrap'> & { path?: string },
): SandboxChoice {
  if (setting === 'off') return { reason: 'the sandbox is turned off (MCPCTL_SANDBOX=off)' };
  if (process.platform !== 'linux')
    return refuse(setting, `the process sandbox needs Linux (this is ${process.platform})`);
  const bwrap = findProgram('bwrap', options.path ?? process.env.PATH ?? '');
  if (bwrap === undefined) return refuse(setting, 'bubblewrap (bwrap) is not installed: apt-get install bubblewrap');
  const sandbox = new Sandbox({ ...options, bwrap });
  // the namespaces and every bind of a real start, around a program that does nothing
  const probe = spawnSync(
    bwrap,
    [...baseArgs({ ...options, bwrap }), '--', findProgram('true', '/usr/bin:/bin') ?? process.execPath, '--version'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 10_000,
    },
  );
  if (probe.status !== 0) {
    const said = probe.stderr?.toString().trim().split('\n')[0] ?? probe.error?.message ?? `exit ${probe.status}`;
    return refuse(setting, `bubblewrap does not work here (${said})`);
  }
  return { sandbox };
}

function refuse(setting: SandboxSetting, reason: string): SandboxChoice {
  if (setting === 'bubblewrap') throw new SandboxUnavailableError(`MCPCTL_SANDBOX=bubblewrap, but ${reason}`);
  return { reason };
}

export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError';
}

function findProgram(name: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
