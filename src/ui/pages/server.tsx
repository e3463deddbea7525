/**
 * `#/servers/<mcp_id>` and `#/servers/<mcp_id>/tools/<name>`: what a built server offers, each tool,
 * resource and prompt with its description, schemas, handler type and the place in the definition
 * file where it is written (when the build said where). The route of one tool scrolls to it, marks it
 * and moves the keyboard focus there.
 */
import { useEffect } from 'preact/hooks';
import { getJson } from '../api.js';
import { ErrorBox, Loading, Section } from '../components/common.js';
import { usePolling } from '../hooks.js';
import { routeHref } from '../route.js';
import {
  anchorId,
  placeOf,
  readableJson,
  toServerDefinition,
  type DefinedItem,
  type ServerDefinition,
} from '../server-definition.js';

export function ServerPage({ id, tool }: { id: string; tool?: string | undefined }) {
  const { data, error } = usePolling(
    async (signal) =>
      toServerDefinition(await getJson<unknown>(`/v1/servers/${encodeURIComponent(id)}/definition`, { signal })),
    id,
    0,
  );
  return (
    <>
      <p class="crumbs">
        <a href={routeHref({ page: 'deployments' })}>Deployments</a> / {id}
      </p>
      {data === undefined ? (
        error === undefined ? (
          <Loading what="the server" />
        ) : (
          <ErrorBox error={error} />
        )
      ) : (
        <Server server={data} tool={tool} />
      )}
    </>
  );
}

function Server({ server, tool }: { server: ServerDefinition; tool: string | undefined }) {
  const missing = tool !== undefined && !server.tools.some((item) => item.key === tool);
  useEffect(() => {
    if (tool === undefined) return;
    const element = document.getElementById(anchorId('tool', tool));
    if (element === null) return;
    element.scrollIntoView({ block: 'start' });
    element.focus({ preventScroll: true });
  }, [server, tool]);
  return (
    <>
      <div class="page-head">
        <h1>
          {server.name} {server.version === undefined ? null : <span class="muted">{server.version}</span>}
        </h1>
      </div>
      <dl class="summary card">
        <dt>Server</dt>
        <dd class="mono">{server.mcpId}</dd>
        {server.description === undefined ? null : (
          <>
            <dt>Description</dt>
            <dd>{server.description}</dd>
          </>
        )}
        <dt>Built from</dt>
        <dd>
          {server.file === undefined ? (
            <span class="muted">not recorded (built from a request without a file, or by an earlier version)</span>
          ) : (
            <code>{server.file}</code>
          )}
        </dd>
      </dl>
      {missing ? (
        <p class="notice" role="status">
          {server.name} has no tool <code>{tool}</code>: its definition may have changed since the test run.
        </p>
      ) : null}
      <Items title="Tools" items={server.tools} file={server.file} selected={tool} />
      <Items title="Resources" items={server.resources} file={server.file} />
      <Items title="Prompts" items={server.prompts} file={server.file} />
    </>
  );
}

function Items({
  title,
  items,
  file,
  selected,
}: {
  title: string;
  items: DefinedItem[];
  file: string | undefined;
  selected?: string | undefined;
}) {
  if (items.length === 0) return null;
  return (
    <Section title={`${title} (${items.length})`}>
      <ul class="items">
        {items.map((item) => (
          <Item key={item.key} item={item} file={file} selected={item.key === selected} />
        ))}
      </ul>
    </Section>
  );
}

function Item({ item, file, selected }: { item: DefinedItem; file: string | undefined; selected: boolean }) {
  const place = placeOf(file, item);
  const id = anchorId(item.kind, item.key);
  return (
    <li
      id={id}
      class={selected ? 'item item-selected' : 'item'}
      tabIndex={-1}
      aria-labelledby={`${id}-name`}
      aria-current={selected ? 'true' : undefined}
    >
      <h3 id={`${id}-name`}>
        <span class="mono">{item.key}</span>
        {item.label === undefined ? null : <span class="muted"> · {item.label}</span>}
      </h3>
      {item.description === undefined ? null : <p>{item.description}</p>}
      <dl class="summary">
        {item.handler === undefined ? null : (
          <>
            <dt>Handler</dt>
            <dd>{item.handler}</dd>
          </>
        )}
        {item.mimeType === undefined ? null : (
          <>
            <dt>Media type</dt>
            <dd>{item.mimeType}</dd>
          </>
        )}
        <dt>Defined at</dt>
        <dd class="defined-at">
          {place === undefined ? <span class="muted">not recorded</span> : <code>{place}</code>}
        </dd>
      </dl>
      {item.details.map((detail) => (
        <details key={detail.label} open={detail.label === 'Input schema'}>
          <summary>{detail.label}</summary>
          {/* text, escaped by Preact like every other text from the service */}
          <pre class="schema">{readableJson(detail.value)}</pre>
        </details>
      ))}
    </li>
  );
}
