/**
 * A deployment's log: engine events and the instances' output. The newest lines stay in memory
 * for `logs` and `followLogs`; every line is also appended to `<dir>/<deployment_id>.ndjson` so
 * the history outlives the engine. The file is rotated once (to `.1`) past a size limit.
 * The deployment redacts each line before it is appended; what is read is passed through the
 * engine's set again, so a line kept from before a value became secret does not show it either.
 */
import { closeSync, fstatSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { LogLine } from '../../api/contract.js';
import type { Redactor } from '../../runtime/server/logger.js';

const ROTATE_BYTES = 4 * 1024 * 1024;
/**
 * Lines are written to the file this long after the first of them: a traced deployment logs
 * lines at every request, and one write for the lines of many requests costs a system call less
 * per request than one write per turn of the event loop. The in-memory lines (`logs`, followers)
 * have them at once; a crash of the engine loses at most this much of the file.
 */
const FLUSH_DELAY_MS = 20;
/** how long an unused log file stays open */
const IDLE_CLOSE_MS = 2_000;
/** every log book with lines not yet written: the engine's close waits for them all (settleAll) */
const unwritten = new Set<LogBook>();

export class LogBook {
  private readonly lines: LogLine[] = [];
  private readonly listeners = new Set<(line: LogLine) => void>();
  private pending: string[] = [];
  /** the write of the pending lines, at the end of this turn of the event loop */
  private scheduled: Promise<void> | undefined;
  private readonly file: string;
  /** the open file and its size in bytes, while lines keep coming */
  private fd: number | undefined;
  private size = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private redactor: Redactor | undefined;

  constructor(
    dir: string,
    deploymentId: string,
    private readonly capacity: number,
  ) {
    this.file = join(dir, `${deploymentId}.ndjson`);
  }

  /** What lines read back pass through (the deployment's values and the engine's). */
  redactWith(redactor: Redactor): void {
    this.redactor = redactor;
  }

  append(line: LogLine): void {
    this.lines.push(line);
    // Trimmed in batches: cutting one line off the front of a full array copies all of it.
    if (this.lines.length >= this.capacity + Math.ceil(this.capacity / 8))
      this.lines.splice(0, this.lines.length - this.capacity);
    for (const listener of this.listeners) listener(line);
    this.pending.push(`${JSON.stringify(line)}\n`);
    if (this.scheduled !== undefined) return;
    unwritten.add(this);
    this.scheduled = new Promise((resolve) =>
      setTimeout(() => {
        this.scheduled = undefined;
        unwritten.delete(this);
        this.flush();
        resolve();
      }, FLUSH_DELAY_MS),
    );
  }

  /**
   * Waits until the lines of every log book (those of deployments that ended before too) are
   * written: a closing engine leaves none to be written after it is gone.
   */
  static async settleAll(): Promise<void> {
    await Promise.all([...unwritten].map((book) => book.settle()));
  }

  /** Lines at or after `since` that pass `filter`, the newest `limit` of them, oldest first. */
  async read(options: {
    since?: string;
    limit?: number;
    filter?: ((line: LogLine) => boolean) | undefined;
  }): Promise<LogLine[]> {
    const since = options.since === undefined ? undefined : Date.parse(options.since);
    const filter = options.filter;
    const kept = this.lines.length > this.capacity ? this.lines.slice(-this.capacity) : this.lines;
    const recent = since === undefined ? kept : kept.filter((line) => Date.parse(line.time) >= since);
    const matching = filter === undefined ? recent : recent.filter(filter);
    const lines = matching.slice(-(options.limit ?? 200));
    const redactor = this.redactor;
    if (redactor === undefined || redactor.size === 0) return lines;
    return lines.map((line) => {
      const message = redactor.redactText(line.message);
      return message === line.message ? line : { ...line, message };
    });
  }

  subscribe(listener: (line: LogLine) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Waits for the lines appended so far to reach the file. */
  async settle(): Promise<void> {
    await this.scheduled;
  }

  /**
   * Appends the pending lines in one write. The write is synchronous, as
   * Node's own writes of stdout to a file are: a few microseconds for an append that lands in the
   * page cache, where an asynchronous one costs a thread-pool round trip and promises (about 15
   * times the CPU), at every request of a traced deployment.
   */
  private flush(): void {
    const text = this.pending.join('');
    this.pending = [];
    try {
      // The file stays open while lines keep coming: opening and closing it at each append cost
      // more than the rest of a request.
      if (this.fd === undefined) {
        makeFolder(dirname(this.file));
        this.fd = openSync(this.file, 'a', 0o600);
        this.size = fstatSync(this.fd).size;
      }
      if (this.size > ROTATE_BYTES) {
        this.closeFile();
        renameSync(this.file, `${this.file}.1`);
        this.fd = openSync(this.file, 'a', 0o600);
        this.size = 0;
      }
      const bytes = Buffer.from(text, 'utf8');
      for (let written = 0; written < bytes.length;) written += writeSync(this.fd, bytes, written);
      this.size += bytes.length;
    } catch {
      // The log file is a convenience; the in-memory lines still serve `logs`. Open it again next time.
      this.closeFile();
    }
    // A quiet log closes its file, so a deployment that is gone holds no descriptor.
    if (this.idleTimer === undefined) {
      this.idleTimer = setTimeout(() => {
        this.idleTimer = undefined;
        if (this.scheduled === undefined) this.closeFile();
      }, IDLE_CLOSE_MS);
      this.idleTimer.unref();
    } else {
      this.idleTimer.refresh();
    }
  }

  private closeFile(): void {
    const fd = this.fd;
    this.fd = undefined;
    if (fd === undefined) return;
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }

  /**
   * Reads the newest lines back from the files. Called once, before any append, for a
   * deployment that existed before this engine started.
   */
  async load(): Promise<void> {
    const texts = await Promise.all(
      [`${this.file}.1`, this.file].map((file) => readFile(file, 'utf8').catch(() => '')),
    );
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

/** Makes the log folder if it is missing; not its parents: a home that was removed (the engine's state gone) is not made again. */
function makeFolder(dir: string): void {
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
