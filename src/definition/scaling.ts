/** The one rule on a scaling block that its fields cannot say alone: the minimum does not exceed the maximum. Pure. */

/**
 * What is wrong with `min_instances` against `max_instances`, or undefined when both are fine (or
 * either is absent). `describe` words the problem for a caller that speaks of it its own way.
 */
export function scalingProblem(
  scaling: { min_instances?: unknown; max_instances?: unknown } | undefined,
  describe: (min: number, max: number) => string = (min, max) => `min_instances (${min}) is greater than max_instances (${max})`,
): string | undefined {
  const min = scaling?.min_instances;
  const max = scaling?.max_instances;
  if (typeof min === 'number' && typeof max === 'number' && min > max) return describe(min, max);
  return undefined;
}
