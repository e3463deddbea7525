/**
 * Prompts: arguments (a missing required one is an error, so is a value outside its `enum`), and
 * messages whose text, image, audio and embedded resources are compiled once and rendered with the
 * arguments per request.
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { GetPromptResult, Prompt } from '@modelcontextprotocol/server';
import type { PromptDefinition } from '../../definition/schema.js';
import { compileContent, messageOf, type CallContext, type CompileContext, type ContentRenderer } from './content.js';
import { PeerUnavailableError } from './peer.js';

export interface CompiledPrompt {
  listing: Prompt;
  get(args: Record<string, unknown> | undefined, call: CallContext): Promise<GetPromptResult>;
}

export async function compilePrompt(
  prompt: PromptDefinition,
  where: string,
  ctx: CompileContext,
): Promise<CompiledPrompt> {
  const declared = prompt.arguments ?? [];
  const messages: Array<{ role: 'user' | 'assistant'; render: ContentRenderer }> = [];
  if (prompt.messages === undefined) {
    // no messages defined: the description and the arguments given, said as they are
    const lines = [
      prompt.description ?? prompt.title ?? prompt.name,
      ...declared.map((a) => `${a.name}: {{args.${a.name}}}`),
    ];
    messages.push({ role: 'user', render: await compileContent(lines.join('\n'), `${where}.description`, ctx) });
  } else {
    for (const [i, message] of prompt.messages.entries()) {
      messages.push({
        role: message.role,
        render: await compileContent(message.content, `${where}.messages[${i}].content`, ctx),
      });
    }
  }
  const listing: Prompt = {
    name: prompt.name,
    ...(prompt.title === undefined ? {} : { title: prompt.title }),
    ...(prompt.description === undefined ? {} : { description: prompt.description }),
    ...(prompt.icons === undefined ? {} : { icons: prompt.icons }),
    ...(declared.length === 0
      ? {}
      : {
          arguments: declared.map((a) => ({
            name: a.name,
            ...(a.description === undefined ? {} : { description: a.description }),
            ...(a.required === undefined ? {} : { required: a.required }),
          })),
        }),
  };

  return {
    listing,
    async get(args, call) {
      const given = prompt.elicit === undefined ? (args ?? {}) : await askMissing(prompt, args ?? {}, call);
      const missing = declared.filter(
        (a) => a.required === true && (given[a.name] === undefined || given[a.name] === ''),
      );
      if (missing.length > 0) {
        const names = missing.map((a) => `"${a.name}"`).join(', ');
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Prompt "${prompt.name}" needs the argument${missing.length > 1 ? 's' : ''} ${names}`,
        );
      }
      for (const a of declared) {
        const value = given[a.name];
        if (a.enum === undefined || value === undefined || value === '' || a.enum.includes(value as string)) continue;
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Prompt "${prompt.name}": argument "${a.name}" must be one of ${a.enum.map((v) => `"${v}"`).join(', ')} (got ${JSON.stringify(value)})`,
        );
      }
      const scope = { args: given, user: { id: call.userId }, server: ctx.server };
      const rendered: GetPromptResult['messages'] = [];
      for (const message of messages) {
        try {
          const { block } = await message.render(scope, call);
          rendered.push({ role: message.role, content: block });
        } catch (error) {
          if (error instanceof ProtocolError) throw error;
          throw new ProtocolError(ProtocolErrorCode.InternalError, `Prompt "${prompt.name}": ${messageOf(error)}`);
        }
      }
      return { ...(prompt.description === undefined ? {} : { description: prompt.description }), messages: rendered };
    },
  };
}

/**
 * The arguments with those the client did not give asked of the user (the prompt's `elicit`). When
 * the client cannot be asked here, or the user declines, the arguments stay as they were given.
 */
async function askMissing(
  prompt: PromptDefinition,
  given: Record<string, unknown>,
  call: CallContext,
): Promise<Record<string, unknown>> {
  const missing = (prompt.arguments ?? []).filter((a) => given[a.name] === undefined || given[a.name] === '');
  if (missing.length === 0 || call.peer === undefined || prompt.elicit === undefined) return given;
  const properties = Object.fromEntries(
    missing.map((a) => [
      a.name,
      {
        type: 'string' as const,
        ...(a.description === undefined ? {} : { description: a.description }),
        ...(a.enum === undefined ? {} : { enum: a.enum }),
      },
    ]),
  );
  const required = missing.filter((a) => a.required === true).map((a) => a.name);
  let answer;
  try {
    answer = await call.peer.elicit(
      prompt.elicit.message,
      { type: 'object', properties, ...(required.length === 0 ? {} : { required }) },
      { key: prompt.elicit.key ?? 'arguments' },
    );
  } catch (error) {
    if (error instanceof PeerUnavailableError) return given;
    throw error;
  }
  if (answer.action !== 'accept' || answer.content === undefined) return given;
  const filled = { ...given };
  for (const a of missing) {
    const value = answer.content[a.name];
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      filled[a.name] = String(value);
  }
  return filled;
}
