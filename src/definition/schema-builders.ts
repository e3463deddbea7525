/**
 * The schemas of src/definition/schema.ts, built as they are first used: the sections a definition
 * file may leave out (resources, prompts, auth, deploy, tests) are built only when the file has
 * them (serverDefinitionFor), since building every zod schema is a good part of what `validate`
 * costs. schema.ts, the public module, builds them all. Each section's schema is in a file of its
 * own (tool-schema.ts, resource-schema.ts, prompt-schema.ts, deploy-schema.ts, tests-schema.ts...);
 * this one puts the whole definition together. Pure: no IO.
 */
import { z } from 'zod';
import { LIMITS, SERVER_NAME_PATTERN, TEMPLATES } from './names.js';
import { authConfigSchema } from './auth-schema.js';
import { egressConfigSchema } from './egress-schema.js';
import { description, once } from './schema-fields.js';
import { cacheHint, icons } from './listing-schema.js';
import { ToolDefinition } from './tool-schema.js';
import { resourceDefinition } from './resource-schema.js';
import { promptDefinition } from './prompt-schema.js';
import { deployDefaults } from './deploy-schema.js';
import { testsConfig } from './tests-schema.js';

export { ContentItem } from './content-schema.js';
export { InputSchema, ToolAnnotations, ToolDefinition, ToolHandler } from './tool-schema.js';
export { completionFunction } from './completion-schema.js';
export { resourceDefinition, resourceSource } from './resource-schema.js';
export { promptArgument, promptDefinition, promptMessage } from './prompt-schema.js';
export { deployDefaults, resourcesConfig, scalingConfig } from './deploy-schema.js';
export { testCase, testExpectations, testsConfig } from './tests-schema.js';

// Runtime options (extension): who may call the server (auth-schema.ts), and what it may reach.
export const authConfig = once(authConfigSchema);
export const egressConfig = once(egressConfigSchema);

// ---------------------------------------------------------------------------------------------
// The whole definition.

/** The sections a definition may leave out: built when first used. */
const sections = {
  auth: once(() => authConfig().optional()),
  egress: once(() => egressConfig().optional()),
  resources: once(() => z.array(resourceDefinition()).max(LIMITS.resources).optional()),
  prompts: once(() => z.array(promptDefinition()).max(LIMITS.prompts).optional()),
  deploy: once(() => deployDefaults().optional()),
  tests: once(() => testsConfig().optional()),
};
type Section = keyof typeof sections;
type Sections = { [K in Section]: ReturnType<(typeof sections)[K]> };
const SECTIONS = Object.keys(sections) as Section[];

function serverDefinitionWith(section: Sections) {
  return z.strictObject({
    $schema: z.string().optional(),
    name: z
      .string()
      .regex(SERVER_NAME_PATTERN, 'must start with a letter or digit; letters, digits, ., _ or -; at most 64'),
    version: z.string().min(1).optional().describe('server version reported to clients; default 0.1.0'),
    description: description.optional(),
    template: z.enum(TEMPLATES),
    instructions: z.string().optional().describe('instructions sent to clients at initialization'),
    icons,
    cache: cacheHint
      .optional()
      .describe('how long clients may keep the lists of tools, resources and prompts, and resource reads'),
    auth: section.auth,
    sessions: z
      .boolean()
      .optional()
      .describe(
        'keep a session per client (Mcp-Session-Id): needed for sampling, elicitation, subscriptions and logging levels; default false (stateless)',
      ),
    egress: section.egress,
    include: z
      .array(z.string().min(1))
      .optional()
      .describe('more files or folders to ship with the build, relative to the definition (scripts, data)'),
    tools: z.array(ToolDefinition).max(LIMITS.tools).optional(),
    resources: section.resources,
    prompts: section.prompts,
    deploy: section.deploy,
    tests: section.tests,
  });
}

export type ServerDefinitionSchema = ReturnType<typeof serverDefinitionWith>;

/** The whole schema of a definition, every section built. */
export const serverDefinition = once(() => serverDefinitionWith(sectionsFor(SECTIONS)));

function sectionsFor(present: readonly Section[]): Sections {
  const absent = z.never().optional();
  return Object.fromEntries(
    SECTIONS.map((name) => [name, present.includes(name) ? sections[name]() : absent]),
  ) as unknown as Sections;
}

const withSections = new Map<string, ServerDefinitionSchema>();

/**
 * The schema of a definition for this input: the optional sections the input does not have are
 * a stand-in that only says it is optional, which is all that parsing asks of a field that is
 * absent, so the result and the issues are those of the whole schema (serverDefinition).
 */
export function serverDefinitionFor(input: unknown): ServerDefinitionSchema {
  const present = SECTIONS.filter((name) => input !== null && typeof input === 'object' && Object.hasOwn(input, name));
  if (present.length === SECTIONS.length) return serverDefinition();
  const key = present.join(' ');
  let schema = withSections.get(key);
  if (schema === undefined) {
    schema = serverDefinitionWith(sectionsFor(present));
    withSections.set(key, schema);
  }
  return schema;
}

/**
 * The JSON Schema editors use to complete and check a definition (draft-07, the input side:
 * fields with defaults are optional). `scripts/gen-schema.js` writes it to `schema/`.
 */
export function toEditorJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(serverDefinition(), { target: 'draft-07', io: 'input', unrepresentable: 'any' });
  const { $schema, ...rest } = generated as Record<string, unknown>;
  return {
    $schema,
    title: 'mcpctl server definition',
    description:
      'A server definition for mcpctl: tools, resources and prompts, with handlers, deploy defaults and tests.',
    ...rest,
    // Top-level `x-` keys are ignored by the loader: a place for YAML anchors.
    patternProperties: { '^x-': {} },
  };
}
