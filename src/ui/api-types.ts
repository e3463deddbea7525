/**
 * The shapes of the /v1 answers the page reads (docs/api.md). Declared here rather than imported from
 * src/api/, whose types come from zod schemas: the page stays free of the CLI's code. Every field the
 * page does not need is left out; a service may send more.
 */

export type DeploymentState = 'deploying' | 'deployed' | 'failed' | 'stopped';

export interface ApiErrorBody {
  code: string;
  message: string;
  details?: { path?: string; message: string }[];
  hint?: string;
}

export interface Envelope<T> {
  success: boolean;
  data?: T | null;
  error?: ApiErrorBody;
  meta?: { request_id?: string };
}

export interface Session {
  csrf: string;
  expires_at: string;
}

export interface Health {
  status: string;
  version: string;
  uptime_seconds?: number;
}

export interface Instance {
  id: string;
  state: string;
  port?: number;
  pid?: number;
  restarts?: number;
  last_check?: string | null;
}

export interface Transition {
  status: DeploymentState;
  at: string;
  reason?: string;
}

export interface Deployment {
  deployment_id: string;
  status: DeploymentState;
  url: string;
  deploy_time: number | null;
  health_check: string;
  mcp_id?: string;
  environment?: string;
  instances?: Instance[];
  desired_instances?: number;
  /** deployed, holding no instance until a request starts one (scale to zero) */
  idle?: boolean;
  stage?: string;
  reason?: string;
  domain?: string | null;
  stable_urls?: string[];
  notices?: string[];
  runner?: string;
  created_at?: string;
  updated_at?: string;
  transitions?: Transition[];
}

export interface McpServer {
  mcp_id: string;
  name: string;
  status: string;
  version?: string;
  created_at?: string;
}

export interface MetricsPoint {
  t: string;
  requests: number;
  errors?: number;
  tool_calls?: number;
  tool_errors?: number;
  p50_ms?: number | null;
  p95_ms?: number | null;
  p99_ms?: number | null;
}

export interface MetricsHistory {
  deployment_id: string;
  since: string;
  until: string;
  step_seconds: number;
  totals: {
    requests: number;
    errors: number;
    error_rate: number | null;
    tool_calls?: number;
    tool_errors?: number;
    latency_ms?: { p50: number | null; p95: number | null; p99: number | null };
  };
  points: MetricsPoint[];
}

export interface Usage {
  since: string;
  until: string;
  totals: { requests: number; errors: number; tool_calls: number; tool_errors: number };
  tools: { name: string; calls: number; errors: number }[];
  clients: { name: string; version?: string; requests: number; tool_calls: number; tool_errors: number }[];
}

export interface LogLine {
  time: string;
  level: string;
  message: string;
  instance?: string;
  request_id?: string;
}

export interface Alert {
  deployment_id: string;
  server?: string;
  environment?: string;
  rule: string;
  severity?: string;
  state: string;
  condition?: string;
  summary?: string;
  started_at?: string;
  resolved_at?: string;
}

export interface Alerts {
  firing: Alert[];
  pending?: Alert[];
  recent: Alert[];
  channels?: number;
}

export interface ToolCall {
  name: string;
  ok: boolean;
  error?: string;
  duration_ms?: number;
}

export interface Cause {
  kind: string;
  message: string;
  tools?: string[];
}

export interface TestResult {
  ai_response: string;
  tools_used: string[];
  resources_accessed: string[];
  execution_time: number;
  success_rate: number;
  ai_model?: string;
  tool_calls?: ToolCall[];
  guidance?: { band: string; causes: Cause[] };
}
