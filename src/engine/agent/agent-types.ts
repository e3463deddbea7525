/**
 * What every agent works with: the server's catalog as its client sees it, a session that calls
 * tools and reads resources (and records each call), and the limits of one run. Pure types.
 */
import type { TestResult } from '../../api/contract.js';

/** One tool call as the test result reports it. */
export type ToolCallRecord = NonNullable<TestResult['tool_calls']>[number];

/** A JSON Schema of a tool's input, as the server lists it. */
export interface InputSchema {
  type?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  [key: string]: unknown;
}

export interface JsonSchema {
  type?: string | string[];
  description?: string;
  enum?: unknown[];
  default?: unknown;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
  [key: string]: unknown;
}

export interface ToolInfo {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: InputSchema;
  outputSchema?: InputSchema | undefined;
}

export interface ResourceInfo {
  uri: string;
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  mimeType?: string | undefined;
}

export interface ResourceTemplateInfo {
  uriTemplate: string;
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  mimeType?: string | undefined;
}

export interface Catalog {
  /** the server's instructions, when it sends any */
  instructions?: string | undefined;
  tools: ToolInfo[];
  resources: ResourceInfo[];
  templates: ResourceTemplateInfo[];
}

export interface ToolOutcome {
  ok: boolean;
  /** the result's text content, joined; for a failed call, the error */
  text: string;
  /** structuredContent, or the text parsed as JSON when it is JSON */
  data?: unknown;
}

export interface ResourceOutcome {
  ok: boolean;
  /** the text contents, joined (a binary content is described, not included); for a failed read, the error */
  text: string;
}

/** The agent's view of the server under test. Every call and read is recorded by the session. */
export interface AgentSession {
  catalog: Catalog;
  callTool(name: string, args: Record<string, unknown>): Promise<ToolOutcome>;
  readResource(uri: string): Promise<ResourceOutcome>;
  /** records a call the agent could not make (a model's arguments that are not JSON) as a failed one */
  recordRejectedCall(name: string, error: string): void;
  /**
   * notes a tool (or resource template) the agent would have used but could not, for want of these
   * inputs; `unmapped`: the planner could not read them from the request, not that nothing gives them
   */
  noteUnmet(tool: string, missing: string[], unmapped?: boolean): void;
}

export interface AgentLimits {
  /** tool calls and resource reads together */
  maxToolCalls: number;
  /** round trips to a model */
  maxTurns: number;
  /** a whole run, from the start of the server to the reply */
  timeoutMs: number;
  /** one tool call or resource read */
  callTimeoutMs: number;
  /** tokens a model may write per turn */
  maxTokens: number;
}

export const DEFAULT_AGENT_LIMITS: AgentLimits = {
  maxToolCalls: 12,
  maxTurns: 8,
  timeoutMs: 120_000,
  callTimeoutMs: 30_000,
  maxTokens: 2048,
};

export interface AgentRun {
  message: string;
  session: AgentSession;
  limits: AgentLimits;
  /** aborts at the run's time-out */
  signal: AbortSignal;
}

/** Tokens a model reports for a whole run, all turns added up. */
export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
}

/** A model's reply, with the tokens it reports (the offline planner reports none). */
export interface AgentAnswer {
  reply: string;
  usage?: TokenUsage | undefined;
}

/** An agent answers the message, using the session; it resolves with its reply, alone or with its usage. */
export type Agent = (run: AgentRun) => Promise<string | AgentAnswer>;
