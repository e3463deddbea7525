/**
 * `mcpctl export kubernetes [file|folder|mcp_id] --env E`: the Kubernetes objects that run a server in an
 * environment, as YAML files in a folder (or one stream on stdout with `--out -`). A folder means its
 * `server.yaml`, nothing means `./server.yaml`.
 *
 * From a file, the server is what `build` would send (its bundle digest names the image) and the
 * settings are the file's `deploy:` section, then the flags, as `deploy` takes them. From an mcp_id,
 * the server is read from the service and the settings are the flags alone.
 *
 * The Secret holds only values the user passed: `--env-var` (from this environment), `--env-file`,
 * and `deploy.env_vars` whose `${VAR}` references this environment resolves. A variable without one
 * is referenced by the pods and named in the output with how to supply it; no value is ever made up.
 *
 * A definition with tools that run as tasks gets a claim for the tasks' state (one ReadWriteMany
 * claim of `--tasks-storage-class` every pod shares; without it, see src/packaging/kubernetes-tasks.ts).
 *
 * An Ingress (a domain) makes the server reachable from anywhere, so it needs the definition to say
 * who may call it (`auth`, docs/auth.md). The service's answer about a build does not hold that: an
 * export from an mcp_id with a domain is refused, and the file is the way.
 */
import { resolve, relative, isAbsolute } from 'node:path';
import { MCP_ID_PATTERN, type DeployConfig, type Environment } from '../../api/operations.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { EXIT, UserError, type Problem } from '../../shared/errors.js';
import { loadDefinitionFile, type DefinitionFile } from '../steps/definition-file.js';
import { chooseDefinition } from '../steps/definition-path.js';
import type { KubernetesExportOptions } from '../../packaging/kubernetes-manifests.js';
import { applyDeployFlags, configFromDefinition, locateDeployField } from '../steps/deploy-config.js';
import type { ExportKubernetesOptions } from '../specs/export.js';

/** What the manifests are made from. */
interface ExportSource {
  server: { name: string; version?: string; digest: string };
  config: DeployConfig;
  /** variables with no value: needed by the server, or listed in deploy.env_vars with an unset reference */
  withoutValue: string[];
  /** who may call the server (the definition's `auth.type`), `missing` when it has none; unknown for a build the service holds */
  auth?: AuthKind;
  /** tools of it run as tasks (a build the service holds: unknown, so only with --tasks-storage-class) */
  tasks: boolean;
  file?: DefinitionFile;
  /** how the source is named in the files' header */
  shown: string;
}

type AuthKind = NonNullable<KubernetesExportOptions['auth']>;

