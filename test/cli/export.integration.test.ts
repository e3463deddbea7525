/**
 * `mcpctl export kubernetes`: from a definition file and from a server a real engine built (its
 * runtime runs from dist/, so `npx tsc -p tsconfig.build.json` first), to a folder or to stdout,
 * and the errors of bad input with their exit codes.
 */
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../src/engine/engine.js';
import { writeBundle } from '../../src/runtime/host/bundle.js';
import { toBuildRequest } from '../../src/api/build-request.js';
import { loadDefinition } from '../../src/definition/load.js';
import { bundleDigest } from '../../src/packaging/image.js';
import { requireBuilt } from '../support/app.js';
import { createSandbox, runCli, type Sandbox } from '../support/cli.js';
import { startRealEngine } from '../support/engine.js';
import { envelope, startProxy } from '../support/proxy.js';

const API_KEY = 'export-test-key-0123456789abcdef';
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read the manifests loosely
type Loose = any;

const DEFINITION = `name: forecast
version: 2.0.0
template: basic
tools:
  - name: get_forecast
    description: Get the weather forecast for a city
    inputSchema:
      type: object
      properties:
        city: { type: string }
      required: [city]
    handler:
      type: http
      url: https://api.example.com/forecast?city={{args.city}}
      headers:
        Authorization: Bearer \${FORECAST_KEY}
include: [notes.txt]
auth: { type: none }
deploy:
  domain: forecast.example.com
  resources: { memory_mb: 384 }
  env_vars:
    API_TOKEN: \${WEATHER_TOKEN}
    MODE: fast
  environments:
    production:
      scaling:
        min_instances: 2
        max_instances: 5
      resources: { cpus: 1.5 }
      env_vars:
        REGION: eu
    staging:
      domain: staging.forecast.example.com
`;

let sandbox: Sandbox;
let engine: RunningEngine;
let env: Record<string, string>;

beforeAll(async () => {
  requireBuilt();
  sandbox = await createSandbox();
  engine = await startRealEngine(sandbox.env.MCPCTL_HOME!, { apiKey: API_KEY, fast: false });
  env = { ...sandbox.env, MCPCTL_API_URL: engine.url, MCPCTL_API_KEY: API_KEY };
  await writeFile(join(sandbox.dir, 'forecast.yaml'), DEFINITION);
  await writeFile(join(sandbox.dir, 'notes.txt'), 'shipped with the build\n');
});
afterAll(async () => {
  await engine?.close(1000);
  await sandbox?.cleanup();
});

const exportK8s = (args: string[], extraEnv: Record<string, string> = {}) =>
  runCli(['export', 'kubernetes', ...args], { env: { ...env, ...extraEnv }, cwd: sandbox.dir });

async function readManifests(dir: string): Promise<Record<string, Loose>> {
  const out: Record<string, Loose> = {};
  for (const file of await readdir(dir))
    out[file] = parseAllDocuments(await readFile(join(dir, file), 'utf8'))[0]!.toJS();
  return out;
}

