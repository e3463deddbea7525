/**
 * An engine start, for deployments: settle what the last stop interrupted (a deployment still
 * deploying is failed), stop the instances an engine that did not stop cleanly left running, and
 * bring back every deployment that was deployed, at the same URL.
 */
import type { IsolationReport } from '../isolation.js';
import { authView, publicNotice } from './exposure.js';
import { runnerKindFor, type Runner } from '../runners/runner.js';
import type { DeploymentRecord, ServerRecord } from '../records.js';
import type { HttpsEndpoint } from '../services.js';
import type { Logger } from '../engine-log.js';
import type { Store } from '../store/store.js';
import { stableUrls } from './addresses.js';
import { deploymentNotices } from './new-record.js';
import type { DeploymentLimits } from './limits.js';
import type { LiveDeployment } from './live-deployment.js';
import { LogBook } from './log-book.js';
import { deploymentUrl, routeNameOf, type Registry } from './registry.js';
import { resolveScaling } from './limits.js';
import { applyTransition } from './states.js';

export interface RestoreContext {
  store: Store;
  registry: Registry;
  runner: Runner;
  /** the engine's home: its instances carry it as a label */
  home: string;
  baseUrl: string;
  https?: HttpsEndpoint | undefined;
  isolation?: IsolationReport | undefined;
  alerting?: boolean | undefined;
  logDir: string;
  limits: DeploymentLimits;
  logger: Logger;
  clock: () => number;
  closing: () => boolean;
  /** makes a LiveDeployment of a record and registers it */
  adopt(
    record: DeploymentRecord,
    server: ServerRecord,
    routeName: string,
    min: number,
    max: number,
    logs: LogBook,
  ): LiveDeployment;
  /** a deployment that ended: forget old ones, wait for its writes */
  finish(live: LiveDeployment): Promise<void>;
}

/** Fails the deployments a stop interrupted while they were deploying (their instances are gone). */
export async function failInterrupted(ctx: RestoreContext): Promise<void> {
  for (const record of await ctx.store.listDeployments({ status: 'deploying' })) {
    if (ctx.registry.has(record.deployment.deployment_id)) continue;
    applyTransition(record.deployment, 'failed', ctx.clock(), 'the engine stopped before the deployment finished');
    record.version += 1;
    await ctx.store.putDeployment(record);
  }
}

/**
 * Instances of this engine's deployments that still run although no engine supervises them (the
 * engine was killed): the runner takes over those it can; the others are stopped, and their
 * deployments start new ones.
 */
export async function stopLeftInstances(ctx: RestoreContext): Promise<void> {
  await removeLeftWorkloads(ctx);
  const known = new Set(
    ctx.registry.all().flatMap((live) => live.instances.map((instance) => `${live.id}/${instance.id}`)),
  );
  for (const found of await ctx.runner.find(ctx.home)) {
    if (known.has(`${found.labels.deployment}/${found.labels.instance}`)) continue;
    // Taking over a running instance needs a runner that can re-attach to it; this one stops it.
    const taken = await found.adopt(() => {});
    await (taken ?? found).stop(ctx.limits.stopGraceMs).catch(() => undefined);
    ctx.logger.warn('stopped an instance left by an engine that did not stop cleanly', {
      deployment_id: found.labels.deployment,
      instance: found.labels.instance,
      ...(found.pid === undefined ? {} : { pid: found.pid }),
    });
  }
}

/**
 * Workloads of this engine on its orchestrator that no deployed deployment of the same server and
 * environment will take over (its restore adopts the workload, or rolls it to its own spec): removed.
 */
async function removeLeftWorkloads(ctx: RestoreContext): Promise<void> {
  const orchestrator = ctx.runner.orchestrator;
  if (orchestrator === undefined) return;
  const deployed = await ctx.store.listDeployments({ status: 'deployed' });
  const names = new Map<string, string>();
  for (const record of deployed) {
    const server = await ctx.store.getServer(record.mcpId);
    if (server !== undefined)
      names.set(
        `${server.server.name}\n${record.deployment.environment ?? 'development'}`,
        record.deployment.deployment_id,
      );
  }
  for (const found of await orchestrator.find(ctx.home)) {
    if (names.has(`${found.labels.server}\n${found.labels.environment}`)) continue;
    await found.remove(ctx.limits.stopGraceMs).catch(() => undefined);
    ctx.logger.warn('removed a workload left by an engine that did not stop cleanly', { ...found.labels });
  }
}

/** Brings back one deployment that was deployed. */
export async function restoreOne(ctx: RestoreContext, record: DeploymentRecord): Promise<void> {
  const d = record.deployment;
  const server = await ctx.store.getServer(record.mcpId);
  if (server === undefined) {
    applyTransition(d, 'failed', ctx.clock(), `its build ${record.mcpId} is missing, so it could not be restored`);
    record.version += 1;
    await ctx.store.putDeployment(record);
    return;
  }
  const environment = d.environment ?? 'development';
  const runner = runnerKindFor(ctx.runner, environment);
  // a scaling this engine's runner does not take (scale to zero where an orchestrator runs it) gets the defaults
  const scaling = resolveScaling(environment, record.config.scaling, runner);
  const { min, max } = scaling.ok ? scaling : (resolveScaling(environment, undefined) as { min: number; max: number });
  const routeName = routeNameOf(record);
  const logs = new LogBook(ctx.logDir, d.deployment_id, ctx.limits.logLinesKept);
  await logs.load();
  const url = deploymentUrl(ctx.baseUrl, routeName);
  const moved = url !== d.url ? d.url : undefined;
  // where it is reached and which HTTPS applies follow the engine's address and certificates now
  const domain = d.domain ?? undefined;
  const stable = stableUrls(ctx, server.server.name, environment, domain);
  const notices = [
    ...publicNotice(server),
    ...deploymentNotices({ environment, domain, config: record.config, runner }, ctx),
  ];
  const auth = authView(server, stable);
  const changed = JSON.stringify([stable, notices, auth]) !== JSON.stringify([d.stable_urls, d.notices, d.auth]);
  if (
    changed ||
    moved !== undefined ||
    d.desired_instances !== min ||
    record.routeName === undefined ||
    d.runner !== runner
  ) {
    // What the API will show is written first.
    d.stable_urls = stable;
    d.notices = notices;
    if (auth === undefined) delete d.auth;
    else d.auth = auth;
    d.runner = runner;
    d.url = url;
    d.health_check = `${url}/health`;
    d.desired_instances = min;
    record.routeName = routeName;
    record.version += 1;
    await ctx.store.putDeployment(record);
  }
  const live = ctx.adopt(record, server, routeName, min, max, logs);
  if (moved !== undefined) live.log('warn', `the engine now listens elsewhere: URL changed from ${moved} to ${url}`);
  if (live.idling.idle && live.idling.possible) {
    // it was idle: it stays so, and the next request starts its instances
    live.log('info', 'restoring after an engine restart: idle, no instance until a request');
    return;
  }
  live.log('info', `restoring after an engine restart: ${min} instance${min === 1 ? '' : 's'}`);
  try {
    await live.launch(min, 'restoring');
  } catch (error) {
    if (ctx.closing()) return;
    if (live.status === 'deployed')
      live.transition('failed', `could not be restored: ${error instanceof Error ? error.message : String(error)}`);
    await live.stopInstances();
    await ctx.finish(live);
    return;
  }
  if (live.status !== 'deployed') return;
  live.setStage('running');
  live.startAutoscaler();
}
