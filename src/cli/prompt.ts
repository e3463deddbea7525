/**
 * The one way the CLI asks a question. On an interactive terminal it prompts with
 * @inquirer/prompts (loaded only when a question is really asked); elsewhere (CI, pipes,
 * `--yes`) it takes the default, or fails with the flag to pass instead. Ctrl-C ends the
 * command with exit 130.
 */
import { Writable } from 'node:stream';
import { EXIT, ExitError, UserError } from '../shared/errors.js';
import type { CommandContext } from './context.js';

export interface AskOptions<T> {
  message: string;
  /** the flag that answers this question without a prompt, for the error message */
  flag: string;
  default?: T;
  /** true when --yes was given: take the default without asking */
  yes?: boolean;
}

/** True when a question would be asked rather than answered by its default. */
export function canPrompt(ctx: CommandContext): boolean {
  return ctx.out.interactive && ctx.io.stdin.isTTY === true && !ctx.globals.json;
}

/**
 * The prompt library ends the output stream it is given when a prompt closes (unless it is the
 * process's own). Each prompt gets a fresh proxy, so the real stream stays open for what follows.
 */
function promptContext(ctx: CommandContext) {
  const target = ctx.io.stderr;
  const output =
    target === process.stderr || target === process.stdout
      ? target
      : Object.assign(
          new Writable({
            write(chunk: Buffer | string, encoding: BufferEncoding, callback: (error?: Error | null) => void) {
              target.write(chunk, encoding, callback);
            },
          }),
          { isTTY: target.isTTY, columns: target.columns },
        );
  return { input: ctx.io.stdin, output, signal: ctx.signal };
}

function noAnswer(flag: string): never {
  throw new UserError(`a value is needed and this terminal is not interactive`, {
    hint: `pass ${flag}`,
  });
}

async function guard<T>(ask: () => Promise<T>): Promise<T> {
  try {
    return await ask();
  } catch (error) {
    if (error instanceof Error && (error.name === 'ExitPromptError' || error.name === 'AbortPromptError')) {
      throw new ExitError(EXIT.interrupted);
    }
    throw error;
  }
}

export async function askText(
  ctx: CommandContext,
  options: AskOptions<string> & { validate?: (value: string) => string | true },
): Promise<string> {
  if (options.yes === true || !canPrompt(ctx)) return options.default ?? noAnswer(options.flag);
  const { input } = await import('@inquirer/prompts');
  return guard(() =>
    input(
      {
        message: options.message,
        ...(options.default === undefined ? {} : { default: options.default }),
        ...(options.validate === undefined ? {} : { validate: options.validate }),
      },
      promptContext(ctx),
    ),
  );
}

export async function askChoice<T extends string>(
  ctx: CommandContext,
  options: AskOptions<T> & { choices: ReadonlyArray<{ value: T; name?: string; description?: string }> },
): Promise<T> {
  if (options.yes === true || !canPrompt(ctx)) return options.default ?? noAnswer(options.flag);
  const { select } = await import('@inquirer/prompts');
  return guard(() =>
    select<T>(
      {
        message: options.message,
        choices: options.choices.map((c) => ({ value: c.value, name: c.name ?? c.value, description: c.description })),
        ...(options.default === undefined ? {} : { default: options.default }),
      },
      promptContext(ctx),
    ),
  );
}

export async function askConfirm(ctx: CommandContext, options: AskOptions<boolean>): Promise<boolean> {
  if (options.yes === true) return true;
  if (!canPrompt(ctx)) return options.default ?? noAnswer(options.flag);
  const { confirm } = await import('@inquirer/prompts');
  return guard(() =>
    confirm(
      { message: options.message, ...(options.default === undefined ? {} : { default: options.default }) },
      promptContext(ctx),
    ),
  );
}

/** A secret typed at a hidden prompt; never echoed. */
export async function askSecret(ctx: CommandContext, options: { message: string; flag: string }): Promise<string> {
  if (!canPrompt(ctx)) return noAnswer(options.flag);
  const { password } = await import('@inquirer/prompts');
  return guard(() => password({ message: options.message, mask: false }, promptContext(ctx)));
}
