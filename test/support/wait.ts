/** Bounded waits for effects that land a moment later: they poll, and give up with a clear error. */

const POLL_MS = 50;

/** Polls `check` until it gives a value (not undefined), for at most `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
): Promise<T> {
  return eventually(async () => {
    const value = await check();
    if (value === undefined) throw new Error(`timed out waiting for ${what}`);
    return value;
  }, timeoutMs);
}

/** Polls `check` until it holds, for at most `timeoutMs`. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 15_000,
): Promise<void> {
  await waitFor(what, async () => ((await check()) ? true : undefined), timeoutMs);
}

/** Retries `check` until it stops throwing, for at most `timeoutMs`; then throws its last error. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}
