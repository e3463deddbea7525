/**
 * The Node options every runtime process is started with, cold or warm (process-spawn.ts), and in
 * its image (src/packaging/image.ts); the benchmark of an instance starts it with them too
 * (bench/load.js): one place, so the bench measures the instance the engine runs. Measured in
 * docs/performance.md ("Instance memory").
 *
 * None today. `--max-semi-space-size=1` (V8's young generation capped at 2 × 1 MB instead of growing
 * to 2 × 8 MB) made an idle instance 8 MB smaller but cost a quarter of its tools/call throughput on
 * a quiet machine (`node bench/runtime-throughput.js`: 0.74× the minimal SDK server against 0.98×
 * without; `=4`: 0.88×), and idle deployments now hold no instance at all (scale to zero).
 */
export const RUNTIME_NODE_FLAGS: readonly string[] = [];
