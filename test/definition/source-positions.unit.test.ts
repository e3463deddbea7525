import { describe, expect, it } from 'vitest';
import { parseDefinition } from '../../src/definition/load.js';
import { itemPositions } from '../../src/definition/source-positions.js';

async function positionsOf(source: string) {
  try {
    return itemPositions(await parseDefinition(source, { file: '/defs/server.yaml', shown: 'server.yaml' }));
  } catch (error) {
    // the problems say what is wrong with the test's own definition
    throw new Error(JSON.stringify((error as { problems?: unknown }).problems ?? error), { cause: error });
  }
}

const HANDLER = 'handler: { type: error, message: no }';
const SCHEMA = 'inputSchema: { type: object }';

describe('where the items of a definition are written', () => {
  it('gives each tool, resource and prompt the line and column of its node, block style', async () => {
    const source = [
      'name: demo', // 1
      'template: basic', // 2
      'tools:', // 3
      '  - name: greet', // 4
      '    description: Greets', // 5
      `    ${SCHEMA}`, // 6
      `    ${HANDLER}`, // 7
      '', // 8
      '  # a comment does not move the next one', // 9
      '  - description: Says goodbye', // 10
      '    name: part', // 11
      `    ${SCHEMA}`, // 12
      `    ${HANDLER}`, // 13
      'resources:', // 14
      '  - uri: notes://today', // 15
      '    name: today', // 16
      '    description: Today’s notes', // 17
      '    source: { type: text, text: nothing yet }', // 18
      'prompts:', // 19
      '    -   name: plan', // 20
      '        messages: [{ role: user, content: plan it }]', // 21
    ].join('\n');
    expect(await positionsOf(source)).toEqual({
      tools: { greet: { line: 4, column: 5 }, part: { line: 10, column: 5 } },
      resources: { 'notes://today': { line: 15, column: 5 } },
      prompts: { plan: { line: 20, column: 9 } },
    });
  });

  it('flow style: the position of each item’s opening brace', async () => {
    const source = [
      'name: demo',
      'template: basic',
      `tools: [{ name: a, description: A, ${SCHEMA}, ${HANDLER} },`,
      `        { name: b, description: B, ${SCHEMA}, ${HANDLER} }]`,
      'resources: [{ uri: "docs://{name}", name: docs, description: Docs, source: { type: text, text: x } }]',
    ].join('\n');
    expect(await positionsOf(source)).toEqual({
      tools: { a: { line: 3, column: 9 }, b: { line: 4, column: 9 } },
      resources: { 'docs://{name}': { line: 5, column: 13 } },
    });
  });

  it('leaves out the sections a definition does not have', async () => {
    const source = [
      'name: demo',
      'template: basic',
      'resources:',
      '  - { uri: "a://b", name: b, description: B, source: { type: text, text: x } }',
    ].join('\n');
    expect(await positionsOf(source)).toEqual({ resources: { 'a://b': { line: 4, column: 5 } } });
  });

  it('keeps a tool named __proto__ as a name like any other', async () => {
    const source = [
      'name: demo',
      'template: basic',
      'tools:',
      `  - { name: __proto__, description: P, ${SCHEMA}, ${HANDLER} }`,
    ].join('\n');
    const positions = await positionsOf(source);
    expect(Object.hasOwn(positions.tools!, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(positions.tools)).toBe(Object.prototype);
    expect(JSON.stringify(positions)).toBe('{"tools":{"__proto__":{"line":4,"column":5}}}');
  });
});
