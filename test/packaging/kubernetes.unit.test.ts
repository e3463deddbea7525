/**
 * The Kubernetes objects of a server: every one valid against the Kubernetes API schemas
 * (kubernetes-models), and shaped by the environment and the deploy settings.
 */
import { parse } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/shared/errors.js';
import { checkRegistry, imageContract, imageName } from '../../src/packaging/image.js';
import {
  kubernetesManifests,
  kubernetesName,
  type KubernetesExportOptions,
  type KubernetesObject,
} from '../../src/packaging/kubernetes-manifests.js';
import { DEFAULT_RESOURCES, kubernetesResources } from '../../src/packaging/kubernetes-objects.js';
import { toYamlStream } from '../../src/packaging/write-objects.js';

const DIGEST = 'a'.repeat(20) + '0123456789abcdef'.repeat(2) + 'b'.repeat(12);
const SERVER = { name: 'weather', version: '1.2.0', digest: DIGEST };

const MODELS = {
  Secret,
  PersistentVolumeClaim,
  Service,
  Deployment,
  PodDisruptionBudget,
  HorizontalPodAutoscaler,
  Ingress,
  NetworkPolicy,
} as const;

/** Validates an object against the schema of its kind; throws with the failing field otherwise. */
function validate(object: KubernetesObject): void {
  const Model = MODELS[object.kind];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each class takes its own kind
  new (Model as any)(object).validate();
}

function manifests(options: Partial<KubernetesExportOptions> & Pick<KubernetesExportOptions, 'environment'>) {
  return kubernetesManifests(SERVER, options);
}
function byKind<K extends KubernetesObject['kind']>(
  objects: KubernetesObject[],
  kind: K,
): Extract<KubernetesObject, { kind: K }> | undefined {
  return objects.find((o) => o.kind === kind) as Extract<KubernetesObject, { kind: K }> | undefined;
}
function problemsOf(fn: () => unknown): Array<{ path?: string; message: string }> {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).exitCode).toBe(2);
    return (error as UserError).problems;
  }
  throw new Error('expected a UserError');
}

