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
  /**
   * `min_instances: 0` is allowed too: no instance while idle (scale to zero), at least
   * one while awake. Without it, 0 is refused like any count below `min`.
   */
  zero?: boolean;
  /** what the refusal of `min_instances: 0` adds where zero is not allowed (what to do instead) */
  zeroHint?: string;
}

/**
 * A resolved range: `min` is the fewest instances while it runs; `zero`, that it holds none while
 * idle (min_instances 0).
 */
export type ScalingRange =
  | { ok: true; min: number; max: number; zero?: true }
  | { ok: false; problems: Array<{ path: string; message: string }> };

/** The awake minimum of a scale-to-zero range: one instance, more on load. */
export const AWAKE_MIN = 1;

/**
 * Applies an environment's defaults and checks its bounds, naming each bad field as a deploy
 * request's (`config.scaling.min_instances`). A larger min_instances alone pulls max_instances along.
 * Where the bounds allow it, `min_instances: 0` (scale to zero) gives a range from AWAKE_MIN, with
 * `zero` set; it needs an idle period, so `idle_seconds: 0` (never idle) with it is refused.
 */
export function resolveScalingRange(
  bounds: InstanceBounds,
  environment: string,
  scaling:
    | { min_instances?: number | undefined; max_instances?: number | undefined; idle_seconds?: number | undefined }
    | undefined,
): ScalingRange {
  const zero = bounds.zero === true && scaling?.min_instances === 0;
  const problems = boundProblems(bounds, environment, scaling);
  if (zero && scaling?.idle_seconds === 0) {
    problems.push({
      path: 'config.scaling.idle_seconds',
      message:
        'must not be 0 (never idle) with min_instances 0, which asks for no instance while idle; leave it out (600 s) or give the seconds, or set min_instances to keep instances',
    });
  }
  if (problems.length > 0) return { ok: false, problems };
  const min = zero ? AWAKE_MIN : (scaling?.min_instances ?? bounds.defaultMin);
  const max = scaling?.max_instances ?? Math.max(bounds.defaultMax, min);
  const tooMany = scalingProblem(
    { min_instances: min, max_instances: max },
    (min, max) => `must not exceed max_instances (${max}), got ${min}`,
  );
  if (tooMany !== undefined)
    return { ok: false, problems: [{ path: 'config.scaling.min_instances', message: tooMany }] };
  return zero ? { ok: true, min, max, zero: true } : { ok: true, min, max };
}

/** Each count outside the bounds, with the range it must be in. */
function boundProblems(
  bounds: InstanceBounds,
  environment: string,
  scaling: { min_instances?: number | undefined; max_instances?: number | undefined } | undefined,
): Array<{ path: string; message: string }> {
  const range =
    bounds.min === bounds.max
      ? `exactly ${bounds.min}`
      : bounds.max === Number.POSITIVE_INFINITY
        ? `at least ${bounds.min}`
        : `from ${bounds.min} to ${bounds.max}`;
  const problems: Array<{ path: string; message: string }> = [];
  for (const field of ['min_instances', 'max_instances'] as const) {
    const value = scaling?.[field];
    if (value === undefined || (value >= bounds.min && value <= bounds.max)) continue;
    if (field === 'min_instances' && value === 0 && bounds.zero === true) continue;
    const allowed =
      field === 'min_instances' && bounds.zero === true ? `0 (scale to zero when idle) or ${range}` : range;
    const hint =
      field === 'min_instances' && value === 0 && bounds.zeroHint !== undefined ? `; ${bounds.zeroHint}` : '';
    problems.push({
      path: `config.scaling.${field}`,
      message: `must be ${allowed} in ${environment} (got ${value})${hint}`,
    });
  }
  return problems;
}
