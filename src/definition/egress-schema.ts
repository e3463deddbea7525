/**
 * The schema of `egress`: which private and loopback addresses a deployed server's `http`
 * handlers and `url` resources may reach. Link-local and cloud metadata addresses are never
 * reachable, whatever this says. Pure: no IO.
 */
import { z } from 'zod';

/** `host`, `host:port`, `[v6]` or `[v6]:port`: the same spelling as a URL's authority. */
export const EGRESS_HOST_PATTERN =
  /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?)*)(?::\d{1,5})?$/;

export const MAX_EGRESS_HOSTS = 256;

export function egressConfigSchema() {
  return z
    .strictObject({
      allow_private: z
        .boolean()
        .optional()
        .describe(
          'reach private and loopback addresses (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, 127/8, ::1) from a deployment; default false',
        ),
      allow: z
        .array(
          z
            .string()
            .regex(
              EGRESS_HOST_PATTERN,
              'must be a host name or IP address, optionally with :port (api.internal, 10.0.0.5:8080, [fd00::1]:443)',
            )
            .refine(
              (entry) => portOf(entry) === undefined || (portOf(entry)! >= 1 && portOf(entry)! <= 65535),
              'the port must be from 1 to 65535',
            ),
        )
        .max(MAX_EGRESS_HOSTS)
        .optional()
        .describe(
          'hosts (host or host:port) that may be private or loopback addresses; link-local and metadata addresses stay refused',
        ),
    })
    .describe(
      'what the server may reach on private networks; public addresses are always allowed, link-local and metadata never',
    );
}

/** The port of an `allow` entry, if it names one. */
export function portOf(entry: string): number | undefined {
  const match = /:(\d{1,5})$/.exec(entry);
  return match === null ? undefined : Number(match[1]);
}
