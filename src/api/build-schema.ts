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
  PromptDefinition,
  ResourceDefinition,
  SERVER_NAME_PATTERN,
  TEMPLATES,
  ToolDefinition,
} from '../definition/schema.js';

export const FileEntry = z.strictObject({
  encoding: z.enum(['utf8', 'base64']),
  content: z.string(),
});

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
  auth: AuthConfig.optional(),
  sessions: z.boolean().optional(),
  egress: EgressConfig.optional(),
  files: z
    .record(z.string().min(1), FileEntry)
    .optional()
    .describe('files the definition references, by path relative to the definition'),
});
export type BuildRequest = z.infer<typeof BuildRequest>;
export type BuildRequestInput = z.input<typeof BuildRequest>;
