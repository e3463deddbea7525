/**
 * What the command definitions of src/cli/specs share: the parsers of numeric flags, the deployment
 * flags of `deploy` and `up`, and the type of the options a definition parses to. Imports commander
 * alone, as the definitions load at every start.
 */
import { InvalidArgumentError, Option, type Command, type OptionValues } from '@commander-js/extra-typings';

export const ENVIRONMENTS = ['production', 'staging', 'development'] as const;
export type EnvironmentName = (typeof ENVIRONMENTS)[number];

const ENVIRONMENT_ALIASES: Record<string, EnvironmentName> = {
  production: 'production',
  prod: 'production',
  staging: 'staging',
  stg: 'staging',
  development: 'development',
  dev: 'development',
};

/** An environment as people type it: its name or `prod`, `stg`, `dev`, in any case; undefined for anything else. */
export function environmentOf(value: string): EnvironmentName | undefined {
  return ENVIRONMENT_ALIASES[value.trim().toLowerCase()];
}

/** The parser of `-e`: an environment's name or short name, in any case. */
export function parseEnvironment(value: string): EnvironmentName {
  const environment = environmentOf(value);
  if (environment === undefined) {
    throw new InvalidArgumentError('must be production (prod), staging (stg) or development (dev)');
  }
  return environment;
}

/** The options a command definition parses to, as its handler receives them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type OptionsOf<C> = C extends Command<any[], infer Options, any> ? Options : never;

export function parseInteger(name: string, min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be a whole number ≥ ${min}`);
    return n;
  };
}

export function parseSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a number of seconds > 0');
  return n;
}

/** A span such as 30m, 1h, 24h or 7d, from 1m to 30d (`since` of the history), kept as written. */
export function parseSpan(value: string): string {
  const match = /^(\d{1,6})(m|h|d)$/.exec(value.trim());
  const minutes = match === null ? 0 : Number(match[1]) * { m: 1, h: 60, d: 1440 }[match[2] as 'm' | 'h' | 'd'];
  if (minutes < 1 || minutes > 30 * 1440) {
    throw new InvalidArgumentError('must be a span such as 30m, 1h, 24h or 7d, from 1m to 30d');
  }
  return value.trim();
}

export function parseRate(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError('must be a number from 0 to 1');
  return n;
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** The options that shape a deployment, shared by `deploy` and `up`. */
export function withDeployOptions<Args extends unknown[], Options extends OptionValues, Globals extends OptionValues>(
  command: Command<Args, Options, Globals>,
) {
  return command
    .addOption(
      new Option(
        '-e, --env <environment>',
        'target environment: production (prod), staging (stg) or development (dev); default: the file’s deploy.environment, else development',
      ).argParser(parseEnvironment),
    )
    .option('--domain <host>', 'custom host name')
    .option(
      '--min-instances <n>',
      'minimum instances; in production 0: none while idle (scale to zero, see --idle-seconds)',
      parseInteger('--min-instances', 0),
    )
    .option('--max-instances <n>', 'maximum instances', parseInteger('--max-instances', 1))
    .option(
      '--idle-seconds <n>',
      'seconds without requests before it holds no instance (the next request starts one); 0: never',
      parseInteger('--idle-seconds', 0),
    )
    .option('--env-var <NAME>', 'pass this variable, with its value from your environment (repeatable)', collect)
    .option('--env-file <file>', 'read NAME=value lines from this file into env_vars')
    .option('--no-wait', 'return once the deployment is accepted; do not wait for it')
    .option('--timeout <seconds>', 'how long to wait for the deployment', parseSeconds, 600);
}