describe('kubernetesManifests', () => {
  it('production with a domain and values: every object, each valid against the Kubernetes schemas', () => {
    const result = manifests({
      environment: 'production',
      domain: 'mcp.example.com',
      scaling: { min_instances: 3, max_instances: 9 },
      envValues: { WEATHER_TOKEN: 's3cret' },
      registry: 'registry.example.com:5000/team',
      issuer: 'letsencrypt-staging',
      namespace: 'mcp',
    });
    expect(result.objects.map((o) => o.kind)).toEqual([
      'Secret',
      'Service',
      'Deployment',
      'PodDisruptionBudget',
      'HorizontalPodAutoscaler',
      'Ingress',
      'NetworkPolicy',
    ]);
    for (const object of result.objects) validate(object);
    for (const object of result.objects) {
      expect(object.metadata?.namespace).toBe('mcp');
      expect(object.metadata?.labels).toMatchObject({
        'mcpctl/server': 'weather',
        'mcpctl/environment': 'production',
        'mcpctl/bundle': DIGEST.slice(0, 16),
      });
      expect(object.metadata?.annotations?.['mcpctl/bundle-digest']).toBe(DIGEST);
    }
    expect(result.name).toBe('weather-production');
    expect(result.replicas).toEqual({ min: 3, max: 9 });
  });

  it('the validator is not a rubber stamp: a broken object fails it', () => {
    const deployment = byKind(manifests({ environment: 'production' }).objects, 'Deployment')!;
    const broken = structuredClone(deployment);
    (broken.spec!.template.spec!.containers[0]!.ports![0] as { containerPort: unknown }).containerPort = 'http';
    expect(() => validate(broken)).toThrow(/containerPort/);
  });

  it('the Deployment runs the image contract: probes on /health, resources, a locked-down container', () => {
    const result = manifests({ environment: 'production', registry: 'ghcr.io/acme' });
    const deployment = byKind(result.objects, 'Deployment')!;
    const pod = deployment.spec!.template.spec!;
    const container = pod.containers[0]!;
    const contract = imageContract(DIGEST, { registry: 'ghcr.io/acme' });
    expect(container.image).toBe(`ghcr.io/acme/mcpctl-server:${DIGEST}`);
    expect(container.command).toEqual(contract.command);
    expect(container.ports).toEqual([
      { name: 'http', containerPort: contract.port, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9464, protocol: 'TCP' },
    ]);
    // no engine stands in front of it on a cluster: the runtime counts its own requests (PodMonitor)
    expect(container.args).toEqual(['--metrics-port', '9464', '--environment', 'production']);
    for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe]) {
      expect(probe?.httpGet).toEqual({ path: '/health', port: 'http' });
    }
    expect(container.resources).toEqual({
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '500m', memory: '256Mi' },
    });
    expect(container.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: contract.user.uid,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.automountServiceAccountToken).toBe(false);
    // a rollout never goes below the wanted count of ready instances
    expect(deployment.spec!.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
    });
    // the selector never holds what changes with a build
    expect(Object.keys(deployment.spec!.selector.matchLabels!)).toEqual([
      'app.kubernetes.io/name',
      'app.kubernetes.io/instance',
    ]);
    expect(deployment.spec!.template.metadata!.labels!['mcpctl/bundle']).toBe(DIGEST.slice(0, 16));
  });

  it('resources: deploy.resources sets the request and the limit of what it gives; the rest keeps the defaults', () => {
    const container = (options: Partial<KubernetesExportOptions>) =>
      byKind(manifests({ environment: 'staging', ...options }).objects, 'Deployment')!.spec!.template.spec!
        .containers[0]!;
    expect(container({ resources: { memory_mb: 512, cpus: 1.5 } }).resources).toEqual({
      requests: { cpu: '1500m', memory: '512Mi' },
      limits: { cpu: '1500m', memory: '512Mi' },
    });
    expect(container({ resources: { memory_mb: 1024 } }).resources).toEqual({
      requests: { cpu: '100m', memory: '1024Mi' },
      limits: { cpu: '500m', memory: '1024Mi' },
    });
    expect(container({ resources: { cpus: 0.25 } }).resources).toEqual({
      requests: { cpu: '250m', memory: '128Mi' },
      limits: { cpu: '250m', memory: '256Mi' },
    });
    expect(container({ resources: {} }).resources).toEqual(DEFAULT_RESOURCES);
    expect(kubernetesResources({ cpus: 0.0001 })).toMatchObject({ limits: { cpu: '1m' } });
    // the defaults are never changed by a call that overrides them
    expect(kubernetesResources(undefined)).toEqual({
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '500m', memory: '256Mi' },
    });
    for (const object of manifests({ environment: 'production', resources: { memory_mb: 300, cpus: 2 } }).objects)
      validate(object);
    expect(
      problemsOf(() => manifests({ environment: 'production', resources: { memory_mb: 8, cpus: -1 } })).map(
        (p) => p.path,
      ),
    ).toEqual(['config.resources.memory_mb', 'config.resources.cpus']);
  });

  it('for the engine: another base name, more labels (not in the selector) and a progress deadline', () => {
    const result = manifests({
      environment: 'production',
      domain: 'mcp.example.com',
      envValues: { K: 'v' },
      name: 'weather-3k9x2m4q1c',
      extraLabels: { 'mcpctl/engine': 'e-0123456789abcdef', 'mcpctl/deployment': 'deploy_3k9x2m4q1c' },
      progressDeadlineSeconds: 90,
    });
    for (const object of result.objects) {
      validate(object);
      expect(object.metadata!.name!.startsWith('weather-3k9x2m4q1c')).toBe(true);
      expect(object.metadata!.labels).toMatchObject({
        'mcpctl/engine': 'e-0123456789abcdef',
        'mcpctl/deployment': 'deploy_3k9x2m4q1c',
      });
    }
    const deployment = byKind(result.objects, 'Deployment')!;
    expect(deployment.spec!.progressDeadlineSeconds).toBe(90);
    expect(deployment.spec!.template.metadata!.labels!['mcpctl/deployment']).toBe('deploy_3k9x2m4q1c');
    expect(deployment.spec!.selector.matchLabels).toEqual({
      'app.kubernetes.io/name': 'weather',
      'app.kubernetes.io/instance': 'weather-3k9x2m4q1c',
    });
    // the export sets none of these
    const plain = byKind(manifests({ environment: 'production' }).objects, 'Deployment')!;
    expect(plain.spec!.progressDeadlineSeconds).toBeUndefined();
    expect(
      problemsOf(() =>
        manifests({
          environment: 'production',
          name: 'Bad_Name',
          extraLabels: { 'bad key!': 'x' },
          progressDeadlineSeconds: 0,
        }),
      ).map((p) => p.path),
    ).toEqual(['name', 'labels.bad key!', 'progressDeadlineSeconds']);
  });

  it('every object the issue asks for, each from its setting (a missing one fails here)', () => {
    const result = manifests({
      environment: 'production',
      domain: 'mcp.example.com',
      scaling: { min_instances: 2, max_instances: 5 },
      envValues: { TOKEN: 't' },
      resources: { memory_mb: 384, cpus: 0.75 },
      issuer: 'my-issuer',
    });
    const deployment = byKind(result.objects, 'Deployment')!;
    const container = deployment.spec!.template.spec!.containers[0]!;
    expect(container.readinessProbe?.httpGet?.path).toBe('/health');
    expect(container.livenessProbe?.httpGet?.path).toBe('/health');
    expect(container.resources?.limits).toEqual({ cpu: '750m', memory: '384Mi' });
    expect(container.securityContext?.readOnlyRootFilesystem).toBe(true);
    expect(byKind(result.objects, 'Service')!.spec!.ports![0]!.targetPort).toBe('http');
    expect(byKind(result.objects, 'HorizontalPodAutoscaler')!.spec).toMatchObject({ minReplicas: 2, maxReplicas: 5 });
    const ingress = byKind(result.objects, 'Ingress')!;
    expect(ingress.metadata!.annotations!['cert-manager.io/cluster-issuer']).toBe('my-issuer');
    expect(ingress.spec!.tls![0]!.hosts).toEqual(['mcp.example.com']);
    expect(Object.keys(byKind(result.objects, 'Secret')!.data!)).toEqual(['TOKEN']);
    expect(byKind(result.objects, 'PodDisruptionBudget')!.spec!.maxUnavailable).toBe(1);
    expect(deployment.spec!.template.spec!.topologySpreadConstraints!.map((c) => c.topologyKey)).toContain(
      'topology.kubernetes.io/region',
    );
  });

  it('scaling: the HPA takes min and max from the deploy settings, and the Deployment leaves replicas to it', () => {
    const result = manifests({
      environment: 'production',
      scaling: { min_instances: 2, max_instances: 6 },
      targetCpuUtilization: 55,
    });
    const hpa = byKind(result.objects, 'HorizontalPodAutoscaler')!;
    expect(hpa.spec).toMatchObject({
      minReplicas: 2,
      maxReplicas: 6,
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'weather-production' },
    });
    expect(hpa.spec!.metrics![0]!.resource).toEqual({
      name: 'cpu',
      target: { type: 'Utilization', averageUtilization: 55 },
    });
    expect(byKind(result.objects, 'Deployment')!.spec!.replicas).toBeUndefined();
    expect(byKind(result.objects, 'PodDisruptionBudget')!.spec).toMatchObject({ maxUnavailable: 1 });
  });

  it('scaling: a fixed count has no HPA and sets replicas; the environment defaults apply', () => {
    const fixed = manifests({ environment: 'production', scaling: { min_instances: 3, max_instances: 3 } });
    expect(byKind(fixed.objects, 'HorizontalPodAutoscaler')).toBeUndefined();
    expect(byKind(fixed.objects, 'Deployment')!.spec!.replicas).toBe(3);
    expect(manifests({ environment: 'production' }).replicas).toEqual({ min: 2, max: 4 });
    // a larger min alone pulls max along, as on the engine
    expect(manifests({ environment: 'production', scaling: { min_instances: 6 } }).replicas).toEqual({
      min: 6,
      max: 6,
    });
    const dev = manifests({ environment: 'development' });
    expect(dev.replicas).toEqual({ min: 1, max: 1 });
    expect(dev.objects.map((o) => o.kind)).toEqual(['Service', 'Deployment', 'NetworkPolicy']);
    expect(byKind(dev.objects, 'Deployment')!.spec!.replicas).toBe(1);
    // development logs every request, as on the engine
    expect(byKind(dev.objects, 'Deployment')!.spec!.template.spec!.containers[0]!.command).toContain('debug');
    const staging = manifests({ environment: 'staging', scaling: { max_instances: 2 } });
    expect(staging.objects.map((o) => o.kind)).toEqual([
      'Service',
      'Deployment',
      'HorizontalPodAutoscaler',
      'NetworkPolicy',
    ]);
    for (const object of [...dev.objects, ...staging.objects, ...fixed.objects]) validate(object);
  });

  it('spread: instances spread over regions (and nodes) only when there can be more than one', () => {
    const spread = byKind(manifests({ environment: 'production' }).objects, 'Deployment')!.spec!.template.spec!
      .topologySpreadConstraints!;
    expect(spread.map((c) => c.topologyKey)).toEqual(['topology.kubernetes.io/region', 'kubernetes.io/hostname']);
    for (const constraint of spread) {
      expect(constraint).toMatchObject({
        maxSkew: 1,
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: { 'app.kubernetes.io/instance': 'weather-production' } },
      });
    }
    expect(
      byKind(manifests({ environment: 'development' }).objects, 'Deployment')!.spec!.template.spec!
        .topologySpreadConstraints,
    ).toBeUndefined();
    expect(
      byKind(manifests({ environment: 'staging', scaling: { max_instances: 2 } }).objects, 'Deployment')!.spec!.template
        .spec!.topologySpreadConstraints,
    ).toHaveLength(2);
  });

  it('ingress: the domain with TLS from cert-manager, issuer configurable; none without a domain', () => {
    const ingress = byKind(
      manifests({ environment: 'production', domain: 'MCP.Example.com', ingressClass: 'nginx' }).objects,
      'Ingress',
    )!;
    expect(ingress.metadata!.annotations!['cert-manager.io/cluster-issuer']).toBe('letsencrypt-prod');
    expect(ingress.spec!.ingressClassName).toBe('nginx');
    expect(ingress.spec!.tls).toEqual([{ hosts: ['mcp.example.com'], secretName: 'weather-production-tls' }]);
    expect(ingress.spec!.rules![0]).toEqual({
      host: 'mcp.example.com',
      http: {
        paths: [
          {
            path: '/',
            pathType: 'Prefix',
            backend: { service: { name: 'weather-production', port: { name: 'http' } } },
          },
        ],
      },
    });
    const custom = byKind(
      manifests({ environment: 'staging', domain: 'stg.example.com', issuer: 'internal-ca' }).objects,
      'Ingress',
    )!;
    expect(custom.metadata!.annotations!['cert-manager.io/cluster-issuer']).toBe('internal-ca');
    const none = manifests({ environment: 'production' });
    expect(byKind(none.objects, 'Ingress')).toBeUndefined();
    expect(none.notices.join('\n')).toContain('no domain: no Ingress');
  });

  describe('auth', () => {
    const containerEnv = (result: ReturnType<typeof manifests>) =>
      byKind(result.objects, 'Deployment')!.spec!.template.spec!.containers[0]!.env!;
    const refusal = (fn: () => unknown): UserError => {
      try {
        fn();
      } catch (error) {
        expect(error).toBeInstanceOf(UserError);
        return error as UserError;
      }
      throw new Error('expected a UserError');
    };

    it('an Ingress for a server without auth is refused (exit 2), saying how to add it', () => {
      const error = refusal(() => manifests({ environment: 'production', domain: 'mcp.example.com', auth: 'missing' }));
      expect(error.exitCode).toBe(2);
      expect(error.code).toBe('validation_failed');
      expect(error.message).toBe(
        'weather has no auth, and its Ingress would let anyone who reaches mcp.example.com call it',
      );
      expect(error.problems).toEqual([
        { path: 'auth', message: 'a server reachable at a domain must say who may call it' },
      ]);
      expect(error.hint).toContain('auth: { type: oauth, issuer, scopes }');
      expect(error.hint).toContain('docs/auth.md');
      expect(error.hint).toContain('auth: { type: none } to expose it on purpose');
      // without a domain nothing is exposed: no refusal, and nothing public to say
      const inside = manifests({ environment: 'production', auth: 'missing' });
      expect(byKind(inside.objects, 'Ingress')).toBeUndefined();
      expect(inside.notices.join('\n')).not.toContain('public');
    });

    it('auth: none exports the Ingress, and says it is public', () => {
      const result = manifests({ environment: 'production', domain: 'MCP.example.com', auth: 'none' });
      expect(byKind(result.objects, 'Ingress')).toBeDefined();
      expect(result.notices).toContain('public: anyone who reaches mcp.example.com can call it (auth: none)');
      expect(containerEnv(result).map((e) => e.name)).not.toContain('MCPCTL_AUTH_AUDIENCES');
    });

    it('oauth with a domain: the container accepts tokens for the MCP URL the Ingress serves', () => {
      const result = manifests({
        environment: 'production',
        domain: 'Notes.example.com',
        auth: 'oauth',
        envValues: { K: 'v' },
      });
      for (const object of result.objects) validate(object);
      expect(containerEnv(result)).toContainEqual({
        name: 'MCPCTL_AUTH_AUDIENCES',
        value: 'https://notes.example.com/mcp',
      });
      expect(result.notices.join('\n')).not.toContain('public');
      // a URL, not a secret: never in the Secret
      expect(Object.keys(byKind(result.objects, 'Secret')!.data!)).toEqual(['K']);
      // no domain: the instance is reached inside the cluster only, at whatever URL the request names
      expect(containerEnv(manifests({ environment: 'production', auth: 'oauth' })).map((e) => e.name)).not.toContain(
        'MCPCTL_AUTH_AUDIENCES',
      );
    });

    it('bearer exports as it is; left out (the engine runner, which checks exposure itself), nothing is checked or added', () => {
      const bearer = manifests({ environment: 'production', domain: 'mcp.example.com', auth: 'bearer' });
      expect(byKind(bearer.objects, 'Ingress')).toBeDefined();
      expect(containerEnv(bearer).map((e) => e.name)).toEqual(['NODE_ENV']);
      const unchecked = manifests({ environment: 'production', domain: 'mcp.example.com' });
      expect(byKind(unchecked.objects, 'Ingress')).toBeDefined();
      expect(unchecked.notices.join('\n')).not.toContain('public');
    });
  });

  it('secret: only the values passed, every variable referenced by the pod, none made up', () => {
    const result = manifests({
      environment: 'production',
      envValues: { B_TOKEN: 'b', A_URL: 'https://x' },
      envWithoutValue: ['C_KEY', 'B_TOKEN'],
    });
    const secret = byKind(result.objects, 'Secret')!;
    expect(secret.data).toEqual({
      A_URL: Buffer.from('https://x').toString('base64'),
      B_TOKEN: Buffer.from('b').toString('base64'),
    });
    expect(secret.stringData).toBeUndefined();
    const env = byKind(result.objects, 'Deployment')!.spec!.template.spec!.containers[0]!.env!;
    expect(env.filter((e) => e.valueFrom !== undefined)).toEqual(
      ['A_URL', 'B_TOKEN', 'C_KEY'].map((key) => ({
        name: key,
        valueFrom: { secretKeyRef: { name: 'weather-production-env', key } },
      })),
    );
    expect(result.envWithoutValue).toEqual(['C_KEY']);
    expect(result.notices.join('\n')).toContain('no value for C_KEY');
    // nothing passed: no Secret at all, and the pods still refer to it
    const empty = manifests({ environment: 'production', envWithoutValue: ['C_KEY'] });
    expect(byKind(empty.objects, 'Secret')).toBeUndefined();
    expect(byKind(empty.objects, 'Deployment')!.spec!.template.spec!.containers[0]!.env!.map((e) => e.name)).toEqual([
      'NODE_ENV',
      'C_KEY',
    ]);
    expect(JSON.stringify(empty.objects)).not.toMatch(/changeme|placeholder/i);
  });

  it('bad settings: every problem named with its field, exit 2', () => {
    expect(problemsOf(() => manifests({ environment: 'development', scaling: { max_instances: 3 } }))).toEqual([
      { path: 'config.scaling.max_instances', message: 'must be exactly 1 in development (got 3)' },
    ]);
    expect(problemsOf(() => manifests({ environment: 'production', scaling: { min_instances: 1 } }))[0]).toEqual({
      path: 'config.scaling.min_instances',
      message: 'must be at least 2 in production (got 1)',
    });
    // scale to zero is the local engine's: the export says what to use instead
    expect(problemsOf(() => manifests({ environment: 'production', scaling: { min_instances: 0 } }))[0]).toEqual({
      path: 'config.scaling.min_instances',
      message: expect.stringMatching(/^must be at least 2 in production \(got 0\); scale to zero .* KEDA/),
    });
    expect(
      problemsOf(() => manifests({ environment: 'production', scaling: { min_instances: 5, max_instances: 3 } }))[0]!
        .path,
    ).toBe('config.scaling.min_instances');
    expect(problemsOf(() => manifests({ environment: 'production', issuer: 'letsencrypt-prod' }))).toEqual([
      {
        path: '--issuer',
        message: 'a certificate issuer needs a domain: the Ingress and its certificate are for the domain',
      },
    ]);
    expect(problemsOf(() => manifests({ environment: 'production', ingressClass: 'nginx' }))[0]!.path).toBe(
      '--ingress-class',
    );
    const many = problemsOf(() =>
      manifests({
        environment: 'production',
        domain: 'https://x.example.com/',
        namespace: 'Team_A',
        issuer: 'Bad Issuer',
      }),
    );
    expect(many.map((p) => p.path)).toEqual(['config.domain', '--issuer', '--namespace']);
    expect(
      problemsOf(() => kubernetesManifests({ ...SERVER, digest: 'abc' }, { environment: 'production' }))[0]!.path,
    ).toBe('digest');
  });

  it('names: DNS labels that fit every derived name; long names stay apart', () => {
    expect(kubernetesName('weather', 'production')).toBe('weather-production');
    expect(kubernetesName('My_Server.v2', 'staging')).toBe('my-server-v2-staging');
    expect(kubernetesName('42things', 'development')).toBe('mcp-42things-development');
    const long1 = kubernetesName(`${'x'.repeat(60)}1`, 'production');
    const long2 = kubernetesName(`${'x'.repeat(60)}2`, 'production');
    expect(long1).not.toBe(long2);
    for (const name of [long1, long2]) {
      expect(name.length).toBeLessThanOrEqual(52);
      expect(`${name}-env`).toMatch(/^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/);
    }
    const odd = kubernetesManifests(
      { name: `Odd.Name_${'y'.repeat(54)}-`, version: '1.0.0+build.7', digest: DIGEST },
      { environment: 'production', domain: 'a.example.com', envValues: { K: 'v' } },
    );
    for (const object of odd.objects) validate(object);
    for (const value of Object.values(odd.objects[0]!.metadata!.labels!))
      expect(value).toMatch(/^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/);
  });

  it('the YAML reads back as the same objects, also for YAML 1.1 readers (kubectl)', async () => {
    const result = manifests({ environment: 'production', domain: 'mcp.example.com', envValues: { FLAG: 'on' } });
    const text = await toYamlStream(result.objects, ['a header']);
    expect(text.startsWith('# a header\n')).toBe(true);
    const documents = text.split(/^---$/m).map((doc) => parse(doc, { version: '1.1' }) as unknown);
    expect(documents).toEqual(JSON.parse(JSON.stringify(result.objects)));
    // "off" would be a boolean to a YAML 1.1 reader: it must be quoted
    expect(text).toContain('nginx.ingress.kubernetes.io/proxy-buffering: "off"');
  });
});

