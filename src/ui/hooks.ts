/** State that follows the engine: answers fetched again every few seconds, and the clock for ages. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Fetched<T> {
  data: T | undefined;
  error: unknown;
  /** fetch again now */
  reload: () => void;
}

/**
 * `load` now and then every `intervalMs` (none when 0), again when `key` changes. A slow answer never
 * overlaps the next request, and an answer for an old `key` is dropped.
 */
export function usePolling<T>(load: (signal: AbortSignal) => Promise<T>, key: string, intervalMs: number): Fetched<T> {
  const [state, setState] = useState<{ key: string; data?: T; error?: unknown }>({ key });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async (): Promise<void> => {
      try {
        const data = await loadRef.current(controller.signal);
        if (!controller.signal.aborted) setState({ key, data });
      } catch (error) {
        if (!controller.signal.aborted)
          setState((old) => ({ key, data: old.key === key ? old.data : undefined, error }));
      }
      if (!controller.signal.aborted && intervalMs > 0) timer = setTimeout(() => void run(), intervalMs);
    };
    void run();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [key, intervalMs, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  const current = state.key === key;
  return { data: current ? state.data : undefined, error: current ? state.error : undefined, reload };
}

/** The time now, renewed every `intervalMs`, so ages move on. */
export function useNow(intervalMs = 5000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}
