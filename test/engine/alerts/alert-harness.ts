/**
 * An alert service in fake time for unit tests: snapshots, request events and deployment records
 * as the engine gives them, and the messages captured from the webhook bodies instead of sent.
 */
import type { AlertRuleInput } from '../../../src/definition/alerts-schema.js';
import { AlertService } from '../../../src/engine/alerts/alert-service.js';
import { silentLogger, type Logger } from '../../../src/engine/engine-log.js';
import type { DeploymentSnapshot, RequestEvent } from '../../../src/engine/observability/events.js';
import type { DeploymentRecord } from '../../../src/engine/records.js';
import type { Store } from '../../../src/engine/store/store.js';

export const ID = 'deploy_aaaaaaaaaa';

export function snapshot(overrides: Partial<DeploymentSnapshot> = {}): DeploymentSnapshot {
  return {
    deploymentId: ID,
    server: 'weather',
    environment: 'production',
    status: 'deployed',
    desired: 1,
    instances: [{ id: 'i1', state: 'healthy', restarts: 0 }],
    ...overrides,
  };
}

export function event(at: number, overrides: Partial<RequestEvent> = {}): RequestEvent {
  return {
    deploymentId: ID,
    server: 'weather',
    environment: 'production',
    at,
    latencyMs: 10,
    status: 200,
    ...overrides,
  };
}

/** A store with the records given: what the service reads (rules, failed deploys, server names). */
export function storeOf(records: DeploymentRecord[]): Store {
  return {
    getDeployment: async (id: string) => records.find((r) => r.deployment.deployment_id === id),
    listDeployments: async (filter: { status?: string } = {}) =>
      records.filter((r) => filter.status === undefined || r.deployment.status === filter.status),
    getServer: async () => ({ server: { name: 'weather' } }),
  } as unknown as Store;
}

export function record(
  alerts: AlertRuleInput[] | undefined,
  overrides: Partial<DeploymentRecord['deployment']> = {},
): DeploymentRecord {
  return {
    deployment: {
      deployment_id: ID,
      status: 'deployed',
      url: 'http://127.0.0.1/mcp',
      deploy_time: 1,
      health_check: '',
      environment: 'production',
      ...overrides,
    },
    mcpId: 'mcp_aaaaaaaaaa',
    config: alerts === undefined ? {} : { alerts },
    version: 1,
  };
}

/** An alert service in fake time whose messages are captured instead of delivered. */
export function serviceOf(
  records: DeploymentRecord[],
  snapshots: () => DeploymentSnapshot[],
  repeatMs = 3_600_000,
  options: { dir?: string; start?: number; logger?: Logger } = {},
) {
  let now = options.start ?? 1_000_000;
  const sent: Array<{ status: string; alerts: Array<{ rule: string; state: string }> }> = [];
  const service = new AlertService({
    store: storeOf(records),
    deployments: { snapshot: snapshots },
    channels: [{ type: 'webhook', name: 'capture', url: 'http://127.0.0.1:9/hook', secret: 'x'.repeat(16) }],
    logger: options.logger ?? silentLogger,
    clock: () => now,
    engineUrl: 'http://127.0.0.1:7070',
    intervalMs: 1000,
    repeatMs,
    // what would go out, read back from the webhook's body
    deliver: async (_channel, message) => {
      const body = JSON.parse(message.body) as { status: string; alerts: Array<{ rule: string; state: string }> };
      sent.push({ status: body.status, alerts: body.alerts.map(({ rule, state }) => ({ rule, state })) });
      return { delivered: true, attempts: 1, status: 204 };
    },
    ...(options.dir === undefined ? {} : { dir: options.dir }),
  });
  return {
    service,
    sent,
    advance: (ms: number) => (now += ms),
    now: () => now,
  };
}