describe('the NetworkPolicy', () => {
  const policyOf = (options: Partial<KubernetesExportOptions>) =>
    byKind(manifests({ environment: 'production', ...options }).objects, 'NetworkPolicy')!;

  it("denies by default: the pods' own selector, both directions, valid against the schema (ATTACK: pods reach anything)", () => {
    const result = manifests({
      environment: 'production',
      domain: 'mcp.example.com',
      auth: 'bearer',
      namespace: 'mcp',
    });
    const policy = byKind(result.objects, 'NetworkPolicy')!;
    validate(policy);
    const deployment = byKind(result.objects, 'Deployment')!;
    expect(policy.metadata).toMatchObject({ name: result.name, namespace: 'mcp' });
    expect(policy.spec!.podSelector).toEqual(deployment.spec!.selector);
    expect(policy.spec!.policyTypes).toEqual(['Ingress', 'Egress']);
    // in: the server's port only, from the Ingress controller's namespace when an Ingress routes to it;
    // its /metrics only from the monitoring namespace (Prometheus)
    expect(policy.spec!.ingress).toEqual([
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }],
        ports: [{ protocol: 'TCP', port: 8080 }],
      },
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
        ports: [{ protocol: 'TCP', port: 9464 }],
      },
    ]);
    expect(result.notices.join(' ')).toContain('ingress-nginx');
    expect(result.notices.join(' ')).toContain('scrape port 9464 (/metrics) from the namespace monitoring only');
    // without an Ingress: the pods of its own namespace
    expect(policyOf({}).spec!.ingress![0]!.from).toEqual([{ podSelector: {} }]);
    expect(
      policyOf({ domain: 'mcp.example.com', auth: 'bearer', ingressNamespace: 'traefik' }).spec!.ingress![0]!.from,
    ).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'traefik' } } }]);
  });

  it('lets out DNS and public addresses, never link-local (metadata), private ranges only as egress allows', () => {
    const [dns, addresses, ...rest] = policyOf({}).spec!.egress!;
    expect(dns).toEqual({
      ports: [
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ],
    });
    const [v4, v6] = addresses!.to!.map((peer) => peer.ipBlock!);
    expect(v4).toEqual({
      cidr: '0.0.0.0/0',
      except: ['169.254.0.0/16', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '127.0.0.0/8'],
    });
    expect(v6).toEqual({ cidr: '::/0', except: ['fe80::/10', 'fc00::/7', '::1/128'] });
    expect(rest).toEqual([]);

    const open = policyOf({ egress: { allow_private: true } });
    validate(open);
    expect(open.spec!.egress![1]!.to!.map((peer) => peer.ipBlock!.except)).toEqual([['169.254.0.0/16'], ['fe80::/10']]);

    const listed = manifests({
      environment: 'production',
      egress: { allow: ['10.0.0.5:5432', '[fd00::1]', 'api.internal:443', '169.254.169.254'] },
    });
    const policy = byKind(listed.objects, 'NetworkPolicy')!;
    validate(policy);
    expect(policy.spec!.egress!.slice(2)).toEqual([
      { to: [{ ipBlock: { cidr: '10.0.0.5/32' } }], ports: [{ protocol: 'TCP', port: 5432 }] },
      { to: [{ ipBlock: { cidr: 'fd00::1/128' } }] },
    ]);
    expect(listed.notices.join(' ')).toContain('egress.allow names api.internal:443');
  });

  it('is left out when asked (the engine reaches the pods from outside the cluster)', () => {
    expect(manifests({ environment: 'production', networkPolicy: false }).objects.map((o) => o.kind)).not.toContain(
      'NetworkPolicy',
    );
  });
});

