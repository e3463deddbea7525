/**
 * The credentials a push to a registry sends (X-Registry-Auth), from the `auths` of the Docker
 * client's config (`docker login` writes them): `$DOCKER_CONFIG/config.json`, else
 * `~/.docker/config.json`. Used by `mcpctl export image --registry` and the kubernetes runner.
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** X-Registry-Auth for the registry's host, when the config has an entry for it. */
export async function registryAuth(
  registry: string,
  env: Record<string, string | undefined> = process.env,
): Promise<string | undefined> {
  const host = registry.split('/')[0]!;
  try {
    const config = JSON.parse(
      await readFile(join(env.DOCKER_CONFIG ?? join(homedir(), '.docker'), 'config.json'), 'utf8'),
    ) as {
      auths?: Record<string, { auth?: string }>;
    };
    const entry = config.auths?.[host] ?? config.auths?.[`https://${host}`];
    if (entry?.auth === undefined) return undefined;
    const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return Buffer.from(
      JSON.stringify({ username: decoded.slice(0, colon), password: decoded.slice(colon + 1), serveraddress: host }),
    ).toString('base64url');
  } catch {
    return undefined;
  }
}
