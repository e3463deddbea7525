/**
 * The deployment's values handed to a container as a file instead of environment variables (which
 * `docker inspect` shows, and Swarm keeps in its log): a JSON object of variable names to strings.
 * serve-bundle's `--values-file` loads it into the process environment before the definition is
 * compiled, treats every value as a secret, and deletes the file where it may (a Swarm secret is
 * mounted read-only: it stays, readable by the container's user only).
 */
import { readFileSync, unlinkSync } from 'node:fs';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why the file cannot be used, as a user reads it. */
export class EnvFileError extends Error {
  override readonly name = 'EnvFileError';
}

/** Reads the values, sets them in `env`, removes the file (best effort); resolves with the values. */
export function loadEnvFile(path: string, env: NodeJS.ProcessEnv): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new EnvFileError(
      `the values file ${path} cannot be read (${code ?? (error as Error).message}): the runner that started this container should have placed it there`,
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new EnvFileError(`the values file ${path} must hold a JSON object`);
  const values: string[] = [];
  for (const [name, value] of Object.entries(parsed)) {
    if (!NAME.test(name) || typeof value !== 'string')
      throw new EnvFileError(`the values file ${path} holds ${JSON.stringify(name)}, which is not NAME: "string"`);
    env[name] = value;
    values.push(value);
  }
  try {
    unlinkSync(path);
  } catch {
    // mounted read-only (a Swarm secret): it stays where only this user can read it
  }
  return values;
}
