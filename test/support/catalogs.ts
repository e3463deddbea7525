/**
 * Agent test support: catalogs of definition files as a client would list them, the examples
 * and the init scaffolds (written by the real `mcpctl init` into temp folders).
 */
import { join } from 'node:path';
import { loadDefinition } from '../../src/definition/load.js';
import type { Catalog } from '../../src/engine/agent/agent-types.js';
import { runCli } from './cli.js';
import { tempDir } from './temp.js';

export const EXAMPLES = join(import.meta.dirname, '..', '..', 'examples');

export function exampleFile(name: string): string {
  return join(EXAMPLES, name, 'server.yaml');
}

/** The catalog a user would see: resources limited to `users` only when the user is one of them. */
export async function catalogOf(file: string, userId?: string): Promise<Catalog> {
  const { definition } = await loadDefinition(file);
  const resources = definition.resources ?? [];
  const visible = resources.filter((r) => r.users === undefined || (userId !== undefined && r.users.includes(userId)));
  return {
    instructions: definition.instructions,
    tools: (definition.tools ?? []).map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      outputSchema: t.outputSchema,
    })),
    resources: visible
      .filter((r) => !r.uri.includes('{'))
      .map((r) => ({ uri: r.uri, name: r.name, title: r.title, description: r.description, mimeType: r.mimeType })),
    templates: visible
      .filter((r) => r.uri.includes('{'))
      .map((r) => ({
        uriTemplate: r.uri,
        name: r.name,
        title: r.title,
        description: r.description,
        mimeType: r.mimeType,
      })),
  };
}

/** Scaffolds each template with `mcpctl init` (default tool names) into one temp folder. */
export async function scaffoldTemplates(): Promise<{ file(template: string): string; cleanup(): Promise<void> }> {
  const { dir, cleanup } = await tempDir('mcpctl-agent-');
  for (const template of ['basic', 'advanced', 'custom']) {
    const result = await runCli(['init', template, '--template', template, '--yes'], { cwd: dir, env: {} });
    if (result.code !== 0) throw new Error(`init ${template} failed: ${result.stderr}`);
  }
  return { file: (template) => join(dir, template, 'server.yaml'), cleanup };
}
