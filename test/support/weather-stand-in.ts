/**
 * The weather example's stand-in Open-Meteo API (examples/weather/stand-in/open-meteo.mjs), run as a
 * user runs it, and a copy of the example pointed at it: tests of the examples stay on loopback.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from './app.js';

export const WEATHER_EXAMPLE = join(ROOT, 'examples', 'weather');
/** the stand-in's port as the example's egress allows it */
export const SHIPPED_PORT = '127.0.0.1:8787';

export interface WeatherStandIn {
  process: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

/** `node examples/weather/stand-in/open-meteo.mjs --port 0`; its first line says where it listens. */
export async function startWeatherStandIn(): Promise<WeatherStandIn> {
  const child = spawn(process.execPath, [join(WEATHER_EXAMPLE, 'stand-in', 'open-meteo.mjs'), '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.setEncoding('utf8');
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: string) => {
      output += chunk;
      const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (found !== null) resolve(found[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the stand-in exited (${code}) before listening: ${output}`)));
  });
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill();
    await exited;
  };
  return { process: child, url, stop };
}

/**
 * A copy of the weather example in `dir`/weather whose egress names this stand-in's port, and the
 * shipped env file pointed at it in `dir`/stand-in.env. Checks the shipped egress line is there.
 */
export async function weatherForStandIn(standIn: WeatherStandIn, dir: string): Promise<{ weatherDir: string }> {
  const weatherDir = join(dir, 'weather');
  await cp(WEATHER_EXAMPLE, weatherDir, { recursive: true });
  const definition = await readFile(join(weatherDir, 'server.yaml'), 'utf8');
  if (!definition.includes(`egress: { allow: ["${SHIPPED_PORT}"] }`)) {
    throw new Error(`examples/weather/server.yaml no longer allows egress to ${SHIPPED_PORT}`);
  }
  await writeFile(join(weatherDir, 'server.yaml'), definition.replace(SHIPPED_PORT, new URL(standIn.url).host));
  const shipped = await readFile(join(weatherDir, 'stand-in', 'stand-in.env'), 'utf8');
  await writeFile(join(dir, 'stand-in.env'), shipped.replaceAll(`http://${SHIPPED_PORT}`, standIn.url));
  return { weatherDir };
}
