/**
 * `mcpctl alerts [--deployment <deployment>]`: the alerts firing now, those about to (pending) and those
 * resolved lately, per deployment, and whether the engine sends them anywhere. `--json` prints the list document.
 */
import type { Alert, AlertList } from '../../api/alerts.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import type { Printer } from '../output.js';
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
  if (list.firing.length === 0) p.success('no alert is firing');
  else {
    p.line(p.style.bold(p.style.red(`${list.firing.length} firing`)));
    p.table(
      HEADERS,
      list.firing.map((a) => row(p, a)),
    );
  }
  if (list.pending.length > 0) {
    p.line();
    p.line(
      p.style.bold(p.style.yellow(`${list.pending.length} pending`)) +
        p.style.dim(' (the condition holds, not yet for long enough)'),
    );
    p.table(
      HEADERS,
      list.pending.map((a) => row(p, a)),
    );
  }
  if (list.recent.length > 0) {
    p.line();
    p.line(p.style.bold('resolved lately'));
    p.table(
      HEADERS,
      list.recent.map((a) => row(p, a)),
    );
  }
  if (list.channels === 0) {
    p.line();
    p.next('the engine sends alerts nowhere: set alerts.channels in its engine-settings.json (docs/observability.md)');
  }
}

const HEADERS = ['DEPLOYMENT', 'SERVER', 'ENV', 'ALERT', 'SEVERITY', 'SINCE', 'SUMMARY'];

function row(p: Printer, alert: Alert): string[] {
  const severity = alert.severity === 'critical' ? p.style.red(alert.severity) : p.style.yellow(alert.severity);
  const since = alert.resolved_at === undefined ? alert.started_at : `${alert.started_at} → ${alert.resolved_at}`;
  return [
    alert.deployment_id,
    alert.server,
    alert.environment,
    alert.rule,
    severity,
    since.replace(/\.\d+Z/g, 'Z'),
    alert.summary,
  ];
}
