/**
 * Fields a definition shares across what clients list (the server, tools, resources, prompts):
 * icons a client may show beside them, and how long a client may keep a list or a read (the
 * 2026-07-28 revision's caching hints). Pure: no IO.
 */
import { z } from 'zod';

/** The longest caching hint a definition may give: a day. */
export const MAX_CACHE_TTL_MS = 86_400_000;

const iconSource = z
  .string()
  .regex(
    /^(https:\/\/[^\s]+|data:[\w.+-]+\/[\w.+-]+(;[\w=.+-]+)*,[^\s]*)$/,
    'must be an https:// URL or a data: URI (data:image/png;base64,...)',
  )
  .describe('where the client fetches the icon: an https:// URL or a data: URI');

export const icon = z
  .strictObject({
    src: iconSource,
    mimeType: z
      .string()
      .regex(/^image\/[\w.+-]+$/, 'must be an image media type such as image/png')
      .optional(),
    sizes: z
      .array(z.string().regex(/^(\d+x\d+|any)$/, 'must be WIDTHxHEIGHT (such as 48x48) or any'))
      .optional()
      .describe('sizes the icon fits, such as 48x48, or any for a scalable one'),
    theme: z.enum(['light', 'dark']).optional().describe('the background the icon is drawn for'),
  })
  .describe('an icon a client may show beside the name');

export const icons = z.array(icon).min(1, 'list at least one icon').max(16).optional();

/**
 * A caching hint: how long (`ttl_ms`) and by whom (`scope`) a result may be kept. Sent to clients
 * of the 2026-07-28 revision as `ttlMs` and `cacheScope`; older clients do not see it.
 */
export const cacheHint = z
  .strictObject({
    ttl_ms: z
      .number()
      .int()
      .min(0)
      .max(MAX_CACHE_TTL_MS)
      .describe('how long a client may reuse the result, in milliseconds; 0: ask again each time'),
    scope: z
      .enum(['public', 'private'])
      .optional()
      .describe('public: any cache may keep it and give it to other users; private (default): only the caller'),
  })
  .describe('how long clients may keep the result (2026-07-28 caching hints)');
