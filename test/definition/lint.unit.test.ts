/** Lint rules, on definitions in memory: what is warned, and what is not. */
import { describe, expect, it } from 'vitest';
import { lintDefinition } from '../../src/definition/lint.js';
import { ServerDefinition } from '../../src/definition/schema.js';

function tool(name: string, description: string, inputSchema: Record<string, unknown> = { type: 'object' }) {
  return { name, description, inputSchema };
}
const rules = (tools: unknown[]) =>
  lintDefinition(ServerDefinition.parse({ name: 's', template: 'basic', tools })).map(
    (i) => `${i.rule} ${i.path.join('.')}`,
  );

describe('lintDefinition', () => {
  it('says nothing about tools an agent can tell apart', () => {
    expect(
      rules([tool('add', 'Adds two or more numbers together'), tool('forecast', 'Daily weather forecast for a city')]),
    ).toEqual([]);
  });

  it('warns about the second of a near-identical pair, once per pair', () => {
    expect(
      rules([
        tool('a', 'Sends an email message to a colleague at work'),
        tool('b', 'Sends an email message to a colleague from work'),
        tool('c', 'Daily weather forecast for a city'),
      ]),
    ).toEqual(['similar_descriptions tools.1.description']);
  });

  it('warns about each tool of a near-identical group once, naming the most alike and how many more', () => {
    const issues = lintDefinition(
      ServerDefinition.parse({
        name: 's',
        template: 'basic',
        tools: [
          tool('a', 'Sends an email message to a colleague at work'),
          tool('b', 'Sends an email message to a colleague from work'),
          tool('c', 'Sends an email message to a colleague for work'),
        ],
      }),
    );
    expect(issues.map((i) => i.path.join('.'))).toEqual(['tools.1.description', 'tools.2.description']);
    expect(issues[1]!.message).toMatch(
      /^near-identical to the description of a \(tools\[0\]\) \(and 1 more earlier tool\): they share/,
    );
  });

  it('counts words that say something: stop words and generic verbs do not', () => {
    expect(rules([tool('t', 'Returns the value of it')])).toEqual(['short_description tools.0.description']);
    expect(rules([tool('t', 'Echoes text back')])).toEqual([]);
  });

  it('warns about required parameters without a description, not optional ones or ones the schema lacks', () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, days: { type: 'integer' }, unit: { type: 'string', description: '  ' } },
      required: ['city', 'unit', 'ghost'],
    };
    expect(rules([tool('forecast', 'Daily weather forecast for a city', schema)])).toEqual([
      'undescribed_parameter tools.0.inputSchema.properties.city',
      'undescribed_parameter tools.0.inputSchema.properties.unit',
    ]);
  });
});