export async function exportKubernetesCommand(
  ctx: CommandContext,
  given: string | undefined,
  options: ExportKubernetesOptions,
): Promise<void> {
  const byId = given !== undefined && MCP_ID_PATTERN.test(given);
  const target = byId ? given : await chooseDefinition(ctx, given);
  const { checkRegistry } = await import('../../packaging/image.js');
  const registryProblem = options.registry === undefined ? undefined : checkRegistry(options.registry);
  if (registryProblem !== undefined) throw new UserError(`--registry ${options.registry}: ${registryProblem}`);

  const source = byId ? await fromBuild(ctx, target, options) : await fromFile(ctx, target, options);
  const { checkKubernetesOptions, kubernetesManifests } = await import('../../packaging/kubernetes-manifests.js');
  const exportOptions = {
    environment: options.env,
    ...(source.config.domain === undefined ? {} : { domain: source.config.domain }),
    ...(source.config.scaling === undefined ? {} : { scaling: source.config.scaling }),
    ...(source.config.resources === undefined ? {} : { resources: source.config.resources }),
    envValues: source.config.env_vars ?? {},
    envWithoutValue: source.withoutValue,
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    ...(options.registry === undefined ? {} : { registry: options.registry }),
    ...(options.issuer === undefined ? {} : { issuer: options.issuer }),
    ...(options.ingressClass === undefined ? {} : { ingressClass: options.ingressClass }),
    ...(source.auth === undefined ? {} : { auth: source.auth }),
    ...(source.tasks
      ? { tasks: options.tasksStorageClass === undefined ? {} : { storageClass: options.tasksStorageClass } }
      : {}),
    // what the NetworkPolicy lets out besides public addresses (a build the service holds: none)
    ...(source.file?.loaded.definition.egress === undefined ? {} : { egress: source.file.loaded.definition.egress }),
  };
  const problems = checkKubernetesOptions(source.server, exportOptions);
  if (problems.length > 0) throw settingsError(problems, source.file, options);
  if (source.auth === undefined && exportOptions.domain !== undefined) {
    // the service's answer about a build does not hold its definition's auth
    throw new UserError(
      `the service does not say who may call ${target} (its auth), so an Ingress for ${exportOptions.domain} cannot be made safely`,
      {
        code: 'validation_failed',
        hint: `export from the definition file instead: mcpctl export kubernetes <file> --env ${options.env}`,
      },
    );
  }
  const result = kubernetesManifests(source.server, exportOptions);
  // the pods' metrics and the alert rules, for Prometheus and Alertmanager on the cluster (the engine's runner applies neither)
  const { podMonitor, prometheusRule } = await import('../../packaging/prometheus-rule.js');
  const labels = result.objects.find((o) => o.kind === 'Service')?.metadata?.labels ?? {};
  const selector = result.objects.find((o) => o.kind === 'Deployment')?.spec?.selector.matchLabels ?? {};
  const monitor = podMonitor({ name: result.name, namespace: options.namespace, selector, labels });
  const alertRule = prometheusRule({
    name: result.name,
    namespace: options.namespace,
    server: source.server.name,
    environment: options.env,
    rules: source.config.alerts,
    labels,
  });
  const objects = [...result.objects, monitor, ...(alertRule === undefined ? [] : [alertRule])];

  const header = [`mcpctl export kubernetes ${source.shown} --env ${options.env}`, `image ${result.image.image}`];
  const secretName = `${result.name}-env`;
  const secretWritten = objects.some((o) => o.kind === 'Secret');
  const missingHint =
    result.envWithoutValue.length === 0
      ? undefined
      : supplyHint(result.envWithoutValue, secretWritten ? undefined : { secretName, namespace: options.namespace });

  if (options.out === '-') {
    const { toYamlStream } = await import('../../packaging/write-objects.js');
    // the manifests are the output: a JSON List with --json (kubectl takes both)
    if (ctx.out.json) ctx.out.writeJson({ apiVersion: 'v1', kind: 'List', items: objects });
    else ctx.out.raw(await toYamlStream(objects, header));
    for (const notice of result.notices) ctx.out.warn(notice);
    if (missingHint !== undefined) ctx.out.notice(missingHint);
    return;
  }

  const dir = resolve(ctx.io.cwd, options.out ?? `k8s/${result.name}`);
  const { writeManifestFolder } = await import('../../packaging/write-objects.js');
  const { written, removed } = await writeManifestFolder(dir, objects, header);
  const shownDir = shownPath(ctx.io.cwd, dir);
  const data = {
    name: result.name,
    environment: options.env,
    image: result.image.image,
    digest: result.image.digest,
    replicas: result.replicas,
    dir,
    files: written,
    removed,
    objects: objects.map((o) => ({ kind: o.kind, name: o.metadata?.name })),
    env_without_value: result.envWithoutValue,
    notices: result.notices,
  };
  ctx.out.result(
    data,
    (p) => {
      p.success(
        `Wrote ${written.length} Kubernetes manifests for ${source.server.name} (${options.env}) to ${shownDir}`,
      );
      p.fields([
        ['objects', objects.map((o) => o.kind).join(', ')],
        ['image', result.image.image],
        [
          'instances',
          result.replicas.min === result.replicas.max
            ? String(result.replicas.min)
            : `${result.replicas.min} to ${result.replicas.max} (autoscaled on CPU)`,
        ],
        ['removed', removed.length === 0 ? undefined : removed.map((f) => shownPath(ctx.io.cwd, f)).join(', ')],
      ]);
      for (const notice of result.notices) p.warn(notice);
      if (missingHint !== undefined) p.next(missingHint);
      p.next(`push the image: see docs/kubernetes.md ("The image")`);
      p.next(`kubectl apply${options.namespace === undefined ? '' : ` -n ${options.namespace}`} -f ${shownDir}`);
    },
    { quiet: () => written.map((f) => shownPath(ctx.io.cwd, f)) },
  );
}

