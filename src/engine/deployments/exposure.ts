/**
 * Nobody exposes a server without deciding to. A deployment that other machines could reach — a
 * custom domain, an engine listening beyond loopback, a Swarm service (published on every address
 * of its nodes) — is refused unless its definition says who may call it: `auth` with a bearer
 * token or OAuth, or `auth: { type: none }`, which makes it public on purpose and says so in every
 * answer. On a loopback engine without a domain nothing is asked: that is the development loop.
 */
import type { Deployment } from '../../api/contract.js';
import { metadataUrlOf } from '../../runtime/server/auth.js';
import { ServiceError } from '../service-error.js';
import type { ServerRecord } from '../records.js';

export interface ExposureInput {
  domain: string | undefined;
  /** the engine listens on an address other machines reach */
  engineExposed: boolean;
  /** what runs the deployment's instances (process, docker, swarm, kubernetes) */
  runner: string | undefined;
}

/** Why other machines could reach a deployment, one reason each; empty when only this one can. */
export function exposureReasons(input: ExposureInput): string[] {
  const reasons: string[] = [];
  if (input.domain !== undefined) {
    reasons.push(
      input.runner === 'kubernetes'
        ? `an Ingress serves ${input.domain} to anyone who reaches the cluster`
        : `the domain ${input.domain} routes requests from other machines to it`,
    );
  }
  if (input.engineExposed) reasons.push('this engine listens on an address other machines reach');
  if (input.runner === 'swarm') reasons.push('a Swarm service publishes its port on every address of its nodes');
  return reasons;
}

/** Refuses (validation_failed, at `auth`) a deployment that would be reachable beyond this machine while its definition does not say who may call it. */
export function checkExposure(server: ServerRecord, input: ExposureInput): void {
  if (server.definition?.auth !== undefined) return;
  const reasons = exposureReasons(input);
  if (reasons.length === 0) return;
  const name = server.server.name;
  throw new ServiceError(
    'validation_failed',
    `${name} would be reachable beyond this machine (${reasons.join('; ')}) and its definition has no auth: anyone could call it`,
    [
      {
        path: 'auth',
        message:
          'add auth to the definition: { type: oauth, issuer, scopes } (docs/auth.md) or { type: bearer, token: "${MCP_AUTH_TOKEN}" }; or auth: { type: none } to make it public on purpose; then build it again',
      },
    ],
  );
}

/** Who may call a deployment, for its answer (`auth`): the kind, and where OAuth clients find its metadata. */
export function authView(server: ServerRecord, stableUrls: readonly string[]): Deployment['auth'] {
  const auth = server.definition?.auth;
  if (auth === undefined) return undefined;
  if (auth.type !== 'oauth') return { type: auth.type };
  const resource = stableUrls[0];
  return { type: 'oauth', ...(resource === undefined ? {} : { resource_metadata: metadataUrlOf(resource) }) };
}

/** What a deployment says when its definition chose `auth: { type: none }`. */
export function publicNotice(server: ServerRecord): string[] {
  return server.definition?.auth?.type === 'none'
    ? ['public: anyone who reaches it can call it, by the definition’s choice (auth: { type: none })']
    : [];
}
