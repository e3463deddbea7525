/**
 * The schema of `tests:`, the cases `mcpctl test` asks an agent and what it expects of each. Not
 * sent to /v1/build. Built on first use. Pure: no IO.
 */
import { z } from 'zod';
import { once } from './schema-fields.js';

export const testExpectations = once(() =>
  z.strictObject({
    tools: z.array(z.string()).optional().describe('tools the agent must call; [] for a message that should call none'),
    not_tools: z.array(z.string()).optional().describe('tools the agent must not call'),
    resources: z.array(z.string()).optional().describe('resource URIs the agent must read'),
    response_contains: z.array(z.string()).optional().describe('substrings of the reply (case-insensitive)'),
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
    cases: z.array(testCase()).min(1),
  }),
);
