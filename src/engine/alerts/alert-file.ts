/**
 * The alerts on disk: `<home>/store/alerts/state.json` (folder 0700, file 0600, written atomically
 * as the store writes its records) holds the pending and firing alerts and those resolved lately,
 * so that an engine restarted during an incident neither sends "firing" again nor forgets to send
 * "resolved", and `mcpctl alerts` still lists what resolved before it. A file that cannot be read
 * is moved aside to `<home>/store/unreadable/` and the engine starts with no alerts.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ALERT_KINDS, ALERT_SEVERITIES, LATENCY_PERCENTILES } from '../../definition/alerts-schema.js';
import type { Logger } from '../engine-log.js';
import { ensureDir, removeStaleTemps, writeFileAtomic } from '../store/atomic.js';
import { moveAside } from '../store/unreadable.js';
import type { AlertState } from './evaluate.js';

export const ALERT_FILE_SCHEMA_VERSION = 1;
const FILE = 'state.json';

const StoredRule = z.object({
  name: z.string(),
  type: z.enum(ALERT_KINDS),
  severity: z.enum(ALERT_SEVERITIES),
  forSeconds: z.number(),
  windowSeconds: z.number(),
  threshold: z.number(),
  percentile: z.enum(LATENCY_PERCENTILES).optional(),
  minRequests: z.number(),
  forText: z.string(),
  windowText: z.string(),
});

const StoredAlert = z.object({
  deploymentId: z.string(),
  server: z.string(),
  environment: z.string(),
  rule: StoredRule,
  state: z.enum(['pending', 'firing', 'resolved']),
  since: z.number(),
  firedAt: z.number().optional(),
  resolvedAt: z.number().optional(),
  value: z.number().nullable(),
  summary: z.string(),
  sentAt: z.number().optional(),
  /** failed_rollout: the deployments running when it fired */
  runningAtFailure: z.array(z.string()).optional(),
});
export type StoredAlert = AlertState & { runningAtFailure?: string[] };

const AlertFileBody = z.object({
  schema_version: z.literal(ALERT_FILE_SCHEMA_VERSION),
  written_at: z.string(),
  active: z.array(StoredAlert),
  recent: z.array(StoredAlert),
});

export interface StoredAlerts {
  active: StoredAlert[];
  recent: StoredAlert[];
}

/** The alerts kept in `dir`; none when there is no file yet, or when it is damaged (then moved aside). */
export async function loadAlerts(dir: string, logger: Logger): Promise<StoredAlerts> {
  await ensureDir(dir);
  await removeStaleTemps(dir);
  let text: string;
  try {
    text = await readFile(join(dir, FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { active: [], recent: [] };
    throw error;
  }
  try {
    const body = AlertFileBody.parse(JSON.parse(text));
    return { active: body.active, recent: body.recent };
  } catch (error) {
    const target = await moveAside(join(dir, '..'), 'alerts', FILE, error);
    logger.warn('the alerts file could not be read: moved aside, alerting starts afresh', {
      file: target,
      error:
        error instanceof z.ZodError ? error.issues.map((i) => `${i.path.join('.')}: ${i.message}`)[0] : String(error),
    });
    return { active: [], recent: [] };
  }
}

/** Writes the alerts to `dir`. */
export async function saveAlerts(dir: string, alerts: StoredAlerts, now: number): Promise<void> {
  const body = {
    schema_version: ALERT_FILE_SCHEMA_VERSION,
    written_at: new Date(now).toISOString(),
    active: alerts.active,
    recent: alerts.recent,
  };
  await ensureDir(dir);
  await writeFileAtomic(join(dir, FILE), `${JSON.stringify(body)}\n`, { mode: 0o600 });
}
