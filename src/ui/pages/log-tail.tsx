/**
 * The live log of a deployment: `GET /v1/deploy/:id/logs?follow=1` read as a stream of NDJSON lines
 * (the recent ones first, then each new one; empty lines keep the connection open). The newest line
 * is at the bottom; the tail keeps the last MAX_LOG_LINES. Paused, lines are still collected and
 * shown when it resumes. A dropped stream is opened again after a pause; one the engine ended (the
 * deployment stopped, failed or was replaced) is not.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { LogLine } from '../api-types.js';
import { ApiError, describeError, streamText } from '../api.js';
import { Section } from '../components/common.js';
import { formatTime } from '../format.js';
import { appendCapped, filterLogLines, LOG_LEVELS, toLogLine, type LogLevel } from '../logs.js';
import { NdjsonSplitter, parseJsonLine } from '../ndjson.js';

const RECONNECT_MS = 3000;

function useLogStream(id: string): { lines: LogLine[]; state: string } {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [state, setState] = useState('connecting');
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    const follow = async (): Promise<void> => {
      while (!signal.aborted) {
        const splitter = new NdjsonSplitter();
        // the stream starts with the recent lines again: start over rather than show them twice
        let first = true;
        try {
          await streamText(`/v1/deploy/${encodeURIComponent(id)}/logs?follow=1`, signal, (text) => {
            const added = splitter
              .push(text)
              .map((line) => toLogLine(parseJsonLine(line)))
              .filter((line): line is LogLine => line !== undefined);
            if (first) {
              first = false;
              setState('live');
              setLines(added);
            } else if (added.length > 0) setLines((old) => appendCapped(old, added));
          });
          if (signal.aborted) return;
          // the engine ends the stream when the deployment has stopped, failed or been replaced
          setState('ended: the deployment no longer runs');
          return;
        } catch (error) {
          if (signal.aborted) return;
          if (error instanceof ApiError && (error.status === 401 || error.status === 404)) {
            setState(describeError(error).message);
            return;
          }
          setState(`disconnected (${describeError(error).message}); reconnecting`);
        }
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      }
    };
    void follow();
    return () => controller.abort();
  }, [id]);
  return { lines, state };
}

export function LogTail({ id }: { id: string }) {
  const { lines, state } = useLogStream(id);
  const [level, setLevel] = useState<LogLevel>('debug');
  const [text, setText] = useState('');
  const [paused, setPaused] = useState<LogLine[] | undefined>(undefined);
  const shown = filterLogLines(paused ?? lines, level, text);
  const list = useRef<HTMLOListElement>(null);
  const atBottom = useRef(true);
  // keep following the newest line, unless the reader scrolled up to read
  useLayoutEffect(() => {
    const element = list.current;
    if (element !== null && atBottom.current) element.scrollTop = element.scrollHeight;
  }, [shown.length, shown[shown.length - 1]]);
  const controls = (
    <div class="log-controls">
      <label>
        Level{' '}
        <select value={level} onChange={(event) => setLevel(event.currentTarget.value as LogLevel)}>
          {LOG_LEVELS.map((l) => (
            <option key={l} value={l}>
              {l === 'debug' ? 'all' : `${l} and above`}
            </option>
          ))}
        </select>
      </label>
      <label>
        Filter{' '}
        <input type="search" value={text} placeholder="text" onInput={(event) => setText(event.currentTarget.value)} />
      </label>
      <button
        type="button"
        class="small"
        aria-pressed={paused !== undefined}
        onClick={() => setPaused(paused === undefined ? lines : undefined)}
      >
        {paused === undefined ? 'Pause' : 'Resume'}
      </button>
    </div>
  );
  return (
    <Section title="Logs" actions={controls}>
      <p class="muted" aria-live="polite">
        {paused === undefined ? `Stream ${state}.` : 'Paused: new lines are kept and shown when you resume.'} Showing{' '}
        {shown.length} of {(paused ?? lines).length} lines.
      </p>
      <ol
        id="log-lines"
        class="log"
        ref={list}
        tabIndex={0}
        aria-label="Log lines, newest last"
        onScroll={(event) => {
          const element = event.currentTarget;
          atBottom.current = element.scrollHeight - element.scrollTop - element.clientHeight < 24;
        }}
      >
        {shown.map((line, index) => (
          <li key={`${line.time}-${index}`} class={`log-line level-${line.level.toLowerCase()}`}>
            <time dateTime={line.time}>{line.time === '' ? '' : formatTime(line.time, { date: false })}</time>{' '}
            <span class="level">{line.level}</span>{' '}
            {line.instance === undefined ? null : <span class="instance">{line.instance}</span>}{' '}
            <span class="message">{line.message}</span>
          </li>
        ))}
      </ol>
    </Section>
  );
}
