/**
 * The messages a group of alerts (one deployment's, changed at one evaluation) becomes on each kind
 * of channel: the generic webhook's JSON with its HMAC-SHA256 signature, Slack's `{ text, blocks }`,
 * and PagerDuty Events v2 events (one per alert: PagerDuty groups them by `dedup_key`). Pure.
 */
import { createHmac } from 'node:crypto';
import type { Alert } from '../../api/alerts.js';
import type { Channel } from './channels.js';

/** The alerts of one deployment that go out together. */
export interface AlertGroup {
  deploymentId: string;
  server: string;
  environment: string;
  /** `firing` while any alert in it fires */
  status: 'firing' | 'resolved';
  alerts: Alert[];
}

/** One HTTP request to send. */
export interface Outgoing {
  body: string;
  headers: Record<string, string>;
}

export const SIGNATURE_HEADER = 'x-mcpctl-signature';
export const TIMESTAMP_HEADER = 'x-mcpctl-timestamp';

/** `sha256=<hex>` of HMAC-SHA256 over `<timestamp>.<body>`: a receiver checks both, and refuses old timestamps. */
export function signBody(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** The requests that carry `group` to `channel`, at `now` (ms). */
export function messagesFor(channel: Channel, group: AlertGroup, engine: string, now: number): Outgoing[] {
  const json = { 'content-type': 'application/json' };
  switch (channel.type) {
    case 'webhook': {
      const body = JSON.stringify(webhookBody(group, engine, now));
      const timestamp = String(Math.floor(now / 1000));
      return [
        {
          body,
          headers: {
            ...json,
            [TIMESTAMP_HEADER]: timestamp,
            [SIGNATURE_HEADER]: signBody(channel.secret!, timestamp, body),
          },
        },
      ];
    }
    case 'slack':
      return [{ body: JSON.stringify(slackBody(group)), headers: json }];
    case 'pagerduty':
      return group.alerts.map((alert) => ({
        body: JSON.stringify(pagerDutyEvent(channel.secret!, alert, engine)),
        headers: json,
      }));
  }
}

export function webhookBody(group: AlertGroup, engine: string, now: number): Record<string, unknown> {
  return {
    version: 1,
    status: group.status,
    engine,
    deployment: { id: group.deploymentId, server: group.server, environment: group.environment },
    alerts: group.alerts,
    sent_at: new Date(now).toISOString(),
  };
}

function headline(group: AlertGroup): string {
  const firing = group.alerts.filter((alert) => alert.state === 'firing').length;
  const resolved = group.alerts.length - firing;
  const counts = [firing > 0 ? `${firing} firing` : '', resolved > 0 ? `${resolved} resolved` : ''].filter(Boolean);
  return `[${group.status.toUpperCase()}] ${group.server} in ${group.environment} (${group.deploymentId}): ${counts.join(', ')}`;
}

export function slackBody(group: AlertGroup): { text: string; blocks: unknown[] } {
  const lines = group.alerts.map(
    (alert) =>
      `${alert.state === 'firing' ? ':red_circle:' : ':large_green_circle:'} *${alert.rule}* (${alert.severity}): ${alert.summary}`,
  );
  const text = headline(group);
  return {
    text,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: text.slice(0, 150) } },
      { type: 'section', text: { type: 'mrkdwn', text: lines.join('\n').slice(0, 3000) } },
    ],
  };
}

const PAGERDUTY_SEVERITIES: Record<string, string> = { critical: 'critical', warning: 'warning', info: 'info' };

export function pagerDutyEvent(routingKey: string, alert: Alert, engine: string): Record<string, unknown> {
  const dedupKey = `mcpctl/${alert.deployment_id}/${alert.rule}`;
  if (alert.state !== 'firing') return { routing_key: routingKey, event_action: 'resolve', dedup_key: dedupKey };
  return {
    routing_key: routingKey,
    event_action: 'trigger',
    dedup_key: dedupKey,
    payload: {
      summary: alert.summary.slice(0, 1024),
      severity: PAGERDUTY_SEVERITIES[alert.severity] ?? 'error',
      source: `${alert.server}/${alert.deployment_id}`,
      component: alert.server,
      group: alert.environment,
      class: alert.type,
      timestamp: alert.started_at,
      custom_details: { condition: alert.condition, value: alert.value, engine },
    },
  };
}
