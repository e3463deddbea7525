/**
 * The folder a deployment's instances share for the state of their tasks (tools marked `task:`):
 * `<home>/tasks/<deployment id>/`, private to the engine's user, made before an instance starts
 * and removed with the deployment. The runner lets each instance of that deployment write there,
 * and nothing else of the engine's home: another deployment's tasks are out of its reach.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServerDefinition } from '../../definition/schema.js';

export function tasksDirOf(home: string, deploymentId: string): string {
  return join(home, 'tasks', deploymentId);
}

/** The definition has a tool that runs as a task. */
export function hasTaskTools(definition: Pick<ServerDefinition, 'tools'>): boolean {
  return (definition.tools ?? []).some((tool) => tool.task !== undefined);
}

/** The spec field of a deployment whose definition has a tool that runs as a task. */
export function tasksOf(owner: {
  id: string;
  ctx: { engine: string; server: { definition: Pick<ServerDefinition, 'tools'> } };
}): { tasksDir?: string } {
  if (!hasTaskTools(owner.ctx.server.definition)) return {};
  return { tasksDir: tasksDirOf(owner.ctx.engine, owner.id) };
}

export async function prepareTasksDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
}

export async function removeTasksDir(home: string, deploymentId: string): Promise<void> {
  await rm(tasksDirOf(home, deploymentId), { recursive: true, force: true });
}
