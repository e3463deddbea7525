/**
 * The image contract: how a built server becomes a container image and how a container of it runs.
 * The Kubernetes manifests, a container runner and an image builder all take these values from here,
 * so an image built by one is started correctly by the others.
 *
 *   <registry>/mcpctl-server:<bundle digest>
 *     /opt/mcpctl/           the mcpctl package with its production dependencies (the runtime)
 *     /srv/mcpctl/bundle/    the bundle of the build (src/runtime/host/bundle.ts), read-only
 *     /var/lib/mcpctl-tasks/ empty, the image user's: where a runner mounts the volume of the
 *                            deployment's tasks (Docker copies its owner to a new volume)
 *     user 10001:10001, no shell needed; listens on 0.0.0.0:8080, /mcp and /health
 *
 * The runtime starts with `--env-is-secret`: every value of its environment is hidden from its logs
 * and from the error texts of tool calls, but for the variables a container has whatever it runs
 * (PATH, HOME, HOSTNAME, NODE_ENV, the base image's NODE_VERSION...: see serve-bundle.ts). A runner
 * that does not hand the deployment's values over as environment (Docker, Swarm: `inspect` would
 * show them) passes `envFile`, a JSON file of them the runtime reads at start (`--values-file`).
 *
 * The tag is the bundle's digest, computed exactly as the engine computes it for a build, so the same
 * definition always names the same image and a changed one never reuses an old tag.
 *
 * Pure: no IO.
 */
import { RUNTIME_NODE_FLAGS } from '../runtime/host/node-flags.js';
import { BuildRequest, type BuildRequestInput } from '../api/contract.js';
import { digestOf } from '../runtime/host/bundle.js';
import { HEALTH_PATH, MCP_PATH } from '../runtime/constants.js';

/** The repository part of every server image. */
export const IMAGE_REPOSITORY = 'mcpctl-server';
/** The runtime base an image builder starts from unless told otherwise (`--base-image`). */
export const DEFAULT_BASE_IMAGE = 'node:20-slim';
/** Where the mcpctl package (its `dist/` and production `node_modules/`) lives in the image. */
export const RUNTIME_DIR = '/opt/mcpctl';
/** Where the bundle lives in the image. */
export const BUNDLE_DIR = '/srv/mcpctl/bundle';
/** The port the server listens on inside its container. */
export const CONTAINER_PORT = 8080;
/** Not root, and not a user any base image defines: owns nothing it could change. */
export const CONTAINER_USER = { uid: 10001, gid: 10001 } as const;
/** How long a stopping server drains in-flight requests; below the 30 s most orchestrators wait before SIGKILL. */
export const DRAIN_SECONDS = 20;
/**
 * Where a runner mounts the folder a deployment's replicas share for the state of their tasks.
 * The image has it empty and owned by its user: Docker gives an empty named volume mounted there
 * that owner on its first mount, so the runtime can write in it with no step of the runner's.
 */
export const TASKS_MOUNT = '/var/lib/mcpctl-tasks';
/** Writable scratch space: the root filesystem is read-only, programs a tool runs may still want a /tmp. */
export const SCRATCH_DIR = '/tmp';
/**
 * The Docker runner's file of the deployment's values: copied into a volume of the container
 * before it starts, in a folder only the container's user can read; the runtime deletes it once read.
 */
export const DOCKER_ENV_DIR = '/run/mcpctl';
export const DOCKER_ENV_FILE = `${DOCKER_ENV_DIR}/env/values.json`;
/** Swarm's: a Docker secret, mounted read-only (tmpfs) where Swarm mounts secrets. */
export const SWARM_ENV_FILE = '/run/secrets/mcpctl-env';

/** Label keys that identify what a workload runs, on every object a target creates. */
export const LABELS = {
  server: 'mcpctl/server',
  environment: 'mcpctl/environment',
  /** the first BUNDLE_LABEL_LENGTH characters of the digest: a label value holds at most 63 */
  bundle: 'mcpctl/bundle',
} as const;
/** The annotation that carries the whole digest. */
export const BUNDLE_DIGEST_ANNOTATION = 'mcpctl/bundle-digest';
export const BUNDLE_LABEL_LENGTH = 16;

