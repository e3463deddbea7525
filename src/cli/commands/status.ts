/**
 * `mcpctl status <deployment_id> [--watch]`, and the wait loop `deploy` shares: long-poll the
 * status (`?wait=` with `If-None-Match`) so a change shows at once, and fall back to short
 * back-off sleeps only when the service answers at once without a change (it ignores `wait`).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { ApiClient } from '../../api/client.js';
import { DEPLOYMENT_ID_PATTERN, type Deployment } from '../../api/contract.js';
import { ApiError } from '../../api/errors.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import { EXIT, UserError } from '../errors.js';
import { describeProgress, renderDeployment } from '../render/deployment.js';
import { formatSeconds } from '../render/format.js';

export interface WaitOptions {
  timeoutMs: number;
  signal: AbortSignal;
  onChange?: (deployment: Deployment) => void;
  /**
   * The ETag of the answer `initial` came from. Without it, the wait starts with a plain read: a
   * long-poll without the version the client has seen would wait for a change that may already
   * have happened.
   */
  etag?: string | undefined;
}

export interface WaitOutcome {
  deployment: Deployment;
  /** settled: deployed, failed or stopped; timeout: still deploying; interrupted: Ctrl-C */
  end: 'settled' | 'timeout' | 'interrupted';
}

const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 2_000;

/** What changes a person would see; used when the service sends no ETag. */
function fingerprint(d: Deployment): string {
  return JSON.stringify([d.status, d.stage, d.desired_instances, d.instances?.map((i) => i.state), d.updated_at]);
}

/** Follows a deployment until it leaves `deploying`, the time runs out, or the signal aborts. */
export async function waitForDeployment(client: ApiClient, initial: Deployment, options: WaitOptions): Promise<WaitOutcome> {
  let current = initial;
  let etag = options.etag;
  let backoff = FIRST_BACKOFF_MS;
  const deadline = performance.now() + options.timeoutMs;
  try {
    if (etag === undefined && current.status === 'deploying') {
      const read = await client.status(current.deployment_id);
      if (read.deployment !== undefined && fingerprint(read.deployment) !== fingerprint(current)) {
        current = read.deployment;
        options.onChange?.(current);
      }
      etag = read.etag;
    }
    while (current.status === 'deploying') {
      const remaining = deadline - performance.now();
      if (remaining <= 0) return { deployment: current, end: 'timeout' };
      const waitSeconds = Math.min(60, Math.max(1, Math.ceil(remaining / 1000)));
      const asked = performance.now();
      const answer = await client.status(current.deployment_id, { waitSeconds, ...(etag === undefined ? {} : { etag }) });
      const elapsed = performance.now() - asked;
      const next = answer.deployment ?? current;
      const changed =
        answer.deployment !== undefined &&
        (etag !== undefined && answer.etag !== undefined ? answer.etag !== etag : fingerprint(next) !== fingerprint(current));
      etag = answer.etag;
      current = next;
      if (changed) {
        options.onChange?.(current);
        backoff = FIRST_BACKOFF_MS;
        continue;
      }
      // An unchanged answer well before the wait ran out: this service does not long-poll.
      if (current.status === 'deploying' && elapsed < waitSeconds * 1000 * 0.9) {
        await delay(Math.max(0, Math.min(backoff, deadline - performance.now())), undefined, { signal: options.signal });
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  } catch (error) {
    if (options.signal.aborted && (error instanceof ApiError ? error.kind === 'aborted' : true)) {
      return { deployment: current, end: 'interrupted' };
    }
    throw error;
  }
  return { deployment: current, end: 'settled' };
}

/**
 * Shows a deployment the wait ended on and turns its state into the exit code: failed → 6,
 * still deploying after the time-out → 8, interrupted → 130. With --json the deployment is the
 * document in every case.
 */
export function reportDeployment(
  ctx: CommandContext,
  outcome: WaitOutcome,
  options: {
    heading: string;
    timeoutSeconds?: number;
    /** what --quiet prints: the id of a deployment the command created, or the state it asked about */
    quiet?: 'id' | 'status';
  },
): void {
  const { deployment, end } = outcome;
  const id = deployment.deployment_id;
  if (end === 'interrupted') {
    // the deployment goes on: a pipeline that was cancelled can still read which one it was
    if (ctx.out.json) ctx.out.writeJson(deployment);
    throw new UserError(`stopped waiting; deployment ${id} goes on (${deployment.status})`, {
      exitCode: EXIT.interrupted,
      code: 'interrupted',
      hint: `follow it with \`mcpctl status ${id} --watch\``,
    });
  }
  ctx.out.result(deployment, (p) => renderDeployment(p, deployment, options.heading), {
    quiet: () => (options.quiet === 'status' ? deployment.status : id),
  });
  if (end === 'timeout') {
    const after = options.timeoutSeconds === undefined ? '' : ` after ${formatSeconds(options.timeoutSeconds) ?? ''}`;
    throw new UserError(`deployment ${id} is still deploying${after}`, {
      exitCode: EXIT.timeout,
      code: 'timeout',
      hint: `it is safe to wait again: \`mcpctl status ${id} --watch\``,
    });
  }
  if (deployment.status === 'failed') {
    throw new UserError(`deployment ${id} failed${deployment.reason === undefined ? '' : `: ${deployment.reason}`}`, {
      exitCode: EXIT.deploy_failed,
      code: 'deploy_failed',
      hint: `read its logs: \`mcpctl logs ${id}\``,
    });
  }
}

export interface StatusCommandOptions {
  watch?: boolean;
  /** seconds */
  timeout?: number;
}

function headingFor(d: Deployment): string {
  const env = d.environment === undefined ? '' : ` (${d.environment})`;
  switch (d.status) {
    case 'deployed':
      return `${d.deployment_id} is deployed${env}`;
    case 'deploying':
      return `${d.deployment_id} is deploying${env}`;
    case 'failed':
      return `${d.deployment_id} failed${env}`;
    case 'stopped':
      return `${d.deployment_id} is stopped${env}`;
  }
}

export async function statusCommand(ctx: CommandContext, deploymentId: string, options: StatusCommandOptions = {}): Promise<void> {
  if (!DEPLOYMENT_ID_PATTERN.test(deploymentId)) {
    throw new UserError(`not a deployment id: ${deploymentId}`, {
      hint: deploymentId.startsWith('mcp_')
        ? 'that is a server id; `mcpctl ls` shows its deployments'
        : 'deployment ids look like deploy_9x2m4k7q1c; `mcpctl ls` lists them',
    });
  }
  const timeoutSeconds = options.timeout ?? 600;
  const outcome = await withApi(ctx, async (client) => {
    const first = await client.status(deploymentId);
    const deployment = first.deployment!;
    if (options.watch !== true || deployment.status !== 'deploying') return { deployment, end: 'settled' as const };
    const progress = await ctx.out.progress(describeProgress(deployment));
    const result = await waitForDeployment(client, deployment, {
      timeoutMs: timeoutSeconds * 1000,
      signal: ctx.signal,
      etag: first.etag,
      onChange: (d) => {
        if (d.status === 'deploying') progress.update(describeProgress(d));
      },
    });
    if (result.end === 'settled' && result.deployment.status === 'deployed') progress.succeed(describeProgress(result.deployment));
    else if (result.end === 'settled' && result.deployment.status === 'failed') progress.fail();
    else if (result.end === 'timeout') progress.warn(`still deploying after ${formatSeconds(timeoutSeconds) ?? ''}`);
    else progress.stop();
    return result;
  });
  reportDeployment(ctx, outcome, { heading: headingFor(outcome.deployment), timeoutSeconds, quiet: 'status' });
}
