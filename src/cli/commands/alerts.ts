/**
 * `mcpctl alerts [--deployment <deployment>]`: the alerts firing now, those about to (pending) and those
 * resolved lately, per deployment, and whether the engine sends them anywhere. `--json` prints the list document.
 */
import type { Alert, AlertList } from '../../api/alerts.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import type { Printer } from '../output.js';
import { datesNeeded, formatTime } from '../render/format.js';
import { deploymentIdOf } from '../steps/deployment-target.js';
import type { AlertsOptions } from '../specs/service.js';

export async function alertsCommand(ctx: CommandContext, options: AlertsOptions): Promise<void> {
  const deploymentId =
    options.deployment === undefined
      ? undefined
      : await deploymentIdOf(ctx, options.deployment, { command: 'alerts -d' });
  const list = await withApi(ctx, (client) => client.alerts(deploymentId));
  ctx.out.result(list, (p) => renderAlerts(p, list), {
    quiet: () => list.firing.map((a) => `${a.deployment_id} ${a.rule}`).join('\n'),
  });
}

export function renderAlerts(p: Printer, list: AlertList): void {
  // one time form down the SINCE column: every row with its date when any is not from today
  const all = [...list.firing, ...list.pending, ...list.recent];
  const date = datesNeeded(
    all.flatMap((a) => (a.resolved_at === undefined ? [a.started_at] : [a.started_at, a.resolved_at])),
  );
  const row = (a: Alert) => alertRow(p, a, date);
  if (list.firing.length === 0) p.success('no alert is firing');
  else {
    p.line(p.style.bold(p.style.red(`${list.firing.length} firing`)));
    p.table(HEADERS, list.firing.map(row));
  }
  if (list.pending.length > 0) {
    p.line();
    p.line(
      p.style.bold(p.style.yellow(`${list.pending.length} pending`)) +
        p.style.dim(' (the condition holds, not yet for long enough)'),
    );
    p.table(HEADERS, list.pending.map(row));
  }
  if (list.recent.length > 0) {
    p.line();
    p.line(p.style.bold('resolved lately'));
    p.table(HEADERS, list.recent.map(row));
  }
  if (list.channels === 0) {
    p.line();
    p.next('the engine sends alerts nowhere: set alerts.channels in its engine-settings.json (docs/observability.md)');
  }
}

const HEADERS = ['DEPLOYMENT', 'SERVER', 'ENV', 'ALERT', 'SEVERITY', 'SINCE', 'SUMMARY'];

function alertRow(p: Printer, alert: Alert, date: boolean): string[] {
  const severity = alert.severity === 'critical' ? p.style.red(alert.severity) : p.style.yellow(alert.severity);
  const started = formatTime(alert.started_at, { date });
  const since = alert.resolved_at === undefined ? started : `${started} → ${formatTime(alert.resolved_at, { date })}`;
  return [alert.deployment_id, alert.server, alert.environment, alert.rule, severity, since, alert.summary];
}
