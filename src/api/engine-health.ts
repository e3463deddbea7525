/** GET /v1/health: whether a service answers, and what of its state it could not read. */
import { z } from 'zod';

/** A file of the store the engine could not read, moved aside; its deployment or server is missing from every list. */
export const UnreadableRecord = z.object({
  /** where it is now */
  file: z.string(),
  /** deployment, server, test run, idempotency entry, metrics history, alerts, or unknown */
  kind: z.string(),
  moved_at: z.string().optional(),
  /** why it could not be read, when the engine running now moved it */
  reason: z.string().optional(),
  /** where it goes back once fixed; the engine reads it at its next start */
  restore_to: z.string().optional(),
});
export type UnreadableRecord = z.infer<typeof UnreadableRecord>;

/** The parts of the answer a client reads; an engine says more (docs/api.md). */
export const EngineHealth = z.looseObject({
  status: z.string(),
  version: z.string().optional(),
  unreadable_records: z.array(UnreadableRecord).optional(),
});
export type EngineHealth = z.infer<typeof EngineHealth>;
