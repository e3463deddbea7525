/**
 * The schema of content: what tools return and prompts say (text, JSON, images, audio, embedded
 * resources). Text fields may use {{...}} templates. Pure: no IO.
 */
import { z } from 'zod';
import { RESOURCE_URI_PATTERN } from './names.js';

const TextContent = z.strictObject({ type: z.literal('text'), text: z.string() });
const JsonContent = z
  .strictObject({ type: z.literal('json'), json: z.unknown() })
  .describe('structured content, also sent as its JSON text');
const MediaContent = (kind: 'image' | 'audio') =>
  z
    .strictObject({
      type: z.literal(kind),
      mimeType: z.string().regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a media type such as image/png'),
      data: z.string().optional().describe('base64 data'),
      path: z.string().optional().describe('file relative to the definition'),
    })
    .refine((c) => (c.data === undefined) !== (c.path === undefined), {
      message: `an ${kind} needs exactly one of data or path`,
    });
const EmbeddedResourceContent = z
  .strictObject({
    type: z.literal('resource'),
    uri: z
      .string()
      .regex(
        new RegExp(`${RESOURCE_URI_PATTERN.source}|\\{\\{`),
        'must be <scheme>://<name>, or a {{...}} template that renders one',
      ),
    mimeType: z.string().optional(),
    text: z.string().optional(),
  })
  .describe('a resource embedded in the result; without text, the defined resource of that uri is read');

// Discriminated on `type`, so a wrong item reports the fields of its own kind, not of every kind.
export const ContentItem = z.discriminatedUnion('type', [
  TextContent,
  JsonContent,
  MediaContent('image'),
  MediaContent('audio'),
  EmbeddedResourceContent,
]);
