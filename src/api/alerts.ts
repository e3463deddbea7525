/**
 * The answer of `GET /v1/alerts`: the alerts firing now, those whose condition holds but not yet for
 * long enough (pending), and those that resolved lately, per
 * deployment, and how many channels the engine sends them to. Pure: no IO.
 */
import { z } from 'zod';

export const ALERT_STATES = ['pending', 'firing', 'resolved'] as const;

export const Alert = z.looseObject({
  deployment_id: z.string(),
  server: z.string(),
  environment: z.string(),
  /** the rule's name (its type unless it has one) */
  rule: z.string(),
  type: z.string(),
  severity: z.string(),
  state: z.enum(ALERT_STATES),
  /** what the rule watches, in words */
  condition: z.string(),
  /** what was measured at the last evaluation (percent, ms, count), when the rule measures */
  value: z.number().nullable(),
  summary: z.string(),
  started_at: z.string(),
  resolved_at: z.string().optional(),
});
export type Alert = z.infer<typeof Alert>;

export const AlertList = z.looseObject({
  firing: z.array(Alert),
  /** the condition holds, not yet for the rule's `for` (absent from services that do not say) */
  pending: z.array(Alert).default([]),
  /** resolved lately, newest first */
  recent: z.array(Alert),
  /** the channels alerts go to; 0: they are only listed here */
  channels: z.number().int(),
});
export type AlertList = z.infer<typeof AlertList>;
