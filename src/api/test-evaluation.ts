/**
 * The parts of the test contract that measure a run (its evaluation against \`expect\`, the tokens
 * it used) and the service's models (GET /v1/models, POST /v1/engine/reload): extensions of
 * \`POST /v1/test\` (docs/api.md), apart from operations.ts, which re-exports them.
 */
import { z } from 'zod';
import { ENV_NAME_PATTERN } from '../definition/names.js';

/** How an expected call fared: the call that matched it, or why the closest one did not. */
export const CallCheck = z.looseObject({
  tool: z.string(),
  matched: z.boolean(),
  call: z.number().int().nonnegative().optional().describe('index in tool_calls of the matching (or closest) call'),
  mismatches: z
    .array(z.looseObject({ path: z.string(), expected: z.string(), got: z.string() }))
    .optional()
    .describe('where the closest call differs: the argument, what was expected, what it sent'),
});

/** A criterion of expect.reply and the judge's verdict. */
export const ReplyVerdict = z.looseObject({
  criterion: z.string(),
  passed: z.boolean(),
  reason: z.string().optional(),
});

/** The run measured against the request's `expect` (docs/api.md). */
export const TestEvaluation = z.looseObject({
  precision: z.number().min(0).max(1).optional().describe('tools used that were expected / tools used'),
  recall: z.number().min(0).max(1).optional().describe('tools expected that were used / tools expected'),
  expected_tools: z.array(z.string()).optional(),
  unexpected_tools: z.array(z.string()).optional(),
  missed_tools: z.array(z.string()).optional(),
  calls: z.array(CallCheck).optional(),
  reply: z
    .looseObject({
      judge: z.string(),
      criteria: z.array(ReplyVerdict),
      error: z.string().optional().describe('why the judge gave no verdict'),
    })
    .optional(),
});
export type TestEvaluation = z.infer<typeof TestEvaluation>;

/** Tokens the model reported for the run, all turns added up. */
export const TokenUsage = z.looseObject({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
});

/** GET /v1/models: the models of `POST /v1/test`, and whether the service can run each now. */
export const ModelStatus = z.looseObject({
  id: z.string(),
  default: z.boolean().optional(),
  available: z.boolean(),
  /** the variable the service needs for this model */
  key_variable: z.string().optional(),
  /** why it cannot run now */
  reason: z.string().optional(),
  // Extensions
  provider: z.string().optional().describe('anthropic, openai, openai-compatible or gemini; none: the offline planner'),
  model: z.string().optional().describe("the provider's name of the model"),
  base_url: z.string().optional().describe("the provider's address, when the service's settings give one"),
  source: z.string().optional().describe('built-in, or settings: an entry of the engine settings'),
});
export type ModelStatus = z.infer<typeof ModelStatus>;
/** A wrong entry of the service's model settings: `path` names the file and the field. */
export const ModelProblem = z.looseObject({ path: z.string(), message: z.string() });
export type ModelProblem = z.infer<typeof ModelProblem>;
export const ModelList = z.looseObject({ models: z.array(ModelStatus), problems: z.array(ModelProblem).optional() });
export type ModelList = z.infer<typeof ModelList>;

/** POST /v1/engine/reload: the engine reads its model settings again; `env` adds key variables it lacks. */
export const ReloadRequest = z.strictObject({
  env: z
    .record(z.string().regex(ENV_NAME_PATTERN, 'must be an environment variable name'), z.string().max(8192))
    .optional()
    .describe('values of the variables the models name (api_key_env); kept in memory only, never logged'),
});
export type ReloadRequest = z.infer<typeof ReloadRequest>;