describe('mcpctl export kubernetes <file>', () => {
  it('writes one file per object; the image is named by the digest the engine gives the same build', async () => {
    const result = await exportK8s(
      ['forecast.yaml', '--env', 'production', '--registry', 'registry.example.com/team', '--env-var', 'FORECAST_KEY'],
      {
        WEATHER_TOKEN: 'tok-1',
        FORECAST_KEY: 'fk-2',
      },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      '✔ Wrote 9 Kubernetes manifests for forecast (production) to k8s/forecast-production',
    );
    expect(result.stdout).toContain('→ kubectl apply -f k8s/forecast-production');
    const dir = join(sandbox.dir, 'k8s', 'forecast-production');
    const files = await readManifests(dir);
    expect(Object.keys(files).sort()).toEqual([
      'deployment.yaml',
      'horizontalpodautoscaler.yaml',
      'ingress.yaml',
      'networkpolicy.yaml',
      'poddisruptionbudget.yaml',
      'podmonitor.yaml',
      'prometheusrule.yaml',
      'secret.yaml',
      'service.yaml',
    ]);
    expect(files['prometheusrule.yaml'].spec.groups[0].rules).toHaveLength(5);
    // Prometheus scrapes the pods' own /metrics: the PodMonitor selects the Deployment's pods by their port's name
    expect(files['podmonitor.yaml'].spec).toEqual({
      selector: files['deployment.yaml'].spec.selector,
      podMetricsEndpoints: [{ port: 'metrics', path: '/metrics', interval: '30s' }],
    });
    expect(files['networkpolicy.yaml'].spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect((await stat(join(dir, 'secret.yaml'))).mode & 0o777).toBe(0o600);

    // the engine builds the same file to the same digest
    const built = await runCli(['build', 'forecast.yaml', '--json'], { env, cwd: sandbox.dir });
    expect(built.code).toBe(0);
    const digest = built.json().bundle_digest as string;
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    const container = files['deployment.yaml'].spec.template.spec.containers[0];
    expect(container.image).toBe(`registry.example.com/team/mcpctl-server:${digest}`);
    // deploy.resources, with the environment's override merged over it: request and limit
    expect(container.resources).toEqual({
      requests: { cpu: '1500m', memory: '384Mi' },
      limits: { cpu: '1500m', memory: '384Mi' },
    });

    // values: the file's (references resolved from this environment, the override on top), and --env-var
    const data = files['secret.yaml'].data as Record<string, string>;
    expect(Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]))).toEqual({
      API_TOKEN: 'tok-1',
      FORECAST_KEY: 'fk-2',
      MODE: 'fast',
      REGION: 'eu',
    });
    expect(files['horizontalpodautoscaler.yaml'].spec).toMatchObject({ minReplicas: 2, maxReplicas: 5 });
    expect(files['ingress.yaml'].spec.rules[0].host).toBe('forecast.example.com');
  });

  it('never writes a value it was not given: the unset ones are referenced and named with how to supply them', async () => {
    const result = await exportK8s(['forecast.yaml', '--env', 'staging', '--out', 'out/stg']);
    expect(result.code).toBe(0);
    const files = await readManifests(join(sandbox.dir, 'out', 'stg'));
    const data = files['secret.yaml'].data as Record<string, string>;
    expect(Object.keys(data)).toEqual(['MODE']);
    const refs = files['deployment.yaml'].spec.template.spec.containers[0].env.map((e: { name: string }) => e.name);
    expect(refs).toEqual(['NODE_ENV', 'API_TOKEN', 'FORECAST_KEY', 'MODE']);
    expect(result.stdout).toContain('no value for API_TOKEN, FORECAST_KEY');
    expect(result.stdout).toContain('--env-var API_TOKEN --env-var FORECAST_KEY');
    // a Secret is written: creating one by hand would be replaced by it, so that is not offered
    expect(result.stdout).not.toContain('kubectl create secret');
    expect(files['ingress.yaml'].spec.rules[0].host).toBe('staging.forecast.example.com');
    expect(files).not.toHaveProperty('horizontalpodautoscaler.yaml');
  });

  it('a folder written again keeps nothing stale', async () => {
    await mkdir(join(sandbox.dir, 'again'), { recursive: true });
    await writeFile(join(sandbox.dir, 'again', 'mine.txt'), 'not ours');
    expect((await exportK8s(['forecast.yaml', '--env', 'production', '--out', 'again'])).code).toBe(0);
    expect(await readdir(join(sandbox.dir, 'again'))).toContain('ingress.yaml');
    const second = await exportK8s(['forecast.yaml', '--env', 'development', '--out', 'again', '--json'], {
      WEATHER_TOKEN: 't',
      FORECAST_KEY: 'k',
    });
    expect(second.code).toBe(0);
    const doc = second.json();
    expect(doc.removed.map((f: string) => f.split('/').at(-1)).sort()).toEqual([
      'horizontalpodautoscaler.yaml',
      'poddisruptionbudget.yaml',
      'prometheusrule.yaml',
    ]);
    expect((await readdir(join(sandbox.dir, 'again'))).sort()).toEqual([
      'deployment.yaml',
      'ingress.yaml',
      'mine.txt',
      'networkpolicy.yaml',
      'podmonitor.yaml',
      'secret.yaml',
      'service.yaml',
    ]);
    expect(doc.replicas).toEqual({ min: 1, max: 1 });
  });

  it('--out - writes one YAML stream to stdout; with --json a List', async () => {
    const yaml = await exportK8s(['forecast.yaml', '--env', 'production', '--out', '-', '--namespace', 'mcp'], {
      WEATHER_TOKEN: 't',
      FORECAST_KEY: 'k',
    });
    expect(yaml.code).toBe(0);
    const docs = parseAllDocuments(yaml.stdout).map(
      (d) => d.toJS() as { kind: string; metadata: { namespace: string } },
    );
    expect(docs.map((d) => d.kind)).toEqual([
      'Secret',
      'Service',
      'Deployment',
      'PodDisruptionBudget',
      'HorizontalPodAutoscaler',
      'Ingress',
      'NetworkPolicy',
      'PodMonitor',
      'PrometheusRule',
    ]);
    expect(docs.every((d) => d.metadata.namespace === 'mcp')).toBe(true);
    const json = await exportK8s(['forecast.yaml', '--env', 'production', '--out', '-', '--json'], {
      WEATHER_TOKEN: 't',
      FORECAST_KEY: 'k',
    });
    expect(json.code).toBe(0);
    expect(json.json()).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    expect(json.json().items).toHaveLength(9);
  });

  it('the digest is the engine’s: the bundle the engine writes for the request has it', async () => {
    const loaded = await loadDefinition(join(sandbox.dir, 'forecast.yaml'));
    const request = await toBuildRequest(loaded);
    const { digest } = await writeBundle(request, join(sandbox.dir, 'bundles'));
    expect(bundleDigest(request)).toBe(digest);
  });
});

