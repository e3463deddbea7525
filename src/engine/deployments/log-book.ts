/**
 * A deployment's log: engine events and the instances' output. The newest lines stay in memory
 * for `logs` and `followLogs`; every line is also appended to `<dir>/<deployment_id>.ndjson` so
 * the history outlives the engine. The file is rotated once (to `.1`) past a size limit.
 */
import { appendFile, mkdir, readFile, rename, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { LogLine } from '../../api/contract.js';

const ROTATE_BYTES = 4 * 1024 * 1024;

export class LogBook {
  private readonly lines: LogLine[] = [];
  private readonly listeners = new Set<(line: LogLine) => void>();
  private pending: string[] = [];
  private writing: Promise<void> = Promise.resolve();
  private readonly file: string;
  /** bytes in the file, once known */
  private size: number | undefined;

  constructor(
    dir: string,
    deploymentId: string,
    private readonly capacity: number,
  ) {
    this.file = join(dir, `${deploymentId}.ndjson`);
  }

  append(line: LogLine): void {
    this.lines.push(line);
    // Trimmed in batches: cutting one line off the front of a full array copies all of it.
    if (this.lines.length >= this.capacity + Math.ceil(this.capacity / 8)) this.lines.splice(0, this.lines.length - this.capacity);
    for (const listener of this.listeners) listener(line);
    this.pending.push(`${JSON.stringify(line)}\n`);
    if (this.pending.length === 1) this.writing = this.writing.then(() => this.flush());
  }

  /** Lines at or after `since`, the newest `limit` of them, oldest first. */
  async read(options: { since?: string; limit?: number }): Promise<LogLine[]> {
    const since = options.since === undefined ? undefined : Date.parse(options.since);
    const kept = this.lines.length > this.capacity ? this.lines.slice(-this.capacity) : this.lines;
    const matching = since === undefined ? kept : kept.filter((line) => Date.parse(line.time) >= since);
    return matching.slice(-(options.limit ?? 200));
  }

  subscribe(listener: (line: LogLine) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Waits for the lines appended so far to reach the file. */
  async settle(): Promise<void> {
    await this.writing;
  }

  private async flush(): Promise<void> {
    const text = this.pending.join('');
    this.pending = [];
    try {
      // The folder and the file's size are looked at once, then the size is counted here:
      // a traced deployment appends at every request.
      if (this.size === undefined) {
        await mkdir(dirname(this.file), { recursive: true });
        this.size = await stat(this.file).then(
          (s) => s.size,
          () => 0,
        );
      }
      if (this.size > ROTATE_BYTES) {
        await rename(this.file, `${this.file}.1`);
        this.size = 0;
      }
      await appendFile(this.file, text, { mode: 0o600 });
      this.size += Buffer.byteLength(text);
    } catch {
      // The log file is a convenience; the in-memory lines still serve `logs`. Look again next time.
      this.size = undefined;
    }
  }

  /**
   * Reads the newest lines back from the files. Called once, before any append, for a
   * deployment that existed before this engine started.
   */
  async load(): Promise<void> {
    const texts = await Promise.all([`${this.file}.1`, this.file].map((file) => readFile(file, 'utf8').catch(() => '')));
    const history: LogLine[] = [];
    for (const text of texts) {
      for (const raw of text.split('\n')) {
        if (raw === '') continue;
        try {
          history.push(JSON.parse(raw) as LogLine);
        } catch {
          // a line cut by a crash
        }
      }
    }
    this.lines.unshift(...history.slice(-this.capacity));
    if (this.lines.length > this.capacity) this.lines.splice(0, this.lines.length - this.capacity);
  }
}
