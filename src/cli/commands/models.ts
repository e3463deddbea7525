/**
 * `mcpctl models`: the service's test models (built-in, and from its settings) and whether each
 * can run now; `mcpctl engine reload`: the engine reads its model settings again and, when it is
 * the local engine, takes the values of the key variables its models name from this shell. Nothing
 * that runs is stopped.
 */
import type { ModelList } from '../../api/operations.js';
import { withApi } from '../api-errors.js';
import type { CommandContext } from '../context.js';
import type { Printer } from '../output.js';
import { serviceText } from '../render/service-text.js';

export async function modelsCommand(ctx: CommandContext): Promise<void> {
  const list = await withApi(ctx, (client) => client.modelList());
  ctx.out.result(
    { models: list.models, problems: list.problems ?? [] },
    (p) => {
      renderModels(p, list);
      if (list.models.some((m) => !m.available))
        p.next('set what a model lacks, then `mcpctl engine reload` (deployments keep running)');
    },
    { quiet: () => list.models.filter((m) => m.available).map((m) => m.id) },
  );
}

export async function engineReloadCommand(ctx: CommandContext): Promise<void> {
  const { list, handed } = await withApi(ctx, async (client, connection) => {
    const first = await client.reloadEngine();
    // keys go only to the local engine, over loopback; a remote service keeps its own
    if (!connection.local) return { list: first, handed: [] as string[] };
    const env: Record<string, string> = {};
    for (const model of first.models) {
      const variable = model.key_variable;
      const value = variable === undefined ? undefined : ctx.io.env[variable]?.trim();
      if (variable !== undefined && value !== undefined && value !== '') env[variable] = value;
    }
    const names = Object.keys(env).sort();
    if (names.length === 0) return { list: first, handed: names };
    return { list: await client.reloadEngine({ env }), handed: names };
  });
  const ready = list.models.filter((m) => m.available).length;
  ctx.out.result(
    { reloaded: true, keys_handed_over: handed, models: list.models, problems: list.problems ?? [] },
    (p) => {
      p.success(`the engine read its model settings again: ${ready} of ${list.models.length} models can run`);
      if (handed.length > 0) p.fields([['keys handed over', handed.join(', ')]]);
      renderModels(p, list);
      p.next('`mcpctl models` lists them again; deployments kept running');
    },
  );
}

function renderModels(p: Printer, list: ModelList): void {
  const rows = list.models.map((m) => [
    `${serviceText(m.id)}${m.default === true ? ' (default)' : ''}`,
    serviceText(m.provider ?? 'offline'),
    serviceText(m.model ?? '—'),
    m.available ? 'ready' : `✖ ${serviceText(m.reason ?? 'cannot run now')}`,
  ]);
  p.table(['MODEL', 'PROVIDER', 'NAME', 'STATUS'], rows);
  for (const problem of list.problems ?? [])
    p.warn(`${serviceText(problem.path)}: ${serviceText(problem.message)} (this entry is left out)`);
}
