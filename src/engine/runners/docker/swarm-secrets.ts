/**
 * A Swarm deployment's values as a Docker secret instead of `Env` (which `docker service inspect`
 * shows, and Swarm keeps in its Raft log in clear): one secret per deployment holding the JSON file
 * the runtime reads with `--values-file`, mounted at SWARM_ENV_FILE (a tmpfs of Swarm's), readable by
 * the container's user only. Secrets carry the labels of their engine, service and deployment; a
 * rollout keeps the secrets of the service's current and previous spec (Swarm's own rollback needs
 * the previous one) and removes older ones; the service's removal removes them all.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ImageContract } from '../../../packaging/image.js';
import { DockerApiError, type DockerClient } from './engine-api.js';

export const SECRET_LABELS = {
  engine: 'mcpctl/engine',
  service: 'mcpctl/swarm-service',
  deployment: 'mcpctl/deployment',
} as const;

/** What a ContainerSpec's Secrets entry names. */
export interface EnvSecret {
  id: string;
  name: string;
}

interface SecretInfo {
  ID: string;
  Spec: { Name: string; Labels?: Record<string, string> };
}

/** Makes the secret of one deployment of `service`. */
export async function createEnvSecret(
  docker: DockerClient,
  labels: { engine: string; service: string; deployment: string },
  env: Record<string, string>,
): Promise<EnvSecret> {
  // names are unique in a swarm: a redeploy of the same deployment (a rollback) gets a new one
  const name = `${labels.service}-env-${createHash('sha256').update(labels.deployment).digest('hex').slice(0, 8)}-${randomBytes(3).toString('hex')}`;
  const { ID } = await docker.json<{ ID: string }>('POST', '/secrets/create', {
    json: {
      Name: name,
      Labels: {
        [SECRET_LABELS.engine]: labels.engine,
        [SECRET_LABELS.service]: labels.service,
        [SECRET_LABELS.deployment]: labels.deployment,
      },
      Data: Buffer.from(JSON.stringify(env), 'utf8').toString('base64'),
    },
  });
  return { id: ID, name };
}

/** The ContainerSpec `Secrets` entry: the file at `target` (a name under /run/secrets), the container user's, 0400. */
export function secretReference(
  secret: EnvSecret,
  target: string,
  user: ImageContract['user'],
): Record<string, unknown> {
  return {
    SecretID: secret.id,
    SecretName: secret.name,
    File: { Name: target, UID: String(user.uid), GID: String(user.gid), Mode: 0o400 },
  };
}

/** The secret IDs a service spec refers to. */
export function referencedSecrets(spec: unknown): string[] {
  const secrets = (spec as { TaskTemplate?: { ContainerSpec?: { Secrets?: { SecretID?: string }[] } } } | undefined)
    ?.TaskTemplate?.ContainerSpec?.Secrets;
  return (secrets ?? []).map((item) => item.SecretID).filter((id): id is string => typeof id === 'string');
}

/** Removes the service's secrets but those in `keep`; one still in use stays (Swarm refuses), and goes with the service. */
export async function removeEnvSecrets(docker: DockerClient, service: string, keep: string[] = []): Promise<void> {
  const secrets = await docker.json<SecretInfo[]>('GET', '/secrets', {
    query: { filters: JSON.stringify({ label: [`${SECRET_LABELS.service}=${service}`] }) },
  });
  for (const secret of secrets) {
    if (keep.includes(secret.ID)) continue;
    try {
      await docker.json('DELETE', `/secrets/${secret.ID}`);
    } catch (error) {
      if (!(error instanceof DockerApiError)) throw error;
    }
  }
}
