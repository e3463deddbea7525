/**
 * The examples every command's `--help` ends with, by command path. Kept beside the specs so a
 * new command without examples fails test/cli/help-examples.unit.test.ts; plain strings, no IO.
 */
import type { CommandUnknownOpts } from '@commander-js/extra-typings';

const EXAMPLES: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  init: [
    ['mcpctl init notes', 'asks for a template and a first tool on a terminal'],
    ['mcpctl init notes --template advanced --yes', 'the defaults, asking nothing (CI)'],
  ],
  validate: [
    ['mcpctl validate', 'the ./server.yaml of this folder'],
    ['mcpctl validate examples/weather', 'a folder means its server.yaml'],
  ],
  dev: [
    ['mcpctl dev', 'serve ./server.yaml on 127.0.0.1, reloading on change'],
    ['mcpctl dev notes/server.yaml --stdio', 'for a client that starts the server itself'],
  ],
  build: [
    ['mcpctl build', 'build ./server.yaml; prints the mcp_… id'],
    ['mcpctl build examples/weather --json', 'the server record, for a script'],
  ],
  deploy: [
    ['mcpctl deploy', 'build and deploy ./server.yaml to its default environment'],
    ['mcpctl deploy examples/weather -e prod', 'production: two instances, behind the gateway'],
    ['mcpctl deploy mcp_4k2j9x7q1m -e stg --env-var API_KEY', 'a built server, passing a variable'],
  ],
  status: [
    ['mcpctl status', 'the deployment of ./server.yaml'],
    ['mcpctl status weather.production --watch', 'by name, until it settles'],
  ],
  ls: [
    ['mcpctl ls', 'servers and deployments, newest first'],
    ['mcpctl ls -e prod --status deployed', 'what runs in production'],
  ],
  logs: [
    ['mcpctl logs weather.prod -f', 'follow; ends when the deployment stops'],
    ['mcpctl logs weather.prod --since 2h --level warn', 'warnings and errors of the last two hours'],
    ["mcpctl logs weather.prod --grep '/timeout|refused/i'", 'lines matching a regular expression'],
  ],
  stop: [['mcpctl stop weather.staging', 'its record and log stay']],
  rm: [
    ['mcpctl rm notes.development', 'a stopped deployment, its log and metrics; asks on a terminal'],
    ['mcpctl rm deploy_7hx2k9q4mz mcp_4k2j9x7q1m --yes', 'a deployment and a build, asking nothing (CI)'],
  ],
  rollback: [['mcpctl rollback weather.production', 'back to the previous build and configuration']],
  metrics: [
    ['mcpctl metrics weather.prod', 'the last 5 minutes, with a chart'],
    ['mcpctl metrics weather.prod --since 7d', 'from the kept history'],
  ],
  usage: [['mcpctl usage weather.prod --since 7d', 'calls per tool, client, user and day']],
  alerts: [
    ['mcpctl alerts', 'firing, pending and lately resolved, every deployment'],
    ['mcpctl alerts -d weather.production', 'one deployment'],
  ],
  dashboard: [
    ['mcpctl dashboard', 'open the engine’s page, logged in'],
    ['mcpctl dashboard --no-open', 'print the one-time URL only'],
  ],
  test: [
    ['mcpctl test', 'run the tests: cases of ./server.yaml and check them'],
    ['mcpctl test examples/weather -m "Weather in Berlin?" --expect-tool get_forecast', 'one message'],
    ['mcpctl test mcp_4k2j9x7q1m --junit report.xml', 'a built server, with a report for CI'],
    ['mcpctl test --runs 5 --model mcpctl-local --model local-llm', 'pass rates over 5 runs, per model'],
    ['mcpctl test --compare --fail-on-regression', 'what changed since the last run; fail on a drop'],
  ],
  up: [
    ['mcpctl up -e prod', 'validate, build, test and deploy ./server.yaml'],
    ['mcpctl up examples/weather -q', 'prints the URL alone'],
    ['mcpctl up --runs 3 --fail-on-regression', 'deploy only if no case got worse since the last run'],
  ],
  tools: [
    ['mcpctl tools weather.production', 'a deployment'],
    ['mcpctl tools examples/calculator', 'a definition, served for the command'],
    ['mcpctl tools https://mcp.example.com/mcp -H "Authorization: Bearer $TOKEN"', 'any MCP server'],
  ],
  call: [
    ['mcpctl call weather.prod get_forecast --arg latitude=52.5 --arg longitude=13.4', ''],
    ['mcpctl call examples/calculator evaluate --arg expression="2*(3+4)"', 'a definition, served for the call'],
    ['mcpctl call weather.prod get_forecast --json \'{"latitude":52.5,"longitude":13.4}\'', 'arguments as JSON'],
  ],
  'export kubernetes': [
    ['mcpctl export kubernetes examples/weather -e prod --registry ghcr.io/acme', 'into k8s/weather-production/'],
    ['mcpctl export kubernetes -e stg -o - | kubectl apply -f -', './server.yaml, straight to a cluster'],
    ['mcpctl export kubernetes mcp_4k2j9x7q1m -e dev', 'a built server'],
  ],
  'export image': [
    ['mcpctl export image', 'the image of ./server.yaml'],
    ['mcpctl export image examples/weather --registry ghcr.io/acme', 'build and push the image'],
  ],
  login: [
    ['mcpctl login --api-url https://mcp.example.com', 'asks for the key, hidden'],
    ['echo "$KEY" | mcpctl login --api-url https://mcp.example.com --with-key', 'from stdin (CI)'],
  ],
  logout: [['mcpctl logout', 'forget the key of the current profile']],
  'config show': [['mcpctl config show', 'which service, which profile, and why']],
  'config use': [['mcpctl config use default', 'back to the local engine']],
  'engine start': [['mcpctl engine start', 'start it now (other commands start it when needed)']],
  'engine stop': [['mcpctl engine stop', 'its deployments come back at the next start']],
  'engine status': [['mcpctl engine status --json', 'exit 4 when it does not run']],
  'engine logs': [['mcpctl engine logs -f', 'follow the engine’s own log']],
  'engine reload': [
    ['export OPENAI_API_KEY=… && mcpctl engine reload', 'hand the engine a key; deployments keep running'],
  ],
  models: [
    ['mcpctl models', 'every test model, and why one cannot run'],
    ['mcpctl models --json', 'the same, for a script'],
  ],
  serve: [
    ['mcpctl serve', 'the engine in the foreground, on 127.0.0.1'],
    ['MCPCTL_API_KEY=$(openssl rand -hex 32) mcpctl serve --host 0.0.0.0', 'for a team (a key is required)'],
  ],
};

/** `engine start`, `deploy`: the path of a command below the program. */
export function commandPath(command: CommandUnknownOpts): string {
  const names: string[] = [];
  for (let at: CommandUnknownOpts | null = command; at?.parent; at = at.parent as CommandUnknownOpts | null)
    names.unshift(at.name());
  return names.join(' ');
}

/** The examples of a command path, as its help shows them; undefined when it has none. */
export function examplesOf(path: string): string | undefined {
  const examples = EXAMPLES[path];
  if (examples === undefined) return undefined;
  const width = Math.max(...examples.map(([line]) => line.length));
  const lines = examples.map(([line, note]) =>
    note === '' || line.length > 60
      ? `  ${line}${note === '' ? '' : `\n      # ${note}`}`
      : `  ${line.padEnd(width)}  # ${note}`,
  );
  return `\nExamples:\n${lines.join('\n')}`;
}

/** Adds its examples to every command that has them, at the end of its help. */
export function addExamples(program: CommandUnknownOpts): void {
  const visit = (command: CommandUnknownOpts): void => {
    const text = examplesOf(commandPath(command));
    if (text !== undefined) command.addHelpText('after', text);
    for (const sub of command.commands) visit(sub);
  };
  for (const command of program.commands) visit(command);
}
