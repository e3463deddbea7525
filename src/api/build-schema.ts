/**
 * `POST /v1/build`'s request as a zod schema: the spec's fields with the definition's own item
 * schemas (tools, resources, prompts, auth), and the files a definition ships. Apart from
 * `contract.ts` because it builds the definition's schema, which the commands that only read
 * answers do not load (`deploy <mcp_id>`, `status`, `ls` …: test/cli/startup.e2e.test.ts).
 *
 * Pure: no IO.
 */
import { z } from 'zod';
import {
  AuthConfig,
  EgressConfig,
  LIMITS,
  PromptDefinition,
  ResourceDefinition,
  SERVER_NAME_PATTERN,
  TEMPLATES,
  ToolDefinition,
} from '../definition/schema.js';
import { cacheHint, icons } from '../definition/listing-schema.js';

export const FileEntry = z.strictObject({
  encoding: z.enum(['utf8', 'base64']),
  content: z.string(),
});

/** Where an item is written in the definition file: 1-based line and column of its node. */
export const SourcePosition = z.strictObject({
  line: z.number().int().min(1).max(10_000_000),
  column: z.number().int().min(1).max(1_000_000),
});

/** A record of positions keyed by item, with no more entries than a server may have items. */
function positions(key: z.ZodString, max: number) {
  return z
    .record(key, SourcePosition)
    .refine((entries) => Object.keys(entries).length <= max, `at most ${max} entries (the items a server may have)`)
    .optional();
}

/**
 * Where the definition was written, for people reading the server later (the dashboard's server page).
 * Kept beside the definition in the server's record: never part of the bundle or its digest, so the
 * same definition built from another path is the same server.
 */
export const BuildSource = z.strictObject({
  file: z.string().min(1).max(1024).describe('the definition file as the user named it; relative stays relative'),
  tools: positions(z.string().min(1).max(64), LIMITS.tools),
  resources: positions(z.string().min(1).max(2048), LIMITS.resources),
  prompts: positions(z.string().min(1).max(64), LIMITS.prompts),
});
export type BuildSource = z.infer<typeof BuildSource>;

export const BuildRequest = z.strictObject({
  name: z
    .string()
    .regex(SERVER_NAME_PATTERN, 'must start with a letter or digit; letters, digits, ., _ or -; at most 64'),
  template: z.enum(TEMPLATES),
  tools: z.array(ToolDefinition).optional(),
  resources: z.array(ResourceDefinition).optional(),
  prompts: z.array(PromptDefinition).optional(),
  // Extensions (docs/api.md, "Build extensions"): a service that does not know them ignores them.
  version: z.string().optional(),
  description: z.string().optional(),
  instructions: z.string().optional(),
  icons,
  cache: cacheHint.optional(),
  auth: AuthConfig.optional(),
  sessions: z.boolean().optional(),
  egress: EgressConfig.optional(),
  files: z
    .record(z.string().min(1), FileEntry)
    .optional()
    .describe('files the definition references, by path relative to the definition'),
  source: BuildSource.optional(),
});
export type BuildRequest = z.infer<typeof BuildRequest>;
export type BuildRequestInput = z.input<typeof BuildRequest>;
