/**
 * The answer of `POST /v1/dashboard/codes`: a one-time code that logs a browser in to the
 * engine's dashboard, and the page's URL that carries it (in the fragment, never sent to a server
 * or kept in a proxy's log). Pure: no IO.
 */
import { z } from 'zod';

export const DashboardCode = z.looseObject({
  code: z.string(),
  url: z.string(),
  expires_at: z.string(),
});
export type DashboardCode = z.infer<typeof DashboardCode>;
