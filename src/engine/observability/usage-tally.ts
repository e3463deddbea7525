/**
 * Usage of one deployment per UTC day: requests, tool calls and errors, calls per tool, per client
 * (the MCP `clientInfo` of the session's `initialize`) and per user (the identity the gateway
 * validated, never one a client asserts). 30 days kept; per day at most MAX_TOOLS tools,
 * MAX_CLIENTS clients and MAX_USERS users, the rest counted together. Pure: times are passed in.
 */
import { DAY_MS, floorTo } from './history-buckets.js';

export const DAYS_KEPT = 30;
export const MAX_TOOLS = 100;
export const MAX_CLIENTS = 50;
export const MAX_USERS = 200;
/** the row that counts the names beyond a limit */
export const OTHER_TOOLS = '(other names)';
export const OTHER_CLIENTS = '(other clients)';
export const OTHER_USERS = '(other users)';
/** a request of a session whose `initialize` named no client, or of no session */
export const UNKNOWN_CLIENT = '(unknown)';

export interface Counts {
  requests: number;
  toolCalls: number;
  toolErrors: number;
}

/** One UTC day of one deployment. */
export interface UsageDay {
  /** the day's start, ms since the epoch (midnight UTC) */
  t: number;
  requests: number;
  errors: number;
  toolCalls: number;
  toolErrors: number;
  /** per tool name */
  tools: Record<string, Counts>;
  /** per client: the key is the name, a NUL and the version ('' when it gave none) */
  clients: Record<string, Counts>;
  /** per validated user id */
  users: Record<string, Counts>;
}

/** What one request adds to its day. */
export interface UsageSample {
  at: number;
  failed: boolean;
  tool?: string | undefined;
  toolError: boolean;
  client?: { name: string; version?: string | undefined } | undefined;
  user?: string | undefined;
}

export function clientKey(client: UsageSample['client']): string {
  return client === undefined ? UNKNOWN_CLIENT : `${client.name}\u0000${client.version ?? ''}`;
}

export function splitClientKey(key: string): { name: string; version?: string } {
  const at = key.indexOf('\u0000');
  if (at === -1) return { name: key };
  const version = key.slice(at + 1);
  return version === '' ? { name: key.slice(0, at) } : { name: key.slice(0, at), version };
}

export function emptyDay(t: number): UsageDay {
  return { t, requests: 0, errors: 0, toolCalls: 0, toolErrors: 0, tools: table(), clients: table(), users: table() };
}

/** A table without a prototype: any name a client sends (`__proto__` too) is an ordinary key. */
export function table(): Record<string, Counts> {
  return Object.create(null) as Record<string, Counts>;
}

/** Records one request in its UTC day; a request older than what is kept is dropped. */
export function recordUsage(days: UsageDay[], sample: UsageSample, now: number): void {
  const t = floorTo(sample.at, DAY_MS);
  if (t < floorTo(now, DAY_MS) - (DAYS_KEPT - 1) * DAY_MS) return;
  const day = dayAt(days, t);
  day.requests += 1;
  if (sample.failed) day.errors += 1;
  const tool = sample.tool !== undefined;
  if (tool) {
    day.toolCalls += 1;
    if (sample.toolError) day.toolErrors += 1;
    count(day.tools, sample.tool!, MAX_TOOLS, OTHER_TOOLS, tool, sample.toolError);
  }
  count(day.clients, clientKey(sample.client), MAX_CLIENTS, OTHER_CLIENTS, tool, sample.toolError);
  if (sample.user !== undefined) count(day.users, sample.user, MAX_USERS, OTHER_USERS, tool, sample.toolError);
}

function count(
  table: Record<string, Counts>,
  key: string,
  limit: number,
  other: string,
  tool: boolean,
  toolError: boolean,
): void {
  let row = table[key];
  if (row === undefined) {
    const full = Object.keys(table).length >= limit;
    const name = full ? other : key;
    row = table[name] ??= { requests: 0, toolCalls: 0, toolErrors: 0 };
  }
  row.requests += 1;
  if (tool) {
    row.toolCalls += 1;
    if (toolError) row.toolErrors += 1;
  }
}

function dayAt(days: UsageDay[], t: number): UsageDay {
  for (let i = days.length - 1; i >= 0; i -= 1) {
    const day = days[i]!;
    if (day.t === t) return day;
    if (day.t < t) {
      const made = emptyDay(t);
      days.splice(i + 1, 0, made);
      return made;
    }
  }
  const made = emptyDay(t);
  days.unshift(made);
  return made;
}

/** Drops the days past DAYS_KEPT; returns whether anything was dropped. */
export function expireDays(days: UsageDay[], now: number): boolean {
  const first = floorTo(now, DAY_MS) - (DAYS_KEPT - 1) * DAY_MS;
  let n = 0;
  while (n < days.length && days[n]!.t < first) n += 1;
  if (n > 0) days.splice(0, n);
  return n > 0;
}

/** The days from the one holding `from` on, added up: totals and one table per kind. */
export function sumDays(
  days: readonly UsageDay[],
  from: number,
): Omit<UsageDay, 't'> & { days: UsageDay[]; first: number } {
  const first = floorTo(from, DAY_MS);
  const picked = days.filter((day) => day.t >= first);
  const sum = { ...emptyDay(first), days: picked, first };
  for (const day of picked) {
    sum.requests += day.requests;
    sum.errors += day.errors;
    sum.toolCalls += day.toolCalls;
    sum.toolErrors += day.toolErrors;
    addTable(sum.tools, day.tools);
    addTable(sum.clients, day.clients);
    addTable(sum.users, day.users);
  }
  return sum;
}

function addTable(into: Record<string, Counts>, from: Record<string, Counts>): void {
  for (const [key, counts] of Object.entries(from)) {
    const row = (into[key] ??= { requests: 0, toolCalls: 0, toolErrors: 0 });
    row.requests += counts.requests;
    row.toolCalls += counts.toolCalls;
    row.toolErrors += counts.toolErrors;
  }
}
