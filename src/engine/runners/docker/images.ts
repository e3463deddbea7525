/**
 * Server images through the Docker Engine API, as the image contract (src/packaging/image.ts) says:
 *
 *   mcpctl-runtime:<hash>       the base image + this mcpctl package (dist/ and its production
 *                               dependencies) at /opt/mcpctl; built once per base image and package
 *   mcpctl-server:<digest>      FROM the runtime image + the bundle at /srv/mcpctl/bundle, an
 *                               empty /var/lib/mcpctl-tasks of user 10001 (TASKS_MOUNT), user
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
  TASKS_MOUNT,
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
  const builder: Builder = {
    docker: options.docker,
    baseImage: options.baseImage,
    packageRoot: options.packageRoot ?? defaultPackageRoot(),
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    once: onceAtATime(),
  };
  return {
    ensure: (bundleDir) => ensureServerImage(builder, bundleDir),
    push: (digest, registry, auth) => pushImage(builder, digest, registry, auth),
  };
}

/** What every step of a build works with. */
interface Builder {
  docker: DockerClient;
  baseImage: string;
  packageRoot: string;
  onProgress?: (line: string) => void;
  /** runs `work` for `key` unless it runs already; then its promise is shared */
  once: <T>(key: string, work: () => Promise<T>) => Promise<T>;
}

