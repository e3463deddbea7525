/**
 * Runs the CLI in-process through `run()`, with in-memory streams, its own environment and
 * working folder, and collects what it wrote. Nothing touches the real terminal or config.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { run } from '../../src/cli/main.js';
import { tempDir } from './temp.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as the one JSON document it must be */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read the document loosely
  json<T = any>(): T;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** what stdin holds; an empty stream when absent */
  stdin?: string;
  signal?: AbortSignal;
}

/** A stream that keeps what is written to it. */
export function collector(): { stream: PassThrough & { isTTY?: boolean }; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

export async function runCli(argv: string[], options: CliOptions = {}): Promise<CliResult> {
  const stdout = collector();
  const stderr = collector();
  const stdin = Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]);
  const code = await run(argv, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    stdin,
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const out = stdout.text();
  return {
    code,
    stdout: out,
    stderr: stderr.text(),
    json: <T>() => JSON.parse(out) as T,
  };
}

export interface BinResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built binary (`bin/mcpctl.cjs`) as its own process and collects what it wrote. Resolves
 * on 'close', not 'exit': the CLI must not leave its streams to a daemon it started.
 */
export function runBin(
  bin: string,
  args: string[],
  options: { env: Record<string, string | undefined>; cwd: string },
): Promise<BinResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: options.env,
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A temp folder with an environment that points every mcpctl path into it. */
export interface Sandbox {
  dir: string;
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

export async function createSandbox(extra: Record<string, string> = {}): Promise<Sandbox> {
  const { dir, cleanup } = await tempDir('mcpctl-cli-');
  const env: Record<string, string> = {
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_STATE_HOME: join(dir, 'state'),
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    MCPCTL_HOME: join(dir, 'home'),
    MCPCTL_CONFIG: join(dir, 'config', 'mcpctl', 'config.json'),
    PATH: process.env.PATH ?? '',
    ...extra,
  };
  return { dir, env, cleanup };
}

/** A definition with one tool, deploy defaults that use ${WEATHER_TOKEN}, and two test cases. */
export const WEATHER_YAML = `# a definition for the CLI tests
name: weather
template: basic
tools:
  - name: get_forecast
    description: Get the weather forecast for a city
    inputSchema:
      type: object
      properties:
        city:
          type: string
      required: [city]
    handler:
      type: static
      content:
        - type: text
          text: Sunny
resources:
  - uri: notes://today
    name: today
    description: Notes for today
    source:
      type: text
      text: Bring an umbrella
deploy:
  environment: staging
  env_vars:
    API_TOKEN: \${WEATHER_TOKEN}
  environments:
    production:
      scaling:
        min_instances: 2
        max_instances: 4
      env_vars:
        REGION: eu
tests:
  threshold: 0.9
  cases:
    - name: forecast
      message: What is the forecast in Paris? Use get_forecast.
      expect:
        tools: [get_forecast]
        response_contains: [paris]
    - name: notes
      message: Read notes://today please
      user_id: alice
      expect:
        resources: [notes://today]
`;
