/**
 * Server images through the Docker Engine API, as the image contract (src/packaging/image.ts) says:
 *
 *   mcpctl-runtime:<hash>       the base image + this mcpctl package (dist/ and its production
 *                               dependencies) at /opt/mcpctl; built once per base image and package
 *   mcpctl-server:<digest>      FROM the runtime image + the bundle at /srv/mcpctl/bundle, user
 *                               10001, port 8080, labels; built once per bundle digest and runtime
 *
 * Both are classic `docker build`s of a generated Dockerfile with only COPY steps (no RUN), so they
 * need no network once the base image is on the host. The tag is the content, so an image that
 * exists is not built again; a server image whose label `mcpctl/runtime-image` names another
 * runtime image (another mcpctl, whose command line may differ) is built again on the current one.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, readdir, realpath, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MANIFEST_FILE, type BundleManifest } from '../../../runtime/host/bundle.js';
import {
  BUNDLE_DIGEST_ANNOTATION,
  BUNDLE_LABEL_LENGTH,
  DIGEST_PATTERN,
  LABELS,
  imageContract,
  imageName,
  type ImageContract,
} from '../../../packaging/image.js';
import { VERSION } from '../../../shared/version.js';
import { DockerApiError, readProgress, type DockerClient } from './engine-api.js';
import { tarStream } from './tar.js';

/** On a server image: the runtime image it was built from, so one built by another mcpctl is built again. */
const RUNTIME_IMAGE_LABEL = 'mcpctl/runtime-image';

export const RUNTIME_IMAGE_REPOSITORY = 'mcpctl-runtime';

export interface ImageBuilderOptions {
  docker: DockerClient;
  /** the image with `node` the runtime image starts from (DEFAULT_BASE_IMAGE unless told otherwise) */
  baseImage: string;
  /** the mcpctl package to put in images; default: the one this file belongs to */
  packageRoot?: string;
  /** each line of build output */
  onProgress?: (line: string) => void;
}

export interface BuiltImage {
  /** `mcpctl-server:<digest>` */
  image: string;
  digest: string;
  contract: ImageContract;
  /** false when it was there already */
  built: boolean;
}

export interface ImageBuilder {
  /** the image of the bundle in `bundleDir`, built unless it exists */
  ensure(bundleDir: string): Promise<BuiltImage>;
  /** tags the image of `digest` for `registry` and pushes it; resolves with the pushed reference */
  push(digest: string, registry: string, auth?: string): Promise<string>;
}

/** The base image is missing and cannot be pulled; the message says what to do. */
export class BaseImageError extends Error {
  override readonly name = 'BaseImageError';
}