/** Two deployments of one bundle at once build its image once. */
function onceAtATime(): Builder['once'] {
  const inFlight = new Map<string, Promise<unknown>>();
  return <T>(key: string, work: () => Promise<T>): Promise<T> => {
    let pending = inFlight.get(key) as Promise<T> | undefined;
    if (pending === undefined) {
      pending = work().finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    return pending;
  };
}

/** An image's inspection, undefined when there is no such image. */
async function inspectImage(
  docker: DockerClient,
  image: string,
): Promise<{ Id: string; Config?: { Labels?: Record<string, string> | null } } | undefined> {
  try {
    return await docker.json('GET', `/images/${encodeURIComponent(image)}/json`);
  } catch (error) {
    if (error instanceof DockerApiError && error.status === 404) return undefined;
    throw error;
  }
}

/** The id of the base image, pulled first when the host does not have it. */
async function baseImageId({ docker, baseImage, onProgress }: Builder): Promise<string> {
  const id = (await inspectImage(docker, baseImage))?.Id;
  if (id !== undefined) return id;
  const [name, tag] = splitReference(baseImage);
  try {
    await readProgress(
      await docker.stream('POST', '/images/create', { query: { fromImage: name, tag }, long: true }),
      onProgress,
    );
  } catch (error) {
    throw new BaseImageError(
      `the base image ${baseImage} is not on the Docker host and could not be pulled (${(error as Error).message}): ` +
        'pull or load it there, or choose another with --base-image (MCPCTL_DOCKER_BASE_IMAGE for the engine)',
    );
  }
  const pulled = (await inspectImage(docker, baseImage))?.Id;
  if (pulled === undefined) throw new BaseImageError(`the base image ${baseImage} could not be pulled`);
  return pulled;
}

type BuildContext = Parameters<typeof tarStream>[0];

/** A classic `docker build` of a generated Dockerfile and its context. */
async function buildImage(
  { docker, onProgress }: Builder,
  tag: string,
  dockerfile: string,
  context: BuildContext,
  labels: Record<string, string>,
): Promise<void> {
  const stream = tarStream([{ name: 'Dockerfile', content: dockerfile }, ...context]);
  const progress = await docker.stream('POST', '/build', {
    query: { t: tag, rm: 1, forcerm: 1, labels: JSON.stringify(labels) },
    stream,
    long: true,
  });
  await readProgress(progress, onProgress);
}

/** The package's dist/ (no source maps or declarations), package.json and production dependencies. */
async function runtimeBuildContext(packageRoot: string): Promise<BuildContext> {
  const packages = await productionPackages(packageRoot);
  const skip = (path: string) => path === '.bin' || path.endsWith('/.bin') || path.split('/').includes('node_modules');
  return [
    { name: 'mcpctl/package.json', path: join(packageRoot, 'package.json') },
    {
      name: 'mcpctl/dist',
      path: join(packageRoot, 'dist'),
      skip: (path) => path.endsWith('.map') || path.endsWith('.d.ts'),
    },
    ...packages.map((dir) => ({ name: `mcpctl/${relative(packageRoot, dir).split(sep).join('/')}`, path: dir, skip })),
  ];
}

/** The runtime image of this base image and package, built unless it exists; resolves with its tag. */
async function ensureRuntimeImage(builder: Builder): Promise<string> {
  const baseId = await baseImageId(builder);
  const fingerprint = await packageFingerprint(builder.packageRoot);
  const hash = createHash('sha256').update(`${baseId}\n${VERSION}\n${fingerprint}`).digest('hex').slice(0, 20);
  const tag = `${RUNTIME_IMAGE_REPOSITORY}:${hash}`;
  return builder.once(tag, async () => {
    if ((await inspectImage(builder.docker, tag)) !== undefined) return tag;
    const dockerfile = [
      `FROM ${builder.baseImage}`,
      `COPY mcpctl /opt/mcpctl`,
      `LABEL mcpctl/runtime-version=${JSON.stringify(VERSION)}`,
      '',
    ].join('\n');
    const context = await runtimeBuildContext(builder.packageRoot);
    await buildImage(builder, tag, dockerfile, context, { 'mcpctl/runtime-version': VERSION });
    return tag;
  });
}

async function readBundleManifest(bundleDir: string): Promise<BundleManifest> {
  const manifest = JSON.parse(await readFile(join(bundleDir, MANIFEST_FILE), 'utf8')) as BundleManifest;
  if (!DIGEST_PATTERN.test(manifest.digest))
    throw new Error(`${bundleDir} is not a bundle: its digest is ${String(manifest.digest)}`);
  return manifest;
}

/** The server image's Dockerfile: the bundle on the runtime image, run as the image contract says. */
function serverDockerfile(runtimeImage: string, contract: ImageContract): string {
  return [
    `FROM ${runtimeImage}`,
    `COPY bundle ${contract.bundleDir}`,
    // an empty folder of the image's user: a volume mounted there is that user's (task-volume.ts)
    `COPY --chown=${contract.user.uid}:${contract.user.gid} tasks ${TASKS_MOUNT}`,
    ...Object.entries(contract.env).map(([name, value]) => `ENV ${name}=${JSON.stringify(value)}`),
    `USER ${contract.user.uid}:${contract.user.gid}`,
    `WORKDIR ${contract.bundleDir}`,
    `EXPOSE ${contract.port}`,
    `CMD ${JSON.stringify(contract.command)}`,
    '',
  ].join('\n');
}

function serverImageLabels(runtimeImage: string, manifest: BundleManifest): Record<string, string> {
  return {
    [RUNTIME_IMAGE_LABEL]: runtimeImage,
    [LABELS.server]: manifest.name,
    [LABELS.bundle]: manifest.digest.slice(0, BUNDLE_LABEL_LENGTH),
    [BUNDLE_DIGEST_ANNOTATION]: manifest.digest,
  };
}

async function ensureServerImage(builder: Builder, bundleDir: string): Promise<BuiltImage> {
  const manifest = await readBundleManifest(bundleDir);
  const contract = imageContract(manifest.digest);
  return builder.once(contract.image, async () => {
    const from = await ensureRuntimeImage(builder);
    const existing = await inspectImage(builder.docker, contract.image);
    // an image of this bundle on an older runtime (another mcpctl) may not take this runtime's command: built again
    if ((existing?.Config?.Labels ?? {})[RUNTIME_IMAGE_LABEL] === from)
      return { image: contract.image, digest: manifest.digest, contract, built: false };
    const labels = serverImageLabels(from, manifest);
    const context = [
      { name: 'bundle', path: bundleDir },
      { name: 'tasks', folder: true as const },
    ];
    await buildImage(builder, contract.image, serverDockerfile(from, contract), context, labels);
    return { image: contract.image, digest: manifest.digest, contract, built: true };
  });
}

async function pushImage({ docker, onProgress }: Builder, digest: string, registry: string, auth?: string) {
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
  await readProgress(progress, onProgress);
  return target;
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
