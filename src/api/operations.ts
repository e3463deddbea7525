/**
 * The `/v1` contract as zod schemas, all but the request of `POST /v1/build`: the envelope and
 * error body, and every other operation's request and answer. `contract.ts` is the whole contract
 * (this and `build-schema.ts`); the client and the commands that only read answers (`deploy
 * <mcp_id>`, `status`, `ls` …) import this, so they never build the definition's schema.
 *
 * Pure: no IO.
 */
import { z } from 'zod';
import { alertRules } from '../definition/alerts-schema.js';
import { IDLE_SECONDS_MAX } from '../definition/deploy-schema.js';
import { ENV_NAME_PATTERN, ENVIRONMENTS, TEMPLATES } from '../definition/names.js';
import { LOCAL_MODEL_ID } from '../shared/models.js';
import { argExpectationProblems } from '../shared/arg-expectations.js';
import { BAND_LABELS, CAUSE_KINDS } from './guidance.js';
import { TestEvaluation, TokenUsage } from './test-evaluation.js';

export {
  SUCCESS_BANDS,
  CAUSE_KINDS,
  classifySuccessRate,
  type Cause,
  type CauseKind,
  type Guidance,
} from './guidance.js';

export { ENVIRONMENTS, TEMPLATES };
export * from './test-evaluation.js';
export type Environment = (typeof ENVIRONMENTS)[number];

/** The model of a test that names none: the offline planner. The service decides which others it has. */
export const DEFAULT_AI_MODEL = LOCAL_MODEL_ID;

export const DEPLOYMENT_STATES = ['deploying', 'deployed', 'failed', 'stopped'] as const;
export type DeploymentState = (typeof DEPLOYMENT_STATES)[number];
export const BUILD_STATES = ['ready', 'failed'] as const;

