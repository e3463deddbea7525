/**
 * What goes out on each kind of channel: the webhook's JSON and its HMAC-SHA256 signature over the
 * timestamp and body, Slack's `{ text, blocks }`, PagerDuty Events v2 trigger and resolve events;
 * and the channels' settings: secrets from the environment, HTTPS or loopback only, errors that
 * name the field and never the value.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../../src/api/alerts.js';
import { AlertConfigError, channelSecrets, parseChannels, type Channel } from '../../../src/engine/alerts/channels.js';
import { messagesFor, signBody, type AlertGroup } from '../../../src/engine/alerts/messages.js';

const NOW = Date.parse('2026-01-02T03:04:05.678Z');
const SECRET = 'a-shared-secret-of-some-length';

function alert(overrides: Partial<Alert> = {}): Alert {
  return {
    deployment_id: 'deploy_aaaaaaaaaa',
    server: 'weather',
    environment: 'production',
    rule: 'error_rate',
    type: 'error_rate',
    severity: 'critical',
    state: 'firing',
    condition: 'error rate above 50% over 5m for 30s',
    value: 80,
    summary: 'weather (deploy_aaaaaaaaaa, production): 80% of 10 requests failed in the last 5m (alert above 50%)',
    started_at: '2026-01-02T03:00:00.000Z',
    ...overrides,
  };
}

const group: AlertGroup = {
  deploymentId: 'deploy_aaaaaaaaaa',
  server: 'weather',
  environment: 'production',
  status: 'firing',
  alerts: [alert(), alert({ rule: 'restarts', type: 'restarts', severity: 'warning', state: 'resolved', value: 0 })],
};

describe('messages', () => {
  it('signs the webhook body with the timestamp, as a receiver recomputes it', () => {
    const channel: Channel = { type: 'webhook', name: 'ops', url: 'https://example.com/hook', secret: SECRET };
    const [message] = messagesFor(channel, group, 'http://127.0.0.1:7070', NOW);
    const timestamp = message!.headers['x-mcpctl-timestamp']!;
    expect(timestamp).toBe(String(Math.floor(NOW / 1000)));
    const expected = createHmac('sha256', SECRET).update(`${timestamp}.${message!.body}`).digest('hex');
    expect(message!.headers['x-mcpctl-signature']).toBe(`sha256=${expected}`);
    expect(signBody(SECRET, timestamp, `${message!.body} `)).not.toBe(message!.headers['x-mcpctl-signature']);
    expect(signBody('another-secret-of-length', timestamp, message!.body)).not.toBe(
      message!.headers['x-mcpctl-signature'],
    );
    expect(JSON.parse(message!.body)).toEqual({
      version: 1,
      status: 'firing',
      engine: 'http://127.0.0.1:7070',
      deployment: { id: 'deploy_aaaaaaaaaa', server: 'weather', environment: 'production' },
      alerts: group.alerts,
      sent_at: '2026-01-02T03:04:05.678Z',
    });
  });

  it('writes one Slack message for the group, with text and blocks', () => {
    const channel: Channel = { type: 'slack', name: 'chat', url: 'https://hooks.slack.com/services/T/B/X' };
    const messages = messagesFor(channel, group, 'http://127.0.0.1:7070', NOW);
    expect(messages).toHaveLength(1);
    const body = JSON.parse(messages[0]!.body) as {
      text: string;
      blocks: Array<{ type: string; text: { text: string } }>;
    };
    expect(body.text).toBe('[FIRING] weather in production (deploy_aaaaaaaaaa): 1 firing, 1 resolved');
    expect(body.blocks.map((b) => b.type)).toEqual(['header', 'section']);
    expect(body.blocks[1]!.text.text).toContain(':red_circle: *error_rate* (critical): weather');
    expect(body.blocks[1]!.text.text).toContain(':large_green_circle: *restarts* (warning)');
    expect(messages[0]!.headers).toEqual({ 'content-type': 'application/json' });
  });

  it('writes a PagerDuty Events v2 event per alert: trigger while firing, resolve after, one dedup_key', () => {
    const channel: Channel = {
      type: 'pagerduty',
      name: 'pd',
      url: 'https://events.pagerduty.com/v2/enqueue',
      secret: 'R0UT1NGKEY',
    };
    const [trigger, resolve] = messagesFor(channel, group, 'http://127.0.0.1:7070', NOW).map(
      (m) => JSON.parse(m.body) as Record<string, unknown>,
    );
    expect(trigger).toEqual({
      routing_key: 'R0UT1NGKEY',
      event_action: 'trigger',
      dedup_key: 'mcpctl/deploy_aaaaaaaaaa/error_rate',
      payload: {
        summary: group.alerts[0]!.summary,
        severity: 'critical',
        source: 'weather/deploy_aaaaaaaaaa',
        component: 'weather',
        group: 'production',
        class: 'error_rate',
        timestamp: '2026-01-02T03:00:00.000Z',
        custom_details: {
          condition: 'error rate above 50% over 5m for 30s',
          value: 80,
          engine: 'http://127.0.0.1:7070',
        },
      },
    });
    expect(resolve).toEqual({
      routing_key: 'R0UT1NGKEY',
      event_action: 'resolve',
      dedup_key: 'mcpctl/deploy_aaaaaaaaaa/restarts',
    });
  });
});

describe('channels', () => {
  const where = '"alerts.channels" in /home/engine-settings.json';

  it('reads secrets and URLs from the environment and hides them', () => {
    const channels = parseChannels(
      [
        { type: 'webhook', url: 'http://127.0.0.1:9000/hook', secret_env: 'HOOK_SECRET', environments: ['production'] },
        { type: 'slack', url_env: 'SLACK_URL', name: 'team' },
        { type: 'pagerduty', routing_key_env: 'PD_KEY' },
      ],
      { HOOK_SECRET: SECRET, SLACK_URL: 'https://hooks.slack.com/services/T/B/X', PD_KEY: 'R0UT1NGKEY' },
      where,
    );
    expect(channels).toEqual([
      {
        type: 'webhook',
        name: 'webhook #1',
        url: 'http://127.0.0.1:9000/hook',
        secret: SECRET,
        environments: ['production'],
      },
      { type: 'slack', name: 'team', url: 'https://hooks.slack.com/services/T/B/X' },
      { type: 'pagerduty', name: 'pagerduty #3', url: 'https://events.pagerduty.com/v2/enqueue', secret: 'R0UT1NGKEY' },
    ]);
    expect(channelSecrets(channels)).toEqual(
      expect.arrayContaining([SECRET, 'https://hooks.slack.com/services/T/B/X', 'R0UT1NGKEY']),
    );
  });

  it.each([
    [
      { type: 'webhook', url: 'http://hooks.example.com/x', secret: SECRET },
      `${where}[0].url: must be an https:// URL (plain http:// only to a loopback address such as 127.0.0.1)`,
    ],
    [
      { type: 'webhook', url: 'https://hooks.example.com/x' },
      `${where}[0]: a webhook channel needs secret or secret_env, at least 16 characters, to sign its messages`,
    ],
    [
      { type: 'webhook', url: 'https://hooks.example.com/x', secret: 'short' },
      `${where}[0]: a webhook channel needs secret or secret_env, at least 16 characters, to sign its messages`,
    ],
    [{ type: 'slack', url_env: 'MISSING' }, `${where}[0].url_env: MISSING is not set`],
    [{ type: 'slack' }, `${where}[0]: a slack channel needs url or url_env`],
    [{ type: 'pagerduty' }, `${where}[0]: a pagerduty channel needs routing_key or routing_key_env`],
    [
      { type: 'email', to: 'x' },
      `${where}[0].type: Invalid discriminator value. Expected 'webhook' | 'slack' | 'pagerduty'`,
    ],
    [{ type: 'slack', url: 'https://h.example.com', colour: 'red' }, `${where}[0]: Unrecognized key: "colour"`],
  ])('refuses %j', (entry, message) => {
    const attempt = () => parseChannels([entry], {}, where);
    expect(attempt).toThrow(AlertConfigError);
    expect(attempt).toThrow(message);
  });

  it('never names a URL or secret in its errors', () => {
    const url = 'http://hooks.example.com/T0KEN';
    expect(() => parseChannels([{ type: 'slack', url }], {}, where)).toThrow(/^(?!.*T0KEN)/);
  });
});
