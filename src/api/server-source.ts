/**
 * What `GET /v1/servers/{mcp_id}/definition` answers that the CLI reads: the definition file a
 * server was built from, as the build named it (docs/api.md). An extension: a service without it,
 * or a server built without `source`, has no `file`.
 */
import { z } from 'zod';

export const ServerSource = z.looseObject({
  mcp_id: z.string(),
  name: z.string(),
  file: z.string().optional(),
});
export type ServerSource = z.infer<typeof ServerSource>;
