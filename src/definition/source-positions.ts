/**
 * Where each tool, resource and prompt of a loaded definition is written: the line and column of its
 * node, found the way problems are placed (`LoadedDefinition.locate`). A build sends them so that a
 * page can say "defined at server.yaml:14:5". Pure: no IO.
 */
import type { LoadedDefinition, Position } from './load.js';

export interface ItemPositions {
  /** by tool name */
  tools?: Record<string, Position>;
  /** by resource uri */
  resources?: Record<string, Position>;
  /** by prompt name */
  prompts?: Record<string, Position>;
}

/** The position of every item the definition declares; a section without items is left out. */
export function itemPositions(loaded: LoadedDefinition): ItemPositions {
  const d = loaded.definition;
  const out: ItemPositions = {};
  const tools = positionsOf(
    loaded,
    'tools',
    (d.tools ?? []).map((tool) => tool.name),
  );
  const resources = positionsOf(
    loaded,
    'resources',
    (d.resources ?? []).map((resource) => resource.uri),
  );
  const prompts = positionsOf(
    loaded,
    'prompts',
    (d.prompts ?? []).map((prompt) => prompt.name),
  );
  if (tools !== undefined) out.tools = tools;
  if (resources !== undefined) out.resources = resources;
  if (prompts !== undefined) out.prompts = prompts;
  return out;
}

function positionsOf(
  loaded: LoadedDefinition,
  section: 'tools' | 'resources' | 'prompts',
  keys: readonly string[],
): Record<string, Position> | undefined {
  // Object.fromEntries makes own properties even of a name such as `__proto__`, which assignment would not
  const entries = keys.flatMap((key, index): Array<[string, Position]> => {
    const at = loaded.locate([section, index]);
    return at === undefined ? [] : [[key, { line: at.line, column: at.column }]];
  });
  return entries.length === 0 ? undefined : Object.fromEntries(entries);
}
