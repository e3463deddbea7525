/**
 * Following a deployment until it settles, and what its end means: long-poll the status
 * (`?wait=` with `If-None-Match`) so a change shows at once, and fall back to short back-off
 * sleeps only when the service answers at once without a change (it ignores `wait`).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { ApiClient } from '../../api/client.js';
import type { Deployment } from '../../api/operations.js';
import { ApiError } from '../../api/errors.js';
import type { CommandContext } from '../context.js';
import type { Progress } from '../output.js';
import { EXIT, UserError } from '../../shared/errors.js';
import { describeProgress, renderDeployment } from '../render/deployment.js';
import { formatSeconds } from '../render/format.js';
import { serviceText } from '../render/service-text.js';

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

/** What a progress line ends with when a followed deployment ends; a failure without a text says its reason. */
export interface EndMessages {
  deployed: (d: Deployment) => string;
  timeout: (d: Deployment) => string;
  failed?: (d: Deployment) => string;
}

/**
 * Follows a deployment with a progress line (`deploy`, `rollback`, `status --watch`): each stage
 * shown as it comes, the line ended by how the deployment settled.
 */
export async function followDeployment(
  ctx: CommandContext,
  client: ApiClient,
  progress: Progress,
  first: Deployment,
  options: { timeoutSeconds: number; etag: string | undefined; messages: EndMessages },
): Promise<WaitOutcome> {
  progress.update(describeProgress(first));
  const result = await waitForDeployment(client, first, {
    timeoutMs: options.timeoutSeconds * 1000,
    signal: ctx.signal,
    etag: options.etag,
    onChange: (d) => {
      if (d.status === 'deploying') progress.update(describeProgress(d));
    },
  });
  endProgress(progress, result, options.messages);
  return result;
}

/** `deploy_x failed: no instance became healthy`: how a progress line ends, rather than the stage it was at. */
function describeFailure(d: Deployment): string {
  return serviceText(`${d.deployment_id} failed${d.reason === undefined ? '' : `: ${d.reason}`}`);
}

/** Ends a progress line by how a deployment ended: stopped when interrupted or still deploying without a wait. */
export function endProgress(progress: Progress, outcome: WaitOutcome, messages: EndMessages): void {
  const d = outcome.deployment;
  if (outcome.end === 'interrupted') progress.stop();
  else if (outcome.end === 'timeout') progress.warn(messages.timeout(d));
  else if (d.status === 'deployed') progress.succeed(messages.deployed(d));
  else if (d.status === 'failed') progress.fail(messages.failed?.(d) ?? describeFailure(d));
  else progress.stop();
}

/** Follows a deployment until it leaves `deploying`, the time runs out, or the signal aborts. */
export async function waitForDeployment(
  client: ApiClient,
  initial: Deployment,
  options: WaitOptions,
): Promise<WaitOutcome> {
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
      const answer = await client.status(current.deployment_id, {
        waitSeconds,
        ...(etag === undefined ? {} : { etag }),
      });
      const elapsed = performance.now() - asked;
      const next = answer.deployment ?? current;
      const changed =
        answer.deployment !== undefined &&
        (etag !== undefined && answer.etag !== undefined
          ? answer.etag !== etag
          : fingerprint(next) !== fingerprint(current));
      etag = answer.etag;
      current = next;
      if (changed) {
        options.onChange?.(current);
        backoff = FIRST_BACKOFF_MS;
        continue;
      }
      // An unchanged answer well before the wait ran out: this service does not long-poll.
      if (current.status === 'deploying' && elapsed < waitSeconds * 1000 * 0.9) {
        await delay(Math.max(0, Math.min(backoff, deadline - performance.now())), undefined, {
          signal: options.signal,
        });
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
 * What the end of a wait means for the exit code, or undefined for a deployment that is fine to
 * report as it is: failed → 6, still deploying after the time-out → 8, interrupted → 130.
 */
export function outcomeError(outcome: WaitOutcome, timeoutSeconds?: number): UserError | undefined {
  const { deployment, end } = outcome;
  const id = deployment.deployment_id;
  if (end === 'interrupted') {
    return new UserError(`stopped waiting; deployment ${id} goes on (${deployment.status})`, {
      exitCode: EXIT.interrupted,
      code: 'interrupted',
      hint: `follow it with \`mcpctl status ${id} --watch\``,
    });
  }
  if (end === 'timeout') {
    const after = timeoutSeconds === undefined ? '' : ` after ${formatSeconds(timeoutSeconds) ?? ''}`;
    return new UserError(`deployment ${id} is still deploying${after}`, {
      exitCode: EXIT.timeout,
      code: 'timeout',
      hint: `it is safe to wait again: \`mcpctl status ${id} --watch\``,
    });
  }
  if (deployment.status === 'failed') {
    return new UserError(`deployment ${id} failed${deployment.reason === undefined ? '' : `: ${deployment.reason}`}`, {
      exitCode: EXIT.deploy_failed,
      code: 'deploy_failed',
      hint: `read its logs: \`mcpctl logs ${id}\``,
    });
  }
  return undefined;
}

/**
 * Shows a deployment the wait ended on and turns its state into the exit code (outcomeError).
 * With --json the deployment is the document in every case, an interruption included: the
 * deployment goes on, and a pipeline that was cancelled can still read which one it was.
 */
export function reportDeployment(
  ctx: CommandContext,
  outcome: WaitOutcome,
  options: {
    heading: string;
    timeoutSeconds?: number;
    /** what --quiet prints: the id of a deployment the command created, or the state it asked about */
    quiet?: 'id' | 'status';
    /** said under the heading, and added to the JSON document under its key */
    also?: { key: string; data: unknown; line: string } | undefined;
    /** show the deployment's notices (default: yes); --json has them in every case */
    notices?: boolean;
  },
): void {
  const { deployment, end } = outcome;
  const error = outcomeError(outcome, options.timeoutSeconds);
  if (end === 'interrupted') {
    if (ctx.out.json) ctx.out.writeJson(deployment);
    throw error!;
  }
  const also = options.also;
  const document = also === undefined ? deployment : { ...deployment, [also.key]: also.data };
  const notices = options.notices !== false;
  ctx.out.result(document, (p) => renderDeployment(p, deployment, options.heading, also?.line, notices), {
    quiet: () => (options.quiet === 'status' ? deployment.status : deployment.deployment_id),
  });
  if (error !== undefined) throw error;
}
