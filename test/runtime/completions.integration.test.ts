/**
 * completion/complete, served from a bundle on a real socket and asked by the official MCP client:
 * an argument's enum completes by itself (and prompts/get refuses a value outside it), a module's
 * function completes a prompt argument and a URI-template variable from the arguments already
 * given, at most 100 values with the total; a function that throws, answers badly or hangs is a
 * JSON-RPC error and the server keeps answering; nothing that completes, no `completions`.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ProtocolError } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { RuntimeStartError } from '../../src/runtime/server/server.js';
import { connect, makeTempDir, serveDefinition } from '../support/runtime.js';

const DEFINITION = `
name: completing
template: custom
resources:
  - uri: streets://{city}/{street}
    name: street
    description: A street of a city.
    complete:
      city: [Paris, Lyon]
      street: { module: complete.ts, export: streets }
    source: { type: text, text: "{{params.street}}, {{params.city}}" }
prompts:
  - name: trip
    arguments:
      - { name: country, required: true, enum: [France, Germany, Japan] }
      - { name: city, complete: { module: complete.ts, export: cities } }
      - { name: mode, enum: [train, plane], complete: [train] }
      - { name: note }
    messages:
      - { role: user, content: "{{args.city}} in {{args.country}}" }
  - name: broken
    arguments:
      - { name: throws, complete: { module: complete.ts, export: throws } }
      - { name: answersBadly, complete: { module: complete.ts, export: answersBadly } }
      - { name: hangs, complete: { module: complete.ts, export: hangs, timeout_ms: 100 } }
`;

const MODULE = `
const CITIES: Record<string, string[]> = { France: ['Paris', 'Lyon', 'Lille'], Germany: ['Berlin', 'Bonn'] };

export function cities(typed: string, context: { argument: string; arguments: Record<string, string> }): string[] {
  const known = CITIES[context.arguments.country ?? ''] ?? Object.values(CITIES).flat();
  return known.filter((city) => city.toLowerCase().startsWith(typed.toLowerCase()));
}

export async function streets(typed: string, context: { arguments: Record<string, string> }): Promise<Array<string | number>> {
  await new Promise((resolve) => setTimeout(resolve, 1));
  const count = context.arguments.city === 'Paris' ? 150 : 2;
  return Array.from({ length: count }, (_, i) => \`\${typed}\${context.arguments.city ?? '?'} street \${i + 1}\`);
}

export function throws(): never {
  throw new Error('the city list is unreachable');
}

export function answersBadly(): unknown {
  return 'Paris';
}

export function hangs(_typed: string, context: { signal: AbortSignal }): Promise<string[]> {
  return new Promise((resolve) => context.signal.addEventListener('abort', () => resolve(['too late'])));
}
`;

async function serve(yaml: string, module?: string) {
  const dir = await makeTempDir('mcpctl-completions-');
  await writeFile(join(dir.path, 'server.yaml'), yaml);
  if (module !== undefined) await writeFile(join(dir.path, 'complete.ts'), module);
  const served = await serveDefinition(join(dir.path, 'server.yaml')).catch(async (error: unknown) => {
    await dir[Symbol.asyncDispose]();
    throw error;
  });
  const client = await connect(served.mcpUrl);
  return {
    client,
    async [Symbol.asyncDispose]() {
      await client.close();
      await served[Symbol.asyncDispose]();
      await dir[Symbol.asyncDispose]();
    },
  };
}

const prompt = (name: string) => ({ type: 'ref/prompt' as const, name });

describe('completion/complete', () => {
  it('completes from an enum by itself, and prompts/get accepts only its values', async () => {
    await using server = await serve(DEFINITION, MODULE);
    const { client } = server;
    expect(client.getServerCapabilities()?.completions).toEqual({});
    const country = await client.complete({ ref: prompt('trip'), argument: { name: 'country', value: 'g' } });
    expect(country.completion).toEqual({ values: ['Germany'], total: 1, hasMore: false });
    const every = await client.complete({ ref: prompt('trip'), argument: { name: 'country', value: '' } });
    expect(every.completion.values).toEqual(['France', 'Germany', 'Japan']);
    // a list of its own narrows what is offered; the enum still decides what is accepted
    const mode = await client.complete({ ref: prompt('trip'), argument: { name: 'mode', value: '' } });
    expect(mode.completion.values).toEqual(['train']);
    const none = await client.complete({ ref: prompt('trip'), argument: { name: 'note', value: 'x' } });
    expect(none.completion).toEqual({ values: [], total: 0, hasMore: false });

    const got = await client.getPrompt({ name: 'trip', arguments: { country: 'Japan', city: 'Kyoto', mode: 'plane' } });
    expect(got.messages[0]?.content).toEqual({ type: 'text', text: 'Kyoto in Japan' });
    const refused = await client
      .getPrompt({ name: 'trip', arguments: { country: 'Spain', city: 'Madrid' } })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ProtocolError);
    expect(refused).toMatchObject({ code: -32602 });
    expect((refused as Error).message).toContain(
      'Prompt "trip": argument "country" must be one of "France", "Germany", "Japan" (got "Spain")',
    );
  });

  it('completes from a module function that reads the arguments already given, for prompts and URI templates', async () => {
    await using server = await serve(DEFINITION, MODULE);
    const { client } = server;
    const inFrance = await client.complete({
      ref: prompt('trip'),
      argument: { name: 'city', value: 'l' },
      context: { arguments: { country: 'France' } },
    });
    expect(inFrance.completion).toEqual({ values: ['Lyon', 'Lille'], total: 2, hasMore: false });
    const inGermany = await client.complete({
      ref: prompt('trip'),
      argument: { name: 'city', value: 'B' },
      context: { arguments: { country: 'Germany' } },
    });
    expect(inGermany.completion.values).toEqual(['Berlin', 'Bonn']);
    const anywhere = await client.complete({ ref: prompt('trip'), argument: { name: 'city', value: 'b' } });
    expect(anywhere.completion.values).toEqual(['Berlin', 'Bonn']);

    const template = { type: 'ref/resource' as const, uri: 'streets://{city}/{street}' };
    const city = await client.complete({ ref: template, argument: { name: 'city', value: 'p' } });
    expect(city.completion.values).toEqual(['Paris']);
    const lyon = await client.complete({
      ref: template,
      argument: { name: 'street', value: 'rue ' },
      context: { arguments: { city: 'Lyon' } },
    });
    expect(lyon.completion).toEqual({ values: ['rue Lyon street 1', 'rue Lyon street 2'], total: 2, hasMore: false });
    // more than the protocol's 100: the first 100, the total, and that there are more
    const paris = await client.complete({
      ref: template,
      argument: { name: 'street', value: '' },
      context: { arguments: { city: 'Paris' } },
    });
    expect(paris.completion.values).toHaveLength(100);
    expect(paris.completion.values[99]).toBe('Paris street 100');
    expect(paris.completion).toMatchObject({ total: 150, hasMore: true });
  });

  it('turns a function that throws, answers something else than strings, or hangs into a JSON-RPC error, and keeps serving', async () => {
    await using server = await serve(DEFINITION, MODULE);
    const { client } = server;
    const ask = (name: string) =>
      client.complete({ ref: prompt('broken'), argument: { name, value: '' } }).catch((error: unknown) => error);

    const thrown = await ask('throws');
    expect(thrown).toBeInstanceOf(ProtocolError);
    expect(thrown).toMatchObject({ code: -32603 });
    expect((thrown as Error).message).toContain(
      'completing the argument "throws" of prompt "broken": the city list is unreachable',
    );
    expect((await ask('answersBadly')) as Error).toMatchObject({
      code: -32603,
      message: expect.stringContaining('answersBadly() must return an array of strings, not string') as unknown,
    });
    expect((await ask('hangs')) as Error).toMatchObject({
      code: -32603,
      message: expect.stringContaining('hangs() did not answer within 100 ms (time-out)') as unknown,
    });

    const unknown = await client
      .complete({ ref: prompt('nope'), argument: { name: 'a', value: '' } })
      .catch((error: unknown) => error);
    expect(unknown).toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown prompt: nope') as unknown,
    });
    // the server is still there
    const after = await client.complete({ ref: prompt('trip'), argument: { name: 'country', value: 'fr' } });
    expect(after.completion.values).toEqual(['France']);
  });

  it('refuses to start when a completion function cannot be loaded, naming the field', async () => {
    // CommonJS: the build cannot read its exports from the text, so the runtime is the one to say
    const yaml = DEFINITION.replace(
      'complete: { module: complete.ts, export: cities }',
      'complete: { module: complete.cjs, export: cities }',
    );
    await using dir = await makeTempDir('mcpctl-completions-');
    await writeFile(join(dir.path, 'server.yaml'), yaml);
    await writeFile(join(dir.path, 'complete.ts'), MODULE);
    await writeFile(join(dir.path, 'complete.cjs'), 'module.exports = { towns: () => [] };\n');
    const error = await serveDefinition(join(dir.path, 'server.yaml')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeStartError);
    expect((error as RuntimeStartError).problems).toEqual([
      'prompts[0].arguments[1].complete: complete.cjs has no exported function "cities"',
    ]);
  });

  it('declares no completions capability when nothing completes, and refuses the method', async () => {
    const plain = [
      'name: plain',
      'template: basic',
      'prompts:',
      '  - name: hello',
      '    description: Says hello',
      '    arguments: [{ name: who }]',
      '    messages: [{ role: user, content: "Hello {{args.who}}" }]',
      'resources:',
      '  - { uri: "notes://{topic}", name: notes, description: Notes on a topic, source: { type: text, text: "{{params.topic}}" } }',
    ].join('\n');
    await using server = await serve(plain);
    const { client } = server;
    const capabilities = client.getServerCapabilities();
    expect(capabilities).toMatchObject({ prompts: {}, resources: {} });
    expect(capabilities?.completions).toBeUndefined();
    const refused = await client
      .complete({ ref: prompt('hello'), argument: { name: 'who', value: '' } })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: -32601 });
  });
});
