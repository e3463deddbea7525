/**
 * The schema of a prompt: its arguments and messages (the spec does not show their fields; these
 * follow MCP's prompt shape). Built on first use, when a definition has prompts. Pure: no IO.
 */
import { z } from 'zod';
import { IDENTIFIER_PATTERN } from './names.js';
import { completion } from './completion-schema.js';
import { ContentItem } from './content-schema.js';
import { description, once } from './schema-fields.js';
import { icons } from './listing-schema.js';

export const promptArgument = once(() =>
  z.strictObject({
    name: z.string().regex(IDENTIFIER_PATTERN, 'must be an identifier (letters, digits, _ or -)'),
    description: z.string().optional(),
    required: z.boolean().optional(),
    enum: z
      .array(z.string())
      .min(1, 'list at least one value')
      .max(1000)
      .optional()
      .describe('the only values accepted; completion/complete offers them'),
    complete: completion().optional().describe('what completion/complete offers for this argument (default: its enum)'),
  }),
);

export const promptMessage = once(() =>
  z.strictObject({
    role: z.enum(['user', 'assistant']),
    content: z.union([z.string(), ContentItem]).describe('text (may use {{args.name}}), or a content item'),
  }),
);

export const promptDefinition = once(() =>
  z.strictObject({
    name: z.string().regex(IDENTIFIER_PATTERN, 'must be an identifier (letters, digits, _ or -)'),
    title: z.string().optional(),
    description: description.optional(),
    icons,
    arguments: z.array(promptArgument()).optional(),
    messages: z.array(promptMessage()).min(1).optional(),
    elicit: z
      .strictObject({
        message: z.string().min(1).describe('what the user is asked'),
        key: z
          .string()
          .regex(IDENTIFIER_PATTERN, 'must be an identifier (letters, digits, _ or -)')
          .optional()
          .describe("the question's key in a 2026-07-28 client's inputResponses (default: arguments)"),
      })
      .optional()
      .describe('asks the user (elicitation) for the arguments the client did not give; answers fill {{args.NAME}}'),
  }),
);
