/**
 * Following a deployment's logs: `GET /v1/deploy/{id}/logs?follow=1` read as an NDJSON stream, one
 * checked log line at a time, until the stream ends or the caller stops it.
 */
import type { IncomingMessage } from 'node:http';
import { formatPath } from '../shared/paths.js';
import { contractError, header, parseAnswer } from './responses.js';
import { LogLine, LogPage } from './operations.js';
import { ApiError } from './errors.js';
import { assertComplete, exchange, readBodyQuietly, watchSilence } from './http-request.js';
import type { Transport } from './transport.js';

/** What a read of a deployment's log asks for (docs/api.md): the lines are filtered by the service. */
export interface LogQuery {
  since?: string | undefined;
  limit?: number | undefined;
  /** this level and those above it */
  level?: string | undefined;
  /** a text (any case) or `/expression/flags` in the message or request id */
  grep?: string | undefined;
  instance?: string | undefined;
}

/** The query parameters of a log read. */
export function logQuery(options: LogQuery): Record<string, string | number | undefined> {
  const { since, limit, level, grep, instance } = options;
  return { since, limit, level, grep, instance };
}

/**
 * GET /v1/deploy/{id}/logs?follow=1: calls `onLine` for every log line of the NDJSON stream
 * until the stream ends or `signal` aborts (then it resolves quietly).
 */
export async function followLogStream(
  transport: Transport,
  deploymentId: string,
  onLine: (line: LogLine) => void,
  signal?: AbortSignal,
  options: LogQuery = {},
): Promise<void> {
  const url = transport.url(`/v1/deploy/${encodeURIComponent(deploymentId)}/logs`, { follow: 1, ...logQuery(options) });
  const combined = transport.signalFor(signal);
  const headers = transport.headers({ accept: 'application/x-ndjson' }, false);
  const started = performance.now();
  let res: IncomingMessage;
  try {
    res = await exchange(url, {
      method: 'GET',
      headers,
      agent: await transport.agent(),
      signal: combined,
      connectTimeoutMs: transport.connectTimeoutMs,
      headersTimeoutMs: transport.requestTimeoutMs,
    });
  } catch (error) {
    if (signal?.aborted === true) return;
    throw transport.failure(error, 'GET', url, combined, 1, started, headers);
  }
  const contentType = header(res.headers, 'content-type') ?? '';
  const status = res.statusCode ?? 0;
  if (status !== 200 || !contentType.includes('ndjson')) {
    transport.report('GET', url, 1, started, headers, status, header(res.headers, 'x-request-id'));
    // an error envelope, or a service that answers with one page instead of a stream
    const text = await readBodyQuietly(res, transport.bodyTimeoutMs);
    const page = parseAnswer(
      { method: 'GET', operation: 'logs', path: url, schema: LogPage },
      url,
      status,
      res.headers,
      text,
    );
    for (const line of page.data?.lines ?? []) onLine(line);
    return;
  }
  transport.report('GET', url, 1, started, headers, status, header(res.headers, 'x-request-id'));
  const decoder = new TextDecoder();
  let buffer = '';
  let lineNo = 0;
  const emit = (text: string) => {
    lineNo += 1;
    if (text.trim() === '') return; // keep-alive
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw contractError('GET', url, `line ${lineNo}`, 'is not JSON', header(res.headers, 'x-request-id'));
    }
    const parsed = LogLine.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw contractError(
        'GET',
        url,
        `line ${lineNo}${issue === undefined || issue.path.length === 0 ? '' : ` ${formatPath(issue.path)}`}`,
        issue?.message ?? 'is not a log line',
        header(res.headers, 'x-request-id'),
      );
    }
    onLine(parsed.data);
  };
  // the stream sends an empty line every 15 s; four missed ones mean it is gone
  const unwatch = watchSilence(res, 60_000);
  try {
    for await (const chunk of res) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let newline = buffer.indexOf('\n');
      while (newline >= 0) {
        emit(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf('\n');
      }
    }
    assertComplete(res);
    buffer += decoder.decode();
    if (buffer !== '') emit(buffer);
  } catch (error) {
    if (signal?.aborted === true || transport.options.signal?.aborted === true) {
      res.destroy();
      if (signal?.aborted === true) return;
    }
    if (error instanceof ApiError) {
      res.destroy();
      throw error;
    }
    throw transport.failure(error, 'GET', url, combined, 1, started, headers, false);
  } finally {
    unwatch();
  }
}
