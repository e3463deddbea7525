/**
 * The `/v1` contract as zod schemas: requests, responses, the envelope and the error body.
 * The client validates what it receives with these, and the engine validates what it accepts
 * with the same ones. `docs/api.md` is the prose form; keep both in step.
 *
 * Two files hold it: `build-schema.ts`, the request of `POST /v1/build` (built from the
 * definition's schema), and `operations.ts`, everything else. A command that only reads answers
 * imports `operations.ts` alone and starts faster (test/cli/startup.e2e.test.ts holds it).
 *
 * Pure: no IO.
 */
export * from './operations.js';
export * from './build-schema.js';
export * from './alerts.js';
export * from './usage.js';