describe('the image contract', () => {
  it('names the image by the bundle digest, with the registry in front when given', () => {
    expect(imageName(DIGEST)).toBe(`mcpctl-server:${DIGEST}`);
    expect(imageName(DIGEST, 'localhost:5000/')).toBe(`localhost:5000/mcpctl-server:${DIGEST}`);
    expect(() => imageName('latest')).toThrow(/not a bundle digest/);
    const contract = imageContract(DIGEST);
    expect(contract).toMatchObject({
      port: 8080,
      healthPath: '/health',
      mcpPath: '/mcp',
      user: { uid: 10001, gid: 10001 },
    });
    expect(contract.command.slice(0, 4)).toEqual([
      'node',
      '/opt/mcpctl/dist/runtime/serve-bundle.js',
      '--bundle',
      '/srv/mcpctl/bundle',
    ]);
    expect(contract.user.uid).toBeGreaterThan(0);
    // the runtime hides the environment's values (a module error quoting one), as on the process runner
    expect(contract.command).toContain('--env-is-secret');
    expect(contract.command).not.toContain('--values-file');
    expect(imageContract(DIGEST, { envFile: '/run/x.json' }).command.slice(-2)).toEqual([
      '--values-file',
      '/run/x.json',
    ]);
  });

  it('checks a registry', () => {
    for (const good of ['ghcr.io/acme', 'localhost:5000', 'registry.example.com:5000/team/sub', 'docker.io/library'])
      expect(checkRegistry(good)).toBeUndefined();
    expect(checkRegistry('https://ghcr.io/acme')).toMatch(/without a scheme/);
    expect(checkRegistry('ghcr.io/acme:latest')).toMatch(/without a tag/);
    expect(checkRegistry('ghcr.io/Acme')).toMatch(/lower case/);
  });
});
