/**
 * `#/tests` and `#/tests/<id>`: the test runs the engine keeps, and one run with its calls, success
 * rate, band and the causes of a poor result, worded as `mcpctl test` prints them.
 */
import { Fragment } from 'preact';
import { getJson } from '../api.js';
import { Badge, ErrorBox, Loading, Section, TableWrap } from '../components/common.js';
import { formatAge, formatDuration, formatMs, formatRate, formatTime } from '../format.js';
import { useNow, usePolling } from '../hooks.js';
import { routeHref, toolHref } from '../route.js';
import { toDetail, toSummaries, type TestRunDetail } from '../test-runs.js';

function list(items: readonly string[]): string {
  return items.length === 0 ? 'none' : items.join(', ');
}

/** The tools a run used, each a link to where its server defines it. */
function ToolLinks({ mcpId, tools }: { mcpId: string; tools: readonly string[] }) {
  if (tools.length === 0) return <>none</>;
  return (
    <>
      {tools.map((tool, index) => {
        const href = toolHref(mcpId, tool);
        return (
          <Fragment key={tool}>
            {index === 0 ? null : ', '}
            {href === undefined ? tool : <a href={href}>{tool}</a>}
          </Fragment>
        );
      })}
    </>
  );
}

/** The server's name, a link to its page. */
function ServerLink({ mcpId, name }: { mcpId: string; name: string | undefined }) {
  if (mcpId === '') return <>{name ?? '—'}</>;
  return <a href={routeHref({ page: 'server', id: mcpId })}>{name ?? mcpId}</a>;
}

export function TestRunsPage() {
  const { data, error } = usePolling(
    async (signal) => toSummaries(await getJson<unknown>('/v1/tests', { signal })),
    'tests',
    10_000,
  );
  const now = useNow();
  return (
    <>
      <h1>Test runs</h1>
      {data === undefined ? (
        error === undefined ? (
          <Loading what="test runs" />
        ) : (
          <ErrorBox error={error} />
        )
      ) : data.length === 0 ? (
        <p class="notice">
          No test has run on this engine yet. Run <code>mcpctl test</code>; its runs show here.
        </p>
      ) : (
        <TableWrap label="Test runs">
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Server</th>
              <th scope="col">Message</th>
              <th scope="col">Success rate</th>
              <th scope="col">Tools used</th>
              <th scope="col">Model</th>
              <th scope="col">When</th>
            </tr>
          </thead>
          <tbody>
            {data.map((run) => (
              <tr key={run.id}>
                <td>
                  <a class="mono" href={routeHref({ page: 'test', id: run.id })}>
                    {run.id}
                  </a>
                </td>
                <td>
                  <ServerLink mcpId={run.mcpId} name={run.server} />
                </td>
                <td class="message-cell">{run.message ?? ''}</td>
                <td>
                  {formatRate(run.successRate)} <Badge state={run.band} kind={run.level} />
                </td>
                <td>
                  <ToolLinks mcpId={run.mcpId} tools={run.toolsUsed} />
                </td>
                <td>{run.model ?? '—'}</td>
                <td title={run.createdAt}>{formatAge(run.createdAt, now)}</td>
              </tr>
            ))}
          </tbody>
        </TableWrap>
      )}
    </>
  );
}

export function TestRunPage({ id }: { id: string }) {
  const { data, error } = usePolling(
    async (signal) => toDetail(await getJson<unknown>(`/v1/tests/${encodeURIComponent(id)}`, { signal })),
    id,
    0,
  );
  return (
    <>
      <p class="crumbs">
        <a href={routeHref({ page: 'tests' })}>Test runs</a> / {id}
      </p>
      {data === undefined ? (
        error === undefined ? (
          <Loading what="the test run" />
        ) : (
          <ErrorBox error={error} />
        )
      ) : (
        <TestRun run={data} />
      )}
    </>
  );
}

function TestRun({ run }: { run: TestRunDetail }) {
  const result = run.result;
  return (
    <>
      <div class="page-head">
        <h1>
          <ServerLink mcpId={run.mcpId} name={run.server} />
        </h1>
        <Badge state={run.band} kind={run.level} />
      </div>
      <dl class="summary card">
        <dt>Success rate</dt>
        <dd>
          {formatRate(run.successRate)} ({run.band})
          {run.calls === undefined ? null : `: ${run.calls - (run.failedCalls ?? 0)} of ${run.calls} tool calls worked`}
        </dd>
        <dt>Message</dt>
        <dd class="pre">{run.message ?? '—'}</dd>
        <dt>Model</dt>
        <dd>{run.model ?? '—'}</dd>
        <dt>Tools used</dt>
        <dd>
          <ToolLinks mcpId={run.mcpId} tools={run.toolsUsed} />
        </dd>
        {run.expectedTools === undefined ? null : (
          <>
            <dt>Tools expected</dt>
            <dd>
              <ToolLinks mcpId={run.mcpId} tools={run.expectedTools} />
            </dd>
          </>
        )}
        <dt>Resources</dt>
        <dd>{list(result?.resources_accessed ?? [])}</dd>
        <dt>Execution time</dt>
        <dd>{formatDuration(result?.execution_time)}</dd>
        <dt>When</dt>
        <dd>{run.createdAt === undefined ? '—' : formatTime(run.createdAt)}</dd>
        <dt>Server</dt>
        <dd class="mono">{run.mcpId}</dd>
      </dl>
      <Section title="Causes">
        {run.causes.length === 0 ? (
          <p class="muted">No typical cause of a poor result applies to this run.</p>
        ) : (
          <ul class="causes">
            {run.causes.map((cause, index) => (
              <li key={index}>
                <strong>cause {cause.kind}</strong>: {cause.message}
                {(cause.tools ?? []).map((tool) => {
                  const href = toolHref(run.mcpId, tool);
                  return (
                    <div key={tool} class="muted">
                      → {href === undefined ? tool : <a href={href}>{tool}</a>} is defined under <code>tools:</code> in
                      the definition of {run.server ?? run.mcpId}
                    </div>
                  );
                })}
              </li>
            ))}
          </ul>
        )}
      </Section>
      <Section title="Tool calls">
        {run.toolCalls.length === 0 ? (
          <p class="muted">The agent called no tool.</p>
        ) : (
          <TableWrap label="Tool calls">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Tool</th>
                <th scope="col">Result</th>
                <th scope="col">Time</th>
              </tr>
            </thead>
            <tbody>
              {run.toolCalls.map((call, index) => (
                <tr key={index}>
                  <td>{index + 1}</td>
                  <td>
                    <ToolLinks mcpId={run.mcpId} tools={[call.name]} />
                  </td>
                  <td>
                    {call.ok ? (
                      <Badge state="ok" kind="ok" />
                    ) : (
                      <>
                        <Badge state="failed" />
                        {call.error === undefined ? null : <div class="pre">{call.error}</div>}
                      </>
                    )}
                  </td>
                  <td>{formatMs(call.duration_ms)}</td>
                </tr>
              ))}
            </tbody>
          </TableWrap>
        )}
      </Section>
      <Section title="Reply">
        <p class="pre">
          {result?.ai_response === undefined || result.ai_response === '' ? '(empty)' : result.ai_response}
        </p>
      </Section>
    </>
  );
}
