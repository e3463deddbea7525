/**
 * A deployment's log: engine events and the instances' output. The newest lines stay in memory
 * for `logs` and `followLogs`; every line is also appended to `<dir>/<deployment_id>.ndjson` so
 * the history outlives the engine. The file is rotated once (to `.1`) past a size limit.
 */
import { mkdir, open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { LogLine } from '../../api/contract.js';

const ROTATE_BYTES = 4 * 1024 * 1024;
/** how long an unused log file stays open */
const IDLE_CLOSE_MS = 2_000;

export class LogBook {
  private readonly lines: LogLine[] = [];
  private readonly listeners = new Set<(line: LogLine) => void>();
  private pending: string[] = [];
  private writing: Promise<void> = Promise.resolve();
  private readonly file: string;
  /** the open file and its size in bytes, while lines keep coming */
  private handle: FileHandle | undefined;
  private size = 0;
  private idleTimer: NodeJS.Timeout | undefined;

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
    clearTimeout(this.idleTimer);
    try {
      // The file stays open while lines keep coming (a traced deployment appends at every
      // request): opening and closing it at each append cost more than the rest of a request.
      if (this.handle === undefined) {
        await mkdir(dirname(this.file), { recursive: true });
        this.handle = await open(this.file, 'a', 0o600);
        this.size = (await this.handle.stat()).size;
      }
      if (this.size > ROTATE_BYTES) {
        await this.closeFile();
        await rename(this.file, `${this.file}.1`);
        this.handle = await open(this.file, 'a', 0o600);
        this.size = 0;
      }
      await this.handle.write(text);
      this.size += Buffer.byteLength(text);
    } catch {
      // The log file is a convenience; the in-memory lines still serve `logs`. Open it again next time.
      await this.closeFile();
    }
    // A quiet log closes its file, so a deployment that is gone holds no descriptor.
    if (this.pending.length === 0) {
      this.idleTimer = setTimeout(() => {
        this.writing = this.writing.then(() => (this.pending.length === 0 ? this.closeFile() : undefined));
      }, IDLE_CLOSE_MS);
      this.idleTimer.unref();
    }
  }

  private async closeFile(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close().catch(() => undefined);
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