/** Stable error codes, each with the HTTP status it travels with. */
export const ERROR_CODES = {
  invalid_json: 400,
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  expectation_failed: 417,
  validation_failed: 422,
  idempotency_mismatch: 422,
  build_failed: 422,
  deploy_failed: 422,
  rate_limited: 429,
  internal: 500,
  not_implemented: 501,
  /** a model the service offers but cannot run as it is set up: its key is not set */
  model_not_configured: 501,
  unavailable: 503,
  /** the engine's disk is full, or its user's quota used up: free space there */
  storage_full: 507,
  /** the engine may not write its files: a read-only file system, or their permissions */
  storage_unwritable: 507,
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

export const DEPLOYMENT_ID_PATTERN = /^deploy_[A-Za-z0-9]+$/;
export const MCP_ID_PATTERN = /^mcp_[A-Za-z0-9]+$/;

// ---------------------------------------------------------------------------------------------
// Envelope

export const Meta = z.looseObject({
  request_id: z.string().regex(/^req_/, 'must start with req_'),
  timestamp: z.iso.datetime({ offset: true }),
});
export type Meta = z.infer<typeof Meta>;

export const ErrorDetail = z.looseObject({
  path: z.string().describe('JSON path of the offending field, such as tools[0].name'),
  message: z.string(),
});
export type ErrorDetail = z.infer<typeof ErrorDetail>;

export const ErrorBody = z.looseObject({
  // A service may add codes: the client keeps any string and maps the ones it knows.
  code: z.string().min(1),
  message: z.string(),
  details: z.array(ErrorDetail).optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** The envelope around any `data` schema: success or failure, always with `meta`. */
export function envelope<T extends z.ZodType>(data: T) {
  return z.looseObject({
    success: z.boolean(),
    data: data.nullable(),
    meta: Meta,
    error: ErrorBody.optional(),
  });
}
/** An envelope whose `data` is not checked (used to read errors of any operation). */
export const AnyEnvelope = envelope(z.unknown());
export type Envelope<T> = { success: boolean; data: T | null; meta: Meta; error?: ErrorBody };

// ---------------------------------------------------------------------------------------------
// POST /v1/build

export const McpServer = z.looseObject({
  mcp_id: z.string().regex(MCP_ID_PATTERN, 'must have the form mcp_<id>'),
  name: z.string(),
  status: z.string().describe('ready after a successful build; failed otherwise'),
  url: z.string(),
  build_time: z.number().nonnegative().describe('seconds'),
  // Extensions
  reused: z
    .boolean()
    .optional()
    .describe('an identical definition was built before: this is that server, and build_time is this request’s'),
  template: z.enum(TEMPLATES).optional(),
  version: z.string().optional(),
  created_at: z.string().optional(),
  tools: z.number().int().optional(),
  resources: z.number().int().optional(),
  prompts: z.number().int().optional(),
  error: z.string().optional(),
  required_env: z
    .array(z.string())
    .optional()
    .describe(
      'variables the server needs when it starts (${VAR} without a default): a deployment must pass each in config.env_vars',
    ),
  auth: z
    .enum(['bearer', 'oauth', 'none', 'missing'])
    .optional()
    .describe(
      'who may call the server, as its definition says: bearer, oauth, none (public on purpose), or missing (no auth)',
    ),
  bundle_digest: z
    .string()
    .min(1)
    .optional()
    .describe(
      'SHA-256 of the build’s bundle: the same definition gives the same digest; the tag of its image (docs/kubernetes.md)',
    ),
});
export type McpServer = z.infer<typeof McpServer>;

// ---------------------------------------------------------------------------------------------
// POST /v1/deploy, GET /v1/deploy/{id}/status

export const DeployConfig = z.strictObject({
  domain: z.string().min(1).max(253).optional(),
  scaling: z
    .strictObject({
      min_instances: z.number().int().min(0).optional(),
      max_instances: z.number().int().min(1).optional(),
      // Extension: scale to zero (docs/api.md); 0: never idle
      idle_seconds: z.number().int().min(0).max(IDLE_SECONDS_MAX).optional(),
    })
    .optional(),
  env_vars: z.record(z.string().regex(ENV_NAME_PATTERN, 'must be an environment variable name'), z.string()).optional(),
  // Extension: limits of each instance, where the engine's runner enforces them (docker)
  resources: z
    .strictObject({
      memory_mb: z.number().int().min(32).max(1_048_576).optional(),
      cpus: z.number().positive().max(1024).optional(),
    })
    .optional(),
  // Extension: alert rules (docs/observability.md); absent: the environment's defaults, []: none
  alerts: alertRules().optional(),
});
export type DeployConfig = z.infer<typeof DeployConfig>;

export const DeployRequest = z.strictObject({
  mcp_id: z.string().regex(MCP_ID_PATTERN, 'must have the form mcp_<id>'),
  environment: z.enum(ENVIRONMENTS),
  config: DeployConfig.optional(),
});
export type DeployRequest = z.infer<typeof DeployRequest>;

export const Instance = z.looseObject({
  id: z.string(),
  state: z.string().describe('starting, healthy, unhealthy, restarting, stopped'),
  port: z.number().int().optional(),
  pid: z.number().int().optional(),
  restarts: z.number().int().optional(),
  last_check: z.string().optional(),
});

export const Transition = z.looseObject({
  status: z.enum(DEPLOYMENT_STATES),
  at: z.string(),
  reason: z.string().optional(),
});

export const Deployment = z.looseObject({
  deployment_id: z.string().regex(DEPLOYMENT_ID_PATTERN, 'must have the form deploy_<id>'),
  status: z.enum(DEPLOYMENT_STATES),
  url: z.string(),
  deploy_time: z.number().nonnegative().describe('seconds').nullable(),
  health_check: z.string(),
  // Extensions
  mcp_id: z.string().optional(),
  environment: z.enum(ENVIRONMENTS).optional(),
  instances: z.array(Instance).optional(),
  desired_instances: z.number().int().optional(),
  stage: z.string().optional().describe('what the deployment is doing now, for progress display'),
  idle: z
    .boolean()
    .optional()
    .describe('deployed and holding no instance after its idle period: the next request starts one (docs/api.md)'),
  reason: z.string().optional().describe('why the deployment failed or stopped'),
  domain: z.string().nullable().optional(),
  stable_urls: z
    .array(z.string())
    .optional()
    .describe(
      'MCP endpoints that always reach the current deployment of this server in this environment, most useful first (docs/api.md)',
    ),
  notices: z.array(z.string()).optional().describe('what the service could not honour, said plainly'),
  auth: z
    .looseObject({
      type: z.enum(['bearer', 'oauth', 'none']),
      resource_metadata: z
        .string()
        .optional()
        .describe('oauth: the RFC 9728 document of the first stable URL, which OAuth clients discover'),
    })
    .optional()
    .describe(
      'who may call the server: a bearer token, an OAuth access token, or anyone (none, chosen in the definition)',
    ),
  runner: z.string().optional().describe('what runs its instances: process, docker, swarm or kubernetes'),
  rolled_back_to: z
    .looseObject({
      deployment_id: z.string(),
      mcp_id: z.string(),
      version: z.string().optional().describe("the server's version, as its definition says"),
      created_at: z.string().optional().describe('when that deployment was made'),
    })
    .optional()
    .describe('a deployment made by a rollback: the earlier deployment whose build and config it runs'),
  unchanged: z
    .boolean()
    .optional()
    .describe(
      'in a rollback answer only: the server already runs what the rollback goes back to; this is that deployment, and no new one was made',
    ),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
  transitions: z.array(Transition).optional(),
});
export type Deployment = z.infer<typeof Deployment>;

// ---------------------------------------------------------------------------------------------
// POST /v1/test

/** A call a test expects: its tool, and the arguments by the forms of shared/arg-expectations.ts. */
export const CallExpectation = z.strictObject({
  tool: z.string().min(1).max(256),
  args: z
    .record(z.string(), z.json())
    .superRefine((args, ctx) => {
      for (const problem of argExpectationProblems(args)) ctx.addIssue({ code: 'custom', ...problem });
    })
    .optional(),
});

export const TestRequest = z.strictObject({
  mcp_id: z.string().regex(MCP_ID_PATTERN, 'must have the form mcp_<id>'),
  message: z.string().min(1, 'must not be empty').max(32_000),
  // any id: the service answers one it does not have with the ids it has (GET /v1/models)
  ai_model: z.string().min(1).max(128).default(DEFAULT_AI_MODEL),
  context: z.strictObject({ user_id: z.string().min(1).optional() }).optional(),
  // Extension: values of the server's ${VAR} references for this run alone (a stand-in API's address);
  // without them a test runs on placeholders, as a build's check does
  env_vars: z
    .record(z.string().regex(ENV_NAME_PATTERN, 'must be an environment variable name'), z.string())
    .optional()
    .describe('values of ${VAR} references for this run; never stored with the run'),
  // Extension: what the test expects, so the guidance knows the right tools and the result is evaluated
  expect: z
    .strictObject({
      tools: z.array(z.string().min(1)).max(256).optional().describe('the tools the agent should call; [] for none'),
      calls: z
        .array(CallExpectation)
        .max(64)
        .optional()
        .describe('calls the agent should make, with the arguments expected (docs/api.md)'),
      reply: z
        .array(z.string().min(1).max(1_000))
        .max(32)
        .optional()
        .describe('criteria the reply should meet, scored by judge_model'),
    })
    .optional(),
  // Extension: the model that scores the reply against expect.reply
  judge_model: z.string().min(1).max(128).optional().describe('default mcpctl-local: a check of key words'),
});
export type TestRequest = z.infer<typeof TestRequest>;

export const ToolCallFailure = z.looseObject({
  kind: z.string().describe('arguments, unknown_tool, http_status, exit_code, timeout or thrown'),
  status: z.number().int().optional().describe('http_status: the status the handler’s HTTP call answered'),
  exit_code: z.number().int().optional().describe('exit_code: the code the handler’s program exited with'),
  signal: z.string().optional().describe('exit_code: the signal that ended the program'),
});

export const ToolCallRecord = z.looseObject({
  name: z.string(),
  ok: z.boolean(),
  error: z.string().optional(),
  duration_ms: z.number().optional(),
  failure: ToolCallFailure.optional(),
  arguments: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('the arguments sent; values under keys that name a secret are [redacted]'),
});

export const GuidanceCause = z.looseObject({
  // a service may add kinds: the client keeps any string
  kind: z.string(),
  message: z.string(),
  tools: z.array(z.string()).optional(),
  calls: z.array(z.number().int().nonnegative()).optional(),
});
export const TestGuidance = z.looseObject({
  band: z.string().describe(`one of ${BAND_LABELS.join(', ')}`),
  causes: z.array(GuidanceCause).describe(`each of kind ${CAUSE_KINDS.join(', ')}`),
});

export const TestResult = z.looseObject({
  ai_response: z.string(),
  tools_used: z.array(z.string()),
  resources_accessed: z.array(z.string()),
  execution_time: z.number().nonnegative().describe('seconds'),
  success_rate: z.number().min(0).max(1),
  // Extensions
  ai_model: z.string().optional(),
  tool_calls: z.array(ToolCallRecord).optional(),
  guidance: TestGuidance.optional(),
  evaluation: TestEvaluation.optional(),
  usage: TokenUsage.optional(),
});
export type TestResult = z.infer<typeof TestResult>;

// ---------------------------------------------------------------------------------------------
// Operations the spec names without showing (docs/api.md)

export const ServerList = z.looseObject({ servers: z.array(McpServer) });
export const DeploymentList = z.looseObject({ deployments: z.array(Deployment) });

export const LogLine = z.looseObject({
  time: z.string(),
  level: z.string(),
  message: z.string(),
  instance: z.string().optional(),
  request_id: z.string().optional(),
});
export type LogLine = z.infer<typeof LogLine>;
export const LogPage = z.looseObject({ lines: z.array(LogLine) });

export const Metrics = z.looseObject({
  deployment_id: z.string(),
  window_seconds: z.number(),
  requests: z.number().int(),
  throughput_rps: z.number(),
  latency_ms: z.looseObject({ p50: z.number().nullable(), p95: z.number().nullable(), p99: z.number().nullable() }),
  tool_calls: z.number().int(),
  tool_errors: z.number().int(),
  tool_error_rate: z.number().nullable(),
  per_tool: z.record(z.string(), z.looseObject({ calls: z.number().int(), errors: z.number().int() })),
  series: z
    .array(
      z.looseObject({
        t: z.string(),
        requests: z.number(),
        p50_ms: z.number().nullable(),
        p95_ms: z.number().nullable(),
      }),
    )
    .optional(),
});
export type Metrics = z.infer<typeof Metrics>;
