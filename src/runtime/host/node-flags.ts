/**
 * The Node options every runtime process is started with, cold or warm (process-spawn.ts), and
 * which the benchmark of an idle instance starts it with too (bench/load.js): one place, so the
 * bench measures the instance the engine runs. Measured in docs/performance.md ("Instance memory").
 *
 * `--max-semi-space-size=1`: V8's young generation grows to 2 × 8 MB while the modules load and
 * stays that size, committed, for the life of an idle server; capped at 2 × 1 MB an instance holds
 * about 6 MB less, at no measurable cost to its throughput (a tools/call allocates far less than a
 * megabyte). The old generation is left alone: its limit stays Node's (or the deployment's memory
 * limit, isolation.ts), so a busy server does not die of a small heap.
 */
export const RUNTIME_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1'];
