/**
 * Which definition file a command reads: the file named, the `server.yaml` of a folder named, or
 * with nothing named the `server.yaml` of the working folder, as other deployment tools read their
 * project file.
 */
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { UserError } from '../../shared/errors.js';
import { displayPath } from '../../shared/paths.js';

export const DEFAULT_DEFINITION = 'server.yaml';

export interface DefinitionPath {
  /** the path to load, as given or made from the folder (relative to the working folder when it was) */
  path: string;
  /** how to name it in messages */
  shown: string;
  /** true when the user named the file itself */
  named: boolean;
}

/**
 * The file for `given` (a file, a folder, or nothing). A missing file named directly is left to
 * the loader, which says so with its own words; a folder without a definition is refused here.
 */
export async function definitionPath(
  cwd: string,
  given: string | undefined,
  options: { purpose?: string } = {},
): Promise<DefinitionPath> {
  if (given !== undefined && !(await isFolder(resolve(cwd, given)))) {
    return { path: given, shown: displayPath(resolve(cwd, given), cwd), named: true };
  }
  const path = given === undefined ? DEFAULT_DEFINITION : join(given, DEFAULT_DEFINITION);
  const shown = displayPath(resolve(cwd, path), cwd);
  if (!(await isFile(resolve(cwd, path)))) {
    const where = given === undefined ? 'this folder' : given;
    throw new UserError(`there is no ${DEFAULT_DEFINITION} in ${where}${purposeText(options.purpose)}`, {
      code: 'file_not_found',
      hint:
        given === undefined
          ? `name the definition file (or its folder), or run the command in the folder of a ${DEFAULT_DEFINITION}; \`mcpctl init\` writes one`
          : `name the definition file in ${given} itself`,
    });
  }
  return { path, shown, named: false };
}

function purposeText(purpose: string | undefined): string {
  return purpose === undefined ? '' : ` ${purpose}`;
}

async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * The definition file a command's argument names (a file, a folder, or nothing for ./server.yaml),
 * saying on stderr which file is read when the user did not name it.
 */
export async function chooseDefinition(
  ctx: { io: { cwd: string }; out: { notice(text: string): void } },
  given: string | undefined,
): Promise<string> {
  const picked = await definitionPath(ctx.io.cwd, given);
  if (!picked.named) ctx.out.notice(`using ${picked.shown}`);
  return picked.path;
}