/** The definition as `build` reads it, and its settings as `deploy` takes them. */
async function fromFile(ctx: CommandContext, target: string, options: ExportKubernetesOptions): Promise<ExportSource> {
  const file = await loadDefinitionFile(ctx, target);
  const definition = file.loaded.definition;
  const { toBuildRequest } = await import('../../api/build-request.js');
  const { bundleDigest } = await import('../../packaging/image.js');
  const digest = bundleDigest(await toBuildRequest(file.loaded));

  // deploy.env_vars: a value whose references this environment cannot resolve stays without one
  const flagged = new Set(options.envVar ?? []);
  const listed = { ...definition.deploy?.env_vars, ...definition.deploy?.environments?.[options.env]?.env_vars };
  const { resolveEnvRefs } = await import('../../definition/interpolate.js');
  const { MissingEnvVarError } = await import('../../definition/errors.js');
  const values: Record<string, string> = {};
  const withoutValue: string[] = [];
  for (const [name, raw] of Object.entries(listed)) {
    if (flagged.has(name)) continue;
    const inOverride = definition.deploy?.environments?.[options.env]?.env_vars?.[name] !== undefined;
    try {
      values[name] = resolveEnvRefs(
        raw,
        ctx.io.env,
        inOverride ? `deploy.environments.${options.env}.env_vars.${name}` : `deploy.env_vars.${name}`,
      );
    } catch (error) {
      if (!(error instanceof MissingEnvVarError)) throw error;
      withoutValue.push(name);
    }
  }
  const defaults = definition.deploy === undefined ? undefined : withoutEnvVars(definition.deploy, options.env);
  const fromDefinition = await configFromDefinition(defaults, options.env, ctx.io.env);
  const config = await applyDeployFlags(
    { ...fromDefinition, ...(Object.keys(values).length === 0 ? {} : { env_vars: values }) },
    options,
    ctx.io,
  );
  const { requiredEnvVars } = await import('../../definition/check.js');
  const required = requiredEnvVars(definition).map((v) => v.name);
  return {
    server: {
      name: definition.name,
      ...(definition.version === undefined ? {} : { version: definition.version }),
      digest,
    },
    config,
    withoutValue: [...withoutValue, ...required].filter((name) => config.env_vars?.[name] === undefined),
    auth: definition.auth?.type ?? 'missing',
    tasks: (definition.tools ?? []).some((tool) => tool.task !== undefined),
    file,
    shown: file.shown,
  };
}

/** The deploy section without its env_vars, which `fromFile` resolves one by one. */
function withoutEnvVars(
  deploy: NonNullable<DefinitionFile['loaded']['definition']['deploy']>,
  environment: Environment,
) {
  const { env_vars: _top, environments, ...rest } = deploy;
  const override = environments?.[environment];
  if (override === undefined) return rest;
  const { env_vars: _over, ...keep } = override;
  return { ...rest, environments: { [environment]: keep } };
}

/** A server built before, read from the service; its settings come from the flags. */
async function fromBuild(ctx: CommandContext, mcpId: string, options: ExportKubernetesOptions): Promise<ExportSource> {
  const server = await withApi(ctx, (client) => client.getServer(mcpId));
  const { DIGEST_PATTERN } = await import('../../packaging/image.js');
  const digest = server.bundle_digest;
  if (digest === undefined || !DIGEST_PATTERN.test(digest)) {
    const what =
      digest === undefined
        ? `does not say which bundle ${mcpId} was built from`
        : `gives ${mcpId} the bundle digest "${digest}", which is not a SHA-256 digest`;
    throw new UserError(`the service ${what}, so its image cannot be named`, {
      exitCode: EXIT.config,
      code: 'not_supported',
      hint: `export from the definition file instead: mcpctl export kubernetes <file> --env ${options.env}`,
    });
  }
  const config = await applyDeployFlags({}, options, ctx.io);
  return {
    server: { name: server.name, ...(server.version === undefined ? {} : { version: server.version }), digest },
    config,
    withoutValue: (server.required_env ?? []).filter((name) => config.env_vars?.[name] === undefined),
    ...(server.auth === undefined ? {} : { auth: server.auth }),
    // the service does not say whether its tools run as tasks: a class named says they do
    tasks: options.tasksStorageClass !== undefined,
    shown: mcpId,
  };
}

/** The problems of the settings, each where the file wrote it (a flag's has no place in the file). */
function settingsError(
  problems: Problem[],
  file: DefinitionFile | undefined,
  options: ExportKubernetesOptions,
): UserError {
  const locate = file === undefined ? undefined : locateDeployField(file, options.env, options);
  const located = problems.map((problem) => {
    const where = problem.path === undefined || locate === undefined ? undefined : locate(problem.path);
    return where === undefined ? problem : { ...problem, where };
  });
  return new UserError('the Kubernetes manifests cannot be made from these settings', {
    problems: located,
    hint:
      file === undefined
        ? 'fix the flags named above'
        : `fix the fields above in ${file.shown}, or override them with flags (--domain, --min-instances, --max-instances)`,
  });
}

/**
 * How to give the Secret the values this export did not write. Creating the Secret by hand is offered
 * only when the export writes none, since applying a written one would then replace it.
 */
function supplyHint(
  names: string[],
  create: { secretName: string; namespace: string | undefined } | undefined,
): string {
  const again = `give ${names.join(', ')} a value: export again with ${names.map((n) => `--env-var ${n}`).join(' ')} (or --env-file)`;
  if (create === undefined) return again;
  const literals = names.map((name) => `--from-literal=${name}=…`).join(' ');
  return `${again}, or create the Secret yourself: kubectl create secret generic ${create.secretName}${create.namespace === undefined ? '' : ` -n ${create.namespace}`} ${literals}`;
}

function shownPath(cwd: string, path: string): string {
  const rel = relative(cwd, path);
  return rel === '' ? '.' : isAbsolute(rel) || rel.startsWith('..') ? path : rel;
}
