/**
 * Unix socket files: a server that was killed leaves its file behind, and a new server cannot
 * listen at that path until it is gone. Imports only node: modules.
 */
import { lstatSync, rmSync } from 'node:fs';

/** Removes the socket file at `path`, if one is there; a file of any other kind is left alone. */
export function removeSocketFile(path: string): void {
  try {
    if (lstatSync(path).isSocket()) rmSync(path, { force: true });
  } catch {
    // not there, or already gone
  }
}