export function createImageBuilder(options: ImageBuilderOptions): ImageBuilder {
  const { docker } = options;
  const packageRoot = options.packageRoot ?? defaultPackageRoot();
  const inFlight = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, work: () => Promise<T>): Promise<T> => {
    let pending = inFlight.get(key) as Promise<T> | undefined;
    if (pending === undefined) {
      pending = work().finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    return pending;
  };

  /** The labels of an image, undefined when there is no such image. */
  async function labelsOf(image: string): Promise<Record<string, string> | undefined> {
    try {
      return (
        (
          await docker.json<{ Config?: { Labels?: Record<string, string> | null } }>(
            'GET',
            `/images/${encodeURIComponent(image)}/json`,
          )
        ).Config?.Labels ?? {}
      );
    } catch (error) {
      if (error instanceof DockerApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  async function exists(image: string): Promise<string | undefined> {
    try {
      return (await docker.json<{ Id: string }>('GET', `/images/${encodeURIComponent(image)}/json`)).Id;
    } catch (error) {
      if (error instanceof DockerApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  async function baseImageId(): Promise<string> {
    const base = options.baseImage;
    const id = await exists(base);
    if (id !== undefined) return id;
    const [name, tag] = splitReference(base);
    try {
      await readProgress(
        await docker.stream('POST', '/images/create', { query: { fromImage: name, tag }, long: true }),
        options.onProgress,
      );
    } catch (error) {
      throw new BaseImageError(
        `the base image ${base} is not on the Docker host and could not be pulled (${(error as Error).message}): ` +
          'pull or load it there, or choose another with --base-image (MCPCTL_DOCKER_BASE_IMAGE for the engine)',
      );
    }
    const pulled = await exists(base);
    if (pulled === undefined) throw new BaseImageError(`the base image ${base} could not be pulled`);
    return pulled;
  }

  async function build(
    tag: string,
    dockerfile: string,
    context: Parameters<typeof tarStream>[0],
    labels: Record<string, string>,
  ): Promise<void> {
    const stream = tarStream([{ name: 'Dockerfile', content: dockerfile }, ...context]);
    const progress = await docker.stream('POST', '/build', {
      query: { t: tag, rm: 1, forcerm: 1, labels: JSON.stringify(labels) },
      stream,
      long: true,
    });
    await readProgress(progress, options.onProgress);
  }

  async function runtimeImage(): Promise<string> {
    const baseId = await baseImageId();
    const fingerprint = await packageFingerprint(packageRoot);
    const hash = createHash('sha256').update(`${baseId}\n${VERSION}\n${fingerprint}`).digest('hex').slice(0, 20);
    const tag = `${RUNTIME_IMAGE_REPOSITORY}:${hash}`;
    return once(tag, async () => {
      if ((await exists(tag)) !== undefined) return tag;
      const packages = await productionPackages(packageRoot);
      const skip = (path: string) =>
        path === '.bin' || path.endsWith('/.bin') || path.split('/').includes('node_modules');
      const dockerfile = [
        `FROM ${options.baseImage}`,
        `COPY mcpctl /opt/mcpctl`,
        `LABEL mcpctl/runtime-version=${JSON.stringify(VERSION)}`,
        '',
      ].join('\n');
      await build(
        tag,
        dockerfile,
        [
          { name: 'mcpctl/package.json', path: join(packageRoot, 'package.json') },
          {
            name: 'mcpctl/dist',
            path: join(packageRoot, 'dist'),
            skip: (path) => path.endsWith('.map') || path.endsWith('.d.ts'),
          },
          ...packages.map((dir) => ({
            name: `mcpctl/${relative(packageRoot, dir).split(sep).join('/')}`,
            path: dir,
            skip,
          })),
        ],
        { 'mcpctl/runtime-version': VERSION },
      );
      return tag;
    });
  }

  return {
    async ensure(bundleDir) {
      const manifest = JSON.parse(await readFile(join(bundleDir, MANIFEST_FILE), 'utf8')) as BundleManifest;
      if (!DIGEST_PATTERN.test(manifest.digest))
        throw new Error(`${bundleDir} is not a bundle: its digest is ${String(manifest.digest)}`);
      const contract = imageContract(manifest.digest);
      return once(contract.image, async () => {
        const from = await runtimeImage();
        // an image of this bundle on an older runtime (another mcpctl) may not take this runtime's command: built again
        if ((await labelsOf(contract.image))?.[RUNTIME_IMAGE_LABEL] === from)
          return { image: contract.image, digest: manifest.digest, contract, built: false };
        const labels = {
          [RUNTIME_IMAGE_LABEL]: from,
          [LABELS.server]: manifest.name,
          [LABELS.bundle]: manifest.digest.slice(0, BUNDLE_LABEL_LENGTH),
          [BUNDLE_DIGEST_ANNOTATION]: manifest.digest,
        };
        const dockerfile = [
          `FROM ${from}`,
          `COPY bundle ${contract.bundleDir}`,
          ...Object.entries(contract.env).map(([name, value]) => `ENV ${name}=${JSON.stringify(value)}`),
          `USER ${contract.user.uid}:${contract.user.gid}`,
          `WORKDIR ${contract.bundleDir}`,
          `EXPOSE ${contract.port}`,
          `CMD ${JSON.stringify(contract.command)}`,
          '',
        ].join('\n');
        await build(contract.image, dockerfile, [{ name: 'bundle', path: bundleDir }], labels);
        return { image: contract.image, digest: manifest.digest, contract, built: true };
      });
    },

    async push(digest, registry, auth) {
      const local = imageName(digest);
      const target = imageName(digest, registry);
      const repository = target.slice(0, target.lastIndexOf(':'));
      await docker.json('POST', `/images/${encodeURIComponent(local)}/tag`, {
        query: { repo: repository, tag: digest },
      });
      const progress = await docker.stream('POST', `/images/${encodeURIComponent(repository)}/push`, {
        query: { tag: digest },
        headers: { 'X-Registry-Auth': auth ?? Buffer.from('{}').toString('base64url') },
        long: true,
      });
      await readProgress(progress, options.onProgress);
      return target;
    },
  };
}

/** `name[:tag]` → [name, tag]; a port in the registry host is not a tag. */
function splitReference(reference: string): [string, string] {
  const at = reference.indexOf('@');
  if (at !== -1) return [reference.slice(0, at), reference.slice(at + 1)];
  const colon = reference.lastIndexOf(':');
  if (colon > reference.lastIndexOf('/')) return [reference.slice(0, colon), reference.slice(colon + 1)];
  return [reference, 'latest'];
}

/** The root of the mcpctl package this module belongs to (it holds package.json and dist/). */
export function defaultPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'dist'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the mcpctl package (package.json with dist/) to put in the image');
    dir = parent;
  }
  return dir;
}

/** What changes when the package does: the size and time of every file of dist/, and package.json. */
async function packageFingerprint(root: string): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (dir: string): Promise<void> => {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        const stats = await stat(path);
        hash.update(`${relative(root, path)} ${stats.size} ${stats.mtimeMs}\n`);
      }
    }
  };
  await walk(join(root, 'dist'));
  hash.update(await readFile(join(root, 'package.json')));
  return hash.digest('hex');
}

/**
 * Dependencies of the package that a server's container never loads: only the engine's kubernetes
 * runner uses the Kubernetes client (about 60 MB), and a container runs the runtime, not the engine.
 */
export const NOT_IN_IMAGES: ReadonlySet<string> = new Set(['@kubernetes/client-node']);

/**
 * The folders of the package's production dependencies, found as Node resolves them (each one's
 * `node_modules`, then its parents'), with their own dependencies, optional ones when installed;
 * not those of NOT_IN_IMAGES (nor what only they need).
 */
export async function productionPackages(root: string): Promise<string[]> {
  const found = new Set<string>();
  const visit = async (
    fromDir: string,
    manifest: { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> },
  ) => {
    const names = [
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.optionalDependencies ?? {}),
    ].filter((name) => fromDir !== root || !NOT_IN_IMAGES.has(name));
    for (const name of names) {
      const dir = resolvePackage(root, fromDir, name);
      if (dir === undefined) continue;
      const real = await realpath(dir);
      if (found.has(real)) continue;
      found.add(real);
      const own = JSON.parse(await readFile(join(real, 'package.json'), 'utf8')) as Parameters<typeof visit>[1];
      await visit(real, own);
    }
  };
  await visit(root, JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as Parameters<typeof visit>[1]);
  return [...found].filter((dir) => dir.startsWith(`${root}${sep}`)).sort();
}

function resolvePackage(root: string, fromDir: string, name: string): string | undefined {
  let dir = fromDir;
  for (;;) {
    const candidate = join(dir, 'node_modules', ...name.split('/'));
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === root || dirname(dir) === dir) return undefined;
    dir = dirname(dir);
  }
}
