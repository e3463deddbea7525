#!/usr/bin/env node
// The bundling step of `npm run build` (after tsc): the CLI, the runtime process and the dashboard,
// from rolldown.config.js, rolldown.runtime.config.js and rolldown.ui.config.js, through rolldown's
// API. Rolldown's command line lists every chunk it writes (over a hundred lines), which `npm ci`
// would print through `prepare`: this says one line per bundle instead; warnings and errors still show.
import { performance } from 'node:perf_hooks';
import { build } from 'rolldown';

const CONFIGS = ['rolldown.config.js', 'rolldown.runtime.config.js', 'rolldown.ui.config.js'];

for (const file of CONFIGS) {
  const { default: config } = await import(new URL(`../${file}`, import.meta.url).href);
  for (const options of Array.isArray(config) ? config : [config]) {
    const started = performance.now();
    const result = await build(options);
    const outputs = (Array.isArray(result) ? result : [result]).flatMap((r) => r.output);
    const bytes = outputs.reduce((sum, o) => sum + (o.type === 'chunk' ? o.code.length : o.source.length), 0);
    const ms = Math.round(performance.now() - started);
    process.stdout.write(
      `bundled ${options.output.dir}: ${outputs.length} files, ${(bytes / 1024).toFixed(0)} kB in ${ms} ms\n`,
    );
  }
}
