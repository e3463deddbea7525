/**
 * A deployment kept up to date by long-polling its status (docs/api.md): each request sends back the
 * ETag of the last answer as `If-None-Match` with `wait`, so the engine answers as soon as anything
 * changes and no change between two polls is lost. A stop from the CLI shows within a second.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Deployment } from '../api-types.js';
import { ApiError, getAnswer } from '../api.js';

const WAIT_SECONDS = 25;
const RETRY_MS = 3000;

export interface DeploymentStatus {
  deployment: Deployment | undefined;
  error: unknown;
  /** shows an answer the page got otherwise (the deployment a stop returned) until the next poll */
  show: (deployment: Deployment) => void;
}

export function useDeploymentStatus(id: string): DeploymentStatus {
  const [deployment, setDeployment] = useState<Deployment | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    const path = `/v1/deploy/${encodeURIComponent(id)}/status`;
    const sleep = (ms: number): Promise<void> =>
      new Promise((resolve) => {
        const timer = setTimeout(resolve, ms);
        signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
      });
    const loop = async (): Promise<void> => {
      let etag: string | undefined;
      while (!signal.aborted) {
        try {
          const query = etag === undefined ? '' : `?wait=${WAIT_SECONDS}`;
          const answer = await getAnswer<Deployment>(
            `${path}${query}`,
            etag === undefined ? { signal } : { signal, etag },
          );
          if (signal.aborted) return;
          if (answer.status !== 304) setDeployment(answer.data);
          setError(undefined);
          // an engine that gives no ETag cannot be long-polled: ask again after a pause instead
          if (answer.etag === undefined) await sleep(RETRY_MS);
          etag = answer.etag;
        } catch (failure) {
          if (signal.aborted) return;
          setError(failure);
          // an unknown deployment stays unknown; anything else may pass
          if (failure instanceof ApiError && (failure.status === 404 || failure.status === 401)) return;
          await sleep(RETRY_MS);
        }
      }
    };
    void loop();
    return () => controller.abort();
  }, [id]);
  return { deployment, error, show: setDeployment };
}
