/**
 * The rules on a scaling block: the minimum does not exceed the maximum (the one its fields cannot
 * say alone), and, where it is deployed, each count within the environment's bounds. Pure.
 */

/**
 * What is wrong with `min_instances` against `max_instances`, or undefined when both are fine (or
 * either is absent). `describe` words the problem for a caller that speaks of it its own way.
 */
export function scalingProblem(
  scaling: { min_instances?: unknown; max_instances?: unknown } | undefined,
  describe: (min: number, max: number) => string = (min, max) =>
    `min_instances (${min}) is greater than max_instances (${max})`,
): string | undefined {
  const min = scaling?.min_instances;
  const max = scaling?.max_instances;
  if (typeof min === 'number' && typeof max === 'number' && min > max) return describe(min, max);
  return undefined;
}

/** The instance counts an environment allows, and the ones it uses when none are given. */
export interface InstanceBounds {
  min: number;
  /** Infinity: no upper bound */
  max: number;
  defaultMin: number;
  defaultMax: number;
}

export type ScalingRange =
  { ok: true; min: number; max: number } | { ok: false; problems: Array<{ path: string; message: string }> };

/**
 * Applies an environment's defaults and checks its bounds, naming each bad field as a deploy
 * request's (`config.scaling.min_instances`). A larger min_instances alone pulls max_instances along.
 */
export function resolveScalingRange(
  bounds: InstanceBounds,
  environment: string,
  scaling: { min_instances?: number | undefined; max_instances?: number | undefined } | undefined,
): ScalingRange {
  const range =
    bounds.min === bounds.max
      ? `exactly ${bounds.min}`
      : bounds.max === Number.POSITIVE_INFINITY
        ? `at least ${bounds.min}`
        : `from ${bounds.min} to ${bounds.max}`;
  const problems: Array<{ path: string; message: string }> = [];
  for (const field of ['min_instances', 'max_instances'] as const) {
    const value = scaling?.[field];
    if (value !== undefined && (value < bounds.min || value > bounds.max)) {
      problems.push({ path: `config.scaling.${field}`, message: `must be ${range} in ${environment} (got ${value})` });
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  const min = scaling?.min_instances ?? bounds.defaultMin;
  const max = scaling?.max_instances ?? Math.max(bounds.defaultMax, min);
  const tooMany = scalingProblem(
    { min_instances: min, max_instances: max },
    (min, max) => `must not exceed max_instances (${max}), got ${min}`,
  );
  if (tooMany !== undefined)
    return { ok: false, problems: [{ path: 'config.scaling.min_instances', message: tooMany }] };
  return { ok: true, min, max };
}