describe('mcpctl export kubernetes <mcp_id>', () => {
  it('exports a server the engine built, its settings from the flags', async () => {
    const built = await runCli(['build', 'forecast.yaml', '--json'], { env, cwd: sandbox.dir });
    const server = built.json();
    const result = await exportK8s([
      server.mcp_id,
      '--env',
      'production',
      '--domain',
      'f.example.com',
      '--max-instances',
      '3',
      '--out',
      '-',
      '--json',
    ]);
    expect(result.code).toBe(0);
    const items = result.json().items as Array<{ kind: string; spec: Loose }>;
    expect(items.map((i) => i.kind)).toEqual([
      'Service',
      'Deployment',
      'PodDisruptionBudget',
      'HorizontalPodAutoscaler',
      'Ingress',
      'NetworkPolicy',
      'PodMonitor',
      'PrometheusRule',
    ]);
    expect(items[1]!.spec.template.spec.containers[0].image).toBe(`mcpctl-server:${server.bundle_digest}`);
    // the variable the server needs is referenced even though no value was given
    expect(items[1]!.spec.template.spec.containers[0].env.map((e: { name: string }) => e.name)).toEqual([
      'NODE_ENV',
      'FORECAST_KEY',
    ]);
    expect(items[3]!.spec).toMatchObject({ minReplicas: 2, maxReplicas: 3 });
    expect(result.stderr).toContain('--env-var FORECAST_KEY');
    expect(result.stderr).toContain(
      'kubectl create secret generic forecast-production-env --from-literal=FORECAST_KEY=…',
    );
  });

  it('a service that does not say the bundle of a build: exit 3, and export from the file instead', async () => {
    const service = await startProxy(engine.url);
    try {
      const serviceEnv = { ...env, MCPCTL_API_URL: service.url };
      const built = await runCli(['build', 'forecast.yaml', '--json'], { env: serviceEnv, cwd: sandbox.dir });
      expect(built.code).toBe(0);
      // the server as a service that keeps no bundles answers it: without bundle_digest
      const { bundle_digest: _digest, ...server } = built.json();
      service.inject({
        method: 'GET',
        path: `/v1/servers/${server.mcp_id}`,
        fault: { type: 'raw', status: 200, body: envelope(server) },
      });
      const result = await runCli(['export', 'kubernetes', built.json().mcp_id, '--env', 'production'], {
        env: serviceEnv,
        cwd: sandbox.dir,
      });
      expect(result.code).toBe(3);
      expect(result.stderr).toContain('does not say which bundle');
      expect(result.stderr).toContain('mcpctl export kubernetes <file> --env production');
    } finally {
      await service.close();
    }
  });

  it('an unknown id is a usage error from the service', async () => {
    const result = await exportK8s(['mcp_doesnotexist', '--env', 'production']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('mcp_doesnotexist');
  });
});

describe('mcpctl export kubernetes: bad input', () => {
  it('an unknown or missing environment is a usage error', async () => {
    // prod, stg and dev are names of environments too; qa is none
    const unknown = await exportK8s(['forecast.yaml', '--env', 'qa']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/must be production \(prod\), staging \(stg\) or development \(dev\)/);
    const missing = await exportK8s(['forecast.yaml']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--env <environment>.*not specified/);
  });

  it('an issuer without a domain says the Ingress needs one', async () => {
    await writeFile(
      join(sandbox.dir, 'plain.yaml'),
      'name: plain\ntemplate: basic\nresources:\n  - uri: notes://a\n    name: a\n    description: A note\n',
    );
    const result = await exportK8s(['plain.yaml', '--env', 'production', '--issuer', 'letsencrypt-prod', '--json']);
    expect(result.code).toBe(2);
    const error = result.json().error;
    expect(error.problems).toEqual([
      {
        path: '--issuer',
        message: 'a certificate issuer needs a domain: the Ingress and its certificate are for the domain',
      },
    ]);
    // without a domain and without the flag: valid, and said plainly
    const plain = await exportK8s(['plain.yaml', '--env', 'production']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('no domain: no Ingress');
  });

  it('scaling the environment does not allow is reported where the file sets it', async () => {
    await writeFile(
      join(sandbox.dir, 'wide.yaml'),
      'name: wide\ntemplate: basic\nresources:\n  - uri: notes://a\n    name: a\n    description: A note\ndeploy:\n  scaling:\n    max_instances: 3\n',
    );
    const result = await exportK8s(['wide.yaml', '--env', 'development']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('wide.yaml:9:20');
    expect(result.stderr).toContain('must be exactly 1 in development (got 3)');
  });

  it('takes a folder for its server.yaml, and nothing for ./server.yaml (seen: a folder was refused)', async () => {
    const folder = join(sandbox.dir, 'pkg');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'server.yaml'), DEFINITION.replace('include: [notes.txt]\n', ''));
    const fromFolder = await exportK8s(['pkg', '--env', 'development', '-o', '-']);
    expect(fromFolder.code).toBe(0);
    expect(fromFolder.stdout).toContain('# mcpctl export kubernetes pkg/server.yaml --env development');

    const here = await runCli(['export', 'kubernetes', '--env', 'development', '-o', '-'], { env, cwd: folder });
    expect(here.code).toBe(0);
    expect(here.stderr).toContain('using server.yaml');
    expect(here.stdout).toContain('# mcpctl export kubernetes server.yaml --env development');
    // the same definition, whichever way it was named
    expect(here.stdout.replace(/^#.*\n/gm, '')).toBe(fromFolder.stdout.replace(/^#.*\n/gm, ''));

    await mkdir(join(sandbox.dir, 'empty'), { recursive: true });
    const empty = await runCli(['export', 'kubernetes', '--env', 'development'], {
      env,
      cwd: join(sandbox.dir, 'empty'),
    });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('there is no server.yaml in this folder');
  });

  it('a bad registry, an unset --env-var and an invalid definition each get their exit code', async () => {
    const registry = await exportK8s(['forecast.yaml', '--env', 'production', '--registry', 'https://ghcr.io/acme']);
    expect(registry.code).toBe(2);
    expect(registry.stderr).toContain('without a scheme');
    const unset = await exportK8s(['forecast.yaml', '--env', 'production', '--env-var', 'NOT_SET_ANYWHERE']);
    expect(unset.code).toBe(3);
    expect(unset.stderr).toContain('NOT_SET_ANYWHERE');
    await writeFile(join(sandbox.dir, 'broken.yaml'), 'name: broken\ntemplate: nope\n');
    const broken = await exportK8s(['broken.yaml', '--env', 'production']);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('broken.yaml:2:11');
  });
});
