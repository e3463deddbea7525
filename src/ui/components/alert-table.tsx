/** A list of alerts: state, rule, what it says, when. */
import type { Alert } from '../api-types.js';
import { formatAge } from '../format.js';
import { routeHref } from '../route.js';
import { Badge, TableWrap } from './common.js';

export function AlertTable({ alerts, now, showDeployment }: { alerts: Alert[]; now: number; showDeployment: boolean }) {
  return (
    <TableWrap label="Alerts">
      <thead>
        <tr>
          <th scope="col">State</th>
          {showDeployment ? <th scope="col">Deployment</th> : null}
          <th scope="col">Rule</th>
          <th scope="col">What</th>
          <th scope="col">Since</th>
        </tr>
      </thead>
      <tbody>
        {alerts.map((alert, index) => (
          <tr key={`${alert.deployment_id}-${alert.rule}-${alert.started_at ?? index}`}>
            <td>
              <Badge state={alert.state} />
              {alert.severity === undefined ? null : <div class="muted">{alert.severity}</div>}
            </td>
            {showDeployment ? (
              <td>
                <a href={routeHref({ page: 'deployment', id: alert.deployment_id })}>
                  {alert.server ?? alert.deployment_id}
                </a>
                {alert.environment === undefined ? null : <div class="muted">{alert.environment}</div>}
              </td>
            ) : null}
            <td>
              {alert.rule}
              {alert.condition === undefined ? null : <div class="muted">{alert.condition}</div>}
            </td>
            <td>{alert.summary ?? ''}</td>
            <td title={alert.resolved_at ?? alert.started_at}>
              {alert.resolved_at === undefined
                ? formatAge(alert.started_at, now)
                : `resolved ${formatAge(alert.resolved_at, now)}`}
            </td>
          </tr>
        ))}
      </tbody>
    </TableWrap>
  );
}
