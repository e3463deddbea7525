/**
 * Reads the engine's settings file (engine-settings.json in its home) for the settings resolver. A
 * missing file, or one that is not a JSON object, reads as empty: the engine's own start-up code
 * (engine-lock.ts) reports a broken file.
 */
import { readFile } from 'node:fs/promises';
import type { SettingsFile } from './settings-resolver.js';

export async function readSettingsFile(path: string): Promise<SettingsFile> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return { path, values: {} };
  }
  const isObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  return { path, values: isObject ? (parsed as Record<string, unknown>) : {} };
}
