/**
 * The schema of `tests:`, the cases `mcpctl test` asks an agent and what it expects of each. Not
 * sent to /v1/build. Built on first use. Pure: no IO.
 */
import { z } from 'zod';
import { argExpectationProblems } from '../shared/arg-expectations.js';
import { once } from './schema-fields.js';

/** A tool call a case expects, with the arguments it expects (shared/arg-expectations.ts). */
export const callExpectation = once(() =>
  z.strictObject({
    tool: z.string().min(1),
    args: z
      .record(z.string(), z.json())
      .superRefine((args, ctx) => {
        for (const problem of argExpectationProblems(args)) ctx.addIssue({ code: 'custom', ...problem });
      })
      .optional()
      .describe(
        'expected arguments: a value exactly; an object by the keys it gives; { match: "/re/i" }; { approx: n, within: d }; { equals: value }',
      ),
  }),
);

export const testExpectations = once(() =>
  z.strictObject({
    tools: z.array(z.string()).optional().describe('tools the agent must call; [] for a message that should call none'),
    not_tools: z.array(z.string()).optional().describe('tools the agent must not call'),
    resources: z.array(z.string()).optional().describe('resource URIs the agent must read'),
    response_contains: z.array(z.string()).optional().describe('substrings of the reply (case-insensitive)'),
    calls: z
      .array(callExpectation())
      .optional()
      .describe('calls the agent must make, each matched by some call of its tool, in any order'),
    reply: z
      .array(z.string().min(1).max(1_000))
      .max(32)
      .optional()
      .describe('criteria the reply must meet, scored by the judge model (tests.judge)'),
    min_success_rate: z.number().min(0).max(1).optional(),
  }),
);

export const testCase = once(() =>
  z.strictObject({
    name: z.string().min(1),
    message: z.string().min(1),
    model: z.string().optional(),
    user_id: z.string().optional(),
    expect: testExpectations().optional(),
  }),
);

export const testsConfig = once(() =>
  z.strictObject({
    model: z.string().optional().describe('default AI model for the cases'),
    threshold: z.number().min(0).max(1).default(0.8).describe('success rate below which `mcpctl test` fails'),
    judge: z.string().optional().describe('the model that scores replies against expect.reply; default mcpctl-local'),
    cases: z.array(testCase()).min(1),
  }),
);
