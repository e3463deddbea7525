/**
 * The client configurations `mcpctl dev` prints, ready to paste: one for a client that starts the
 * server itself (a desktop app), one for a client that connects by URL.
 *
 * A desktop app runs the command with its own PATH and folder, so the command is this very
 * installation: the absolute path of Node and of mcpctl's bin. `npx mcpctl` would ask the registry
 * for whatever package holds that name; it is printed only when this mcpctl came from the registry
 * through npx, whose cache folder is temporary (and then pinned to this version). The `env` names
 * every variable the server needs: a value the developer's environment holds is filled in unless its
 * name says it is a secret, as this output is often pasted into chats and logs; the others are
 * placeholders to replace.
 */
import { join } from 'node:path';
import { isSecretName } from '../../shared/secret-name.js';

/** How a client starts this mcpctl. */
export interface Launcher {
  command: string;
  /** the arguments before `dev --stdio <file>` */
  args: string[];
}

/** This installation's launcher: node and the bin, or `npx -y mcpctl@<version>` from an npx cache. */
export function launcherOf(packageDir: string, execPath: string, version: string): Launcher {
  const parts = packageDir.split(/[\\/]+/);
  if (parts.includes('_npx')) return { command: 'npx', args: ['-y', `mcpctl@${version}`] };
  return { command: execPath, args: [join(packageDir, 'bin', 'mcpctl.cjs')] };
}

/** What the configurations are made from. */
export interface ClientConfigInput {
  name: string;
  definitionFile: string;
  mcpUrl: string;
  launcher: Launcher;
  /** variables the server needs to start */
  needsEnv: readonly string[];
  /** the variables a bearer token comes from, when clients must send one */
  bearerFrom: readonly string[];
  env: Record<string, string | undefined>;
}

export interface ClientConfigs {
  launched: { mcpServers: Record<string, { command: string; args: string[]; env?: Record<string, string> }> };
  byUrl: { mcpServers: Record<string, { type: 'http'; url: string; headers?: Record<string, string> }> };
  /** the variables left as placeholders, for the reader to fill in */
  placeholders: string[];
}

/** A placeholder that says what to put there. */
export function placeholder(name: string): string {
  return `<${name}>`;
}

export function clientConfigs(input: ClientConfigInput): ClientConfigs {
  const placeholders: string[] = [];
  const env: Record<string, string> = {};
  for (const name of input.needsEnv) {
    const value = input.env[name];
    if (value !== undefined && value !== '' && !isSecretName(name)) env[name] = value;
    else {
      env[name] = placeholder(name);
      placeholders.push(name);
    }
  }
  const launched = {
    command: input.launcher.command,
    args: [...input.launcher.args, 'dev', '--stdio', input.definitionFile],
    ...(Object.keys(env).length === 0 ? {} : { env }),
  };
  const [token] = input.bearerFrom;
  const byUrl = {
    type: 'http' as const,
    url: input.mcpUrl,
    ...(token === undefined ? {} : { headers: { Authorization: `Bearer ${placeholder(token)}` } }),
  };
  if (token !== undefined && !placeholders.includes(token)) placeholders.push(token);
  return {
    launched: { mcpServers: { [input.name]: launched } },
    byUrl: { mcpServers: { [input.name]: byUrl } },
    placeholders,
  };
}