export const DIGEST_PATTERN = /^[0-9a-f]{64}$/;
// a registry host (with an optional port) and optional path components, as image references allow
const REGISTRY_PATTERN =
  /^[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::\d{1,5})?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;

export interface ImageContract {
  /** the full reference: `[registry/]mcpctl-server:<digest>` */
  image: string;
  digest: string;
  /** argv of the container's process; `node` is the base image's */
  command: string[];
  port: number;
  healthPath: string;
  mcpPath: string;
  user: { uid: number; gid: number };
  runtimeDir: string;
  bundleDir: string;
  scratchDir: string;
  drainSeconds: number;
  /** variables every container gets besides the deployment's own */
  env: Record<string, string>;
}

export interface ImageOptions {
  /** where the image is pushed and pulled from: `registry.example.com/team` */
  registry?: string;
  /** development logs every MCP request and result (secrets redacted) */
  logLevel?: 'info' | 'debug';
  /** a JSON file of the deployment's values the runtime loads at start (DOCKER_ENV_FILE, SWARM_ENV_FILE) */
  envFile?: string;
}

/** Why a registry cannot prefix an image reference, or undefined when it can. */
export function checkRegistry(registry: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(registry))
    return 'give the registry without a scheme, such as registry.example.com/team';
  const slash = registry.indexOf('/');
  if (registry.includes('@') || (slash !== -1 && registry.slice(slash).includes(':')))
    return 'give the registry without a tag or digest; the tag is the bundle digest';
  if (!REGISTRY_PATTERN.test(registry))
    return 'must be a registry host with an optional port and path, such as registry.example.com:5000/team (paths in lower case)';
  return undefined;
}

/** `[registry/]mcpctl-server:<digest>`. */
export function imageName(digest: string, registry?: string): string {
  if (!DIGEST_PATTERN.test(digest)) throw new Error(`not a bundle digest: ${digest}`);
  const prefix = registry === undefined || registry === '' ? '' : `${registry.replace(/\/+$/, '')}/`;
  return `${prefix}${IMAGE_REPOSITORY}:${digest}`;
}

/** Everything about the image of a bundle: its name, and how a container of it runs. */
export function imageContract(digest: string, options: ImageOptions = {}): ImageContract {
  return {
    image: imageName(digest, options.registry),
    digest,
    command: [
      'node',
      // the same Node options as an instance of the process runner (smaller young generation)
      ...RUNTIME_NODE_FLAGS,
      `${RUNTIME_DIR}/dist/runtime/serve-bundle.js`,
      '--bundle',
      BUNDLE_DIR,
      '--host',
      '0.0.0.0',
      '--port',
      String(CONTAINER_PORT),
      '--log-level',
      options.logLevel ?? 'info',
      '--drain-timeout',
      String(DRAIN_SECONDS),
      // a module error quoting a value shows [redacted], as on the process runner
      '--env-is-secret',
      ...(options.envFile === undefined ? [] : ['--values-file', options.envFile]),
    ],
    port: CONTAINER_PORT,
    healthPath: HEALTH_PATH,
    mcpPath: MCP_PATH,
    user: { ...CONTAINER_USER },
    runtimeDir: RUNTIME_DIR,
    bundleDir: BUNDLE_DIR,
    scratchDir: SCRATCH_DIR,
    drainSeconds: DRAIN_SECONDS,
    env: { NODE_ENV: 'production' },
  };
}

/**
 * The digest of the bundle a build request becomes: the engine's own function on the request as
 * the engine reads it (defaults applied), so it is the digest the engine records for the build.
 */
export function bundleDigest(request: BuildRequestInput): string {
  const { files = {}, ...definition } = BuildRequest.parse(request);
  return digestOf(definition, files);
}
