/**
 * The schema of a resource: the spec's fields plus where its content comes from (inline text, a
 * file of the definition, a URL). Built on first use, when a definition has resources. Pure: no IO.
 */
import { z } from 'zod';
import { RESOURCE_URI_PATTERN } from './names.js';
import { completion } from './completion-schema.js';
import { description, httpUrl, maxBytes, once, timeoutMs } from './schema-fields.js';
import { cacheHint, icons } from './listing-schema.js';

export const resourceSource = once(() =>
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('text'), text: z.string() }).describe('inline content; may use templates'),
    z
      .strictObject({ type: z.literal('file'), path: z.string().min(1) })
      .describe('a file inside the definition folder; the path may use templates'),
    z
      .strictObject({
        type: z.literal('url'),
        url: httpUrl,
        headers: z.record(z.string(), z.string()).optional(),
        timeout_ms: timeoutMs.default(10_000),
        max_bytes: maxBytes.default(1024 * 1024),
      })
      .describe('fetched when read; template values are URL-encoded'),
  ]),
);

export const resourceDefinition = once(() =>
  z.strictObject({
    uri: z.string().regex(RESOURCE_URI_PATTERN, 'must have the form <scheme>://<name>, for example notes://today'),
    name: z.string().min(1, 'must not be empty'),
    title: z.string().optional(),
    description,
    mimeType: z
      .string()
      .regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a media type such as text/plain')
      .optional(),
    icons,
    source: resourceSource().optional(),
    per_user: z.boolean().optional().describe('content depends on the caller: templates may use {{user.id}}'),
    users: z.array(z.string().min(1)).optional().describe('only these user ids may read it'),
    cache: cacheHint.optional().describe("how long clients may keep what a read returns; default: the server's cache"),
    complete: z
      .record(z.string().min(1), completion())
      .optional()
      .describe('what completion/complete offers for each variable of a URI template'),
  }),
);
