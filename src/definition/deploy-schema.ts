/**
 * The schema of `deploy:`, the CLI's defaults for a deployment (domain, scaling, resources,
 * env_vars, per environment). Not sent to /v1/build. Built on first use. Pure: no IO.
 */
import { z } from 'zod';
import { alertsConfig } from './alerts-schema.js';
import { ENVIRONMENTS } from './names.js';
import { envMap, once } from './schema-fields.js';

/** the longest idle period a deployment may ask for (a week) */
export const IDLE_SECONDS_MAX = 7 * 24 * 3600;

export const scalingConfig = once(() =>
  z.strictObject({
    min_instances: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe('fewest instances; in production 0 means none while idle (scale to zero after idle_seconds)'),
    max_instances: z.number().int().min(1).optional(),
    idle_seconds: z
      .number()
      .int()
      .min(0)
      .max(IDLE_SECONDS_MAX)
      .optional()
      .describe(
        'seconds without requests after which the deployment holds no instance and the next request starts one (0: never)',
      ),
  }),
);

export const resourcesConfig = once(() =>
  z
    .strictObject({
      memory_mb: z.number().int().min(32).max(1_048_576).optional().describe('memory of each instance, in MiB'),
      cpus: z.number().positive().max(1024).optional().describe('CPUs of each instance, such as 0.5'),
    })
    .describe(
      'limits of each instance where the runner enforces them (docker, kubernetes and the Kubernetes export; default 256 MiB and 0.5 CPU)',
    ),
);

const deployTarget = once(() =>
  z.strictObject({
    domain: z
      .string()
      .regex(/^(?=.{1,253}$)([a-zA-Z0-9-]{1,63}\.)*[a-zA-Z0-9-]{1,63}$/, 'must be a host name')
      .optional(),
    scaling: scalingConfig().optional(),
    resources: resourcesConfig().optional(),
    env_vars: envMap.optional(),
    alerts: alertsConfig().optional(),
  }),
);

export const deployDefaults = once(() =>
  deployTarget().extend({
    environment: z.enum(ENVIRONMENTS).optional().describe('environment used when --env is not given'),
    environments: z
      .partialRecord(z.enum(ENVIRONMENTS), deployTarget())
      .optional()
      .describe('per-environment overrides of domain, scaling and env_vars'),
  }),
);
