/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-return -- the tables edit raw, untyped documents */
import { describe, expect, it } from 'vitest';
import { checkDefinition } from '../../src/definition/check.js';
import { requiredEnvVars } from '../../src/definition/env-refs.js';
import { checkRelativePath } from '../../src/definition/file-paths.js';
import { validateJsonSchema } from '../../src/definition/json-schema.js';
import { looksLikeSecret } from '../../src/definition/secrets.js';
import { parseTemplateRefs } from '../../src/definition/template.js';
import { parseUriTemplate } from '../../src/definition/uri-template.js';
import { formatPath } from '../../src/shared/paths.js';

type Def = Record<string, any>;

/** A valid definition that uses most features; each case changes one thing. */
function base(): Def {
  return {
    name: 'demo',
    template: 'advanced',
    auth: { type: 'oauth', issuer: 'https://auth.example.com/', scopes: ['demo:read'] },
    include: ['data'],
    tools: [
      {
        name: 'greet',
        description: 'Greets',
        inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        handler: {
          type: 'static',
          content: [{ type: 'text', text: 'Hello {{args.name}} from {{server.name}}, {{user.id}}' }],
        },
      },
      {
        name: 'weather',
        description: 'Weather',
        inputSchema: { type: 'object', properties: { lat: { type: 'number' } } },
        handler: {
          type: 'http',
          url: '${API:-https://api.example.com}/w?lat={{args.lat}}',
          headers: { Authorization: 'Bearer ${API_TOKEN}' },
        },
      },
      {
        name: 'stats',
        description: 'Stats',
        inputSchema: { type: 'object' },
        handler: { type: 'exec', command: ['node', './scripts/stats.mjs'] },
      },
    ],
    resources: [
      { uri: 'docs://guide', name: 'guide', description: 'Guide', source: { type: 'file', path: 'data/guide.md' } },
      {
        uri: 'notes://{topic}',
        name: 'notes',
        description: 'Notes',
        source: { type: 'file', path: 'data/notes/{{params.topic}}.md' },
      },
      {
        uri: 'profile://me',
        name: 'me',
        description: 'Me',
        per_user: true,
        source: { type: 'text', text: 'user {{user.id}}' },
      },
    ],
    prompts: [
      {
        name: 'summarize',
        arguments: [{ name: 'topic', required: true }],
        messages: [{ role: 'user', content: 'Summarize {{args.topic}} ({{args}})' }],
      },
    ],
    deploy: {
      scaling: { min_instances: 1, max_instances: 3 },
      env_vars: { MCP_AUTH_TOKEN: '${MCP_AUTH_TOKEN}', LOG_LEVEL: 'info' },
    },
    tests: {
      cases: [
        {
          name: 'greets',
          message: 'hi',
          expect: { tools: ['greet'], not_tools: ['stats'], resources: ['notes://release', 'docs://guide'] },
        },
      ],
    },
  };
}

const FILES: Record<string, 'file' | 'dir'> = {
  data: 'dir',
  'data/guide.md': 'file',
  'data/notes': 'dir',
  'scripts/stats.mjs': 'file',
  scripts: 'dir',
  'tools.ts': 'file',
};
const stat = (path: string) => FILES[path];

function check(def: Def) {
  return checkDefinition(def, { stat }).map((issue) => ({
    severity: issue.severity,
    path: formatPath(issue.path),
    message: issue.message,
  }));
}

describe('checkDefinition', () => {
  it('accepts the base definition without errors or warnings', () => {
    expect(check(base())).toEqual([]);
  });

  it.each([
    ['only tools', (d: Def) => (delete d.resources, delete d.prompts, delete d.tests.cases[0].expect.resources)],
    ['only resources', (d: Def) => (delete d.tools, delete d.prompts, delete d.tests)],
    ['only prompts', (d: Def) => (delete d.tools, delete d.resources, delete d.tests)],
    [
      'additionalProperties makes any {{args.x}} possible',
      (d: Def) => {
        d.tools[0].inputSchema.additionalProperties = true;
        d.tools[0].handler.content[0].text = '{{args.anything}}';
      },
    ],
    [
      'required names covered by additionalProperties',
      (d: Def) => {
        d.tools[2].inputSchema = { type: 'object', additionalProperties: { type: 'string' }, required: ['free'] };
      },
    ],
    [
      'a 2020-12 schema with $defs and $ref',
      (d: Def) => {
        d.tools[2].inputSchema = {
          type: 'object',
          $defs: { point: { type: 'object', properties: { x: { type: 'number' } } } },
          properties: { at: { $ref: '#/$defs/point' } },
        };
      },
    ],
    [
      'a draft-07 schema with tuple items',
      (d: Def) => {
        d.tools[2].inputSchema = {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } },
        };
      },
    ],
    [
      'unknown keywords and formats',
      (d: Def) => {
        d.tools[2].inputSchema = {
          type: 'object',
          'x-ui': 'wide',
          properties: { mail: { type: 'string', format: 'e-mail-ish' } },
        };
      },
    ],
    [
      'a templated module-free custom server',
      (d: Def) => {
        d.template = 'custom';
        d.tools[2].handler = { type: 'module', module: 'tools.ts' };
      },
    ],
    [
      'an enum, listed values inside it, and a completion module in a custom server',
      (d: Def) => {
        d.template = 'custom';
        d.prompts[0].arguments = [
          { name: 'topic', required: true, enum: ['release', 'onboarding'], complete: ['release'] },
          { name: 'page', complete: { module: 'tools.ts', export: 'pages' } },
        ];
        d.resources[1].complete = { topic: { module: 'tools.ts', export: 'topics' } };
      },
    ],
    ['a literal non-secret env var', (d: Def) => (d.deploy.env_vars.REGION = 'eu-west-1')],
    ['an escaped ${ in deploy', (d: Def) => (d.deploy.env_vars.TEMPLATE = 'cost: $${AMOUNT}')],
    ['equal min and max instances', (d: Def) => (d.deploy.scaling = { min_instances: 2, max_instances: 2 })],
    [
      'a nested object schema with its own required',
      (d: Def) => {
        d.tools[2].inputSchema = {
          type: 'object',
          properties: { to: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] } },
        };
      },
    ],
  ])('accepts %s', (_, change) => {
    const def = base();
    change(def);
    expect(check(def).filter((issue) => issue.severity === 'error')).toEqual([]);
  });

  it.each<[string, (d: Def) => void, 'error' | 'warning', string, RegExp]>([
    [
      'duplicate tool names',
      (d) => (d.tools[1].name = 'greet'),
      'error',
      'tools[1].name',
      /duplicate tool name "greet" \(already declared by tools\[0\]\)/,
    ],
    [
      'duplicate resource uris',
      (d) => (d.resources[2].uri = 'docs://guide'),
      'error',
      'resources[2].uri',
      /duplicate resource uri/,
    ],
    [
      'duplicate prompt names',
      (d) => d.prompts.push({ name: 'summarize' }),
      'error',
      'prompts[1].name',
      /duplicate prompt name/,
    ],
    [
      'duplicate prompt arguments',
      (d) => d.prompts[0].arguments.push({ name: 'topic' }),
      'error',
      'prompts[0].arguments[1].name',
      /duplicate argument "topic"/,
    ],
    [
      'duplicate test case names',
      (d) => d.tests.cases.push({ name: 'greets', message: 'x' }),
      'error',
      'tests.cases[1].name',
      /duplicate test case/,
    ],
    [
      'a required name that is not a property',
      (d) => d.tools[0].inputSchema.required.push('age'),
      'error',
      'tools[0].inputSchema.required[1]',
      /"age" is required but not declared in properties/,
    ],
    [
      'required without properties',
      (d) => (d.tools[2].inputSchema.required = ['x']),
      'error',
      'tools[2].inputSchema.required[0]',
      /"x" is required/,
    ],
    [
      'a nested required name that is not a property',
      (d) => {
        d.tools[2].inputSchema = {
          type: 'object',
          properties: { to: { type: 'object', properties: {}, required: ['email'] } },
        };
      },
      'error',
      'tools[2].inputSchema.properties.to.required[0]',
      /"email" is required/,
    ],
    [
      'an invalid JSON Schema type',
      (d) => (d.tools[0].inputSchema.properties.name.type = 'strin'),
      'error',
      'tools[0].inputSchema.properties.name.type',
      /invalid JSON Schema \(2020-12\): must be equal to one of the allowed values \(array, boolean, integer, null, number, object, string\)/,
    ],
    [
      'a non-array required',
      (d) => (d.tools[2].outputSchema = { type: 'object', required: 'x' }),
      'error',
      'tools[2].outputSchema.required',
      /invalid JSON Schema \(2020-12\): must be array/,
    ],
    [
      'an unresolvable $ref',
      (d) => (d.tools[2].inputSchema = { type: 'object', properties: { a: { $ref: '#/$defs/nope' } } }),
      'error',
      'tools[2].inputSchema',
      /invalid JSON Schema: can't resolve reference/,
    ],
    [
      'an invalid regular expression',
      (d) => (d.tools[2].inputSchema = { type: 'object', properties: { a: { type: 'string', pattern: '([a-z' } } }),
      'error',
      'tools[2].inputSchema.properties.a.pattern',
      /invalid JSON Schema: Invalid regular expression/,
    ],
    [
      'an invalid property pattern',
      (d) => (d.tools[2].inputSchema = { type: 'object', patternProperties: { '^x(': { type: 'string' } } }),
      'error',
      'tools[2].inputSchema.patternProperties["^x("]',
      /Invalid regular expression/,
    ],
    [
      'tuple items under 2020-12',
      (d) =>
        (d.tools[2].inputSchema = {
          type: 'object',
          properties: { p: { type: 'array', items: [{ type: 'string' }] } },
        }),
      'error',
      'tools[2].inputSchema.properties.p.items',
      /invalid JSON Schema \(2020-12\)/,
    ],
    [
      'an unsupported $schema',
      (d) => (d.tools[2].inputSchema = { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }),
      'error',
      'tools[2].inputSchema.$schema',
      /unsupported \$schema/,
    ],
    [
      'a module handler outside template custom',
      (d) => (d.tools[2].handler = { type: 'module', module: 'tools.ts' }),
      'error',
      'tools[2].handler.type',
      /need template: custom \(this is advanced\)/,
    ],
    [
      'a task started by a handler that is not a module',
      (d) => (d.tools[2].task = { support: 'optional', start: 'handler' }),
      'error',
      'tools[2].task.start',
      /start: handler needs a module handler/,
    ],
    [
      'a module that is not JavaScript or TypeScript',
      (d) => {
        d.template = 'custom';
        d.tools[2].handler = { type: 'module', module: 'tools.py' };
      },
      'error',
      'tools[2].handler.module',
      /must be a \.js/,
    ],
    [
      'a module tool whose name is no identifier',
      (d) => {
        d.template = 'custom';
        d.tools[2].name = 'get-stats';
        d.tools[2].handler = { type: 'module', module: 'tools.ts' };
        d.tests.cases[0].expect.not_tools = [];
      },
      'error',
      'tools[2].handler',
      /set export/,
    ],
    [
      'an absolute file path',
      (d) => (d.resources[0].source.path = '/etc/passwd'),
      'error',
      'resources[0].source.path',
      /relative to the definition folder, not absolute/,
    ],
    [
      'a Windows absolute path',
      (d) => (d.resources[0].source.path = 'C:/data/x.md'),
      'error',
      'resources[0].source.path',
      /not absolute/,
    ],
    [
      'a path that leaves the folder',
      (d) => (d.resources[0].source.path = 'data/../../secret.md'),
      'error',
      'resources[0].source.path',
      /inside the definition folder/,
    ],
    [
      'a templated path that leaves the folder',
      (d) => (d.resources[1].source.path = '../{{params.topic}}.md'),
      'error',
      'resources[1].source.path',
      /inside the definition folder/,
    ],
    [
      'backslashes',
      (d) => (d.resources[0].source.path = 'data\\guide.md'),
      'error',
      'resources[0].source.path',
      /use \/ as the path separator/,
    ],
    [
      'an include outside the folder',
      (d) => (d.include = ['..']),
      'error',
      'include[0]',
      /inside the definition folder/,
    ],
    [
      'a missing file',
      (d) => (d.resources[0].source.path = 'data/missing.md'),
      'error',
      'resources[0].source.path',
      /data\/missing\.md does not exist/,
    ],
    ['a missing include', (d) => d.include.push('assets'), 'error', 'include[1]', /assets does not exist/],
    [
      'a folder where a file is needed',
      (d) => (d.resources[0].source.path = 'data'),
      'error',
      'resources[0].source.path',
      /is a folder, not a file/,
    ],
    [
      'a missing exec script',
      (d) => (d.tools[2].handler.command = ['node', './scripts/missing.mjs']),
      'error',
      'tools[2].handler.command[1]',
      /scripts\/missing\.mjs does not exist/,
    ],
    [
      'an exec script relative to its cwd',
      (d) => {
        d.tools[2].handler.cwd = 'scripts';
        d.tools[2].handler.command = ['node', './stats.mjs', './nope.mjs'];
      },
      'error',
      'tools[2].handler.command[2]',
      /scripts\/nope\.mjs does not exist/,
    ],
    [
      'an exec cwd that is a file',
      (d) => (d.tools[2].handler.cwd = 'tools.ts'),
      'error',
      'tools[2].handler.cwd',
      /is a file, not a folder/,
    ],
    [
      'a missing media file',
      (d) => d.tools[0].handler.content.push({ type: 'image', mimeType: 'image/png', path: 'logo.png' }),
      'error',
      'tools[0].handler.content[1].path',
      /logo\.png does not exist/,
    ],
    [
      'a missing media file in a prompt',
      (d) =>
        d.prompts[0].messages.push({ role: 'user', content: { type: 'audio', mimeType: 'audio/wav', path: 'a.wav' } }),
      'error',
      'prompts[0].messages[1].content.path',
      /a\.wav does not exist/,
    ],
    [
      'an unbalanced URI template',
      (d) => (d.resources[1].uri = 'notes://{topic'),
      'error',
      'resources[1].uri',
      /URI template has a \{ without a matching \}/,
    ],
    [
      'a closing brace alone',
      (d) => (d.resources[0].uri = 'docs://guide}'),
      'error',
      'resources[0].uri',
      /\} without a matching \{/,
    ],
    [
      'double braces in a URI',
      (d) => (d.resources[1].uri = 'notes://{{topic}}'),
      'error',
      'resources[1].uri',
      /single braces/,
    ],
    [
      'an empty URI expression',
      (d) => (d.resources[0].uri = 'docs://{}'),
      'error',
      'resources[0].uri',
      /empty expression/,
    ],
    [
      'a bad URI variable name',
      (d) => (d.resources[1].uri = 'notes://{my-topic}'),
      'error',
      'resources[1].uri',
      /invalid variable "my-topic"/,
    ],
    [
      'a repeated URI variable',
      (d) => (d.resources[1].uri = 'notes://{topic}/{topic}'),
      'error',
      'resources[1].uri',
      /uses the variable "topic" twice/,
    ],
    [
      'an undeclared prompt argument',
      (d) => (d.prompts[0].messages[0].content = 'About {{args.subject}}'),
      'error',
      'prompts[0].messages[0].content',
      /\{\{args\.subject\}\} is not a declared argument/,
    ],
    [
      'an undeclared argument in a text item',
      (d) => (d.prompts[0].messages[0].content = { type: 'text', text: '{{args.nope}}' }),
      'error',
      'prompts[0].messages[0].content.text',
      /not a declared argument/,
    ],
    [
      'an undeclared tool argument',
      (d) => (d.tools[0].handler.content[0].text = '{{args.age}}'),
      'error',
      'tools[0].handler.content[0].text',
      /\{\{args\.age\}\} is not a property of this tool's inputSchema/,
    ],
    [
      'an undeclared argument in an http url',
      (d) => (d.tools[1].handler.url = 'https://x.test/{{args.lon}}'),
      'error',
      'tools[1].handler.url',
      /args\.lon/,
    ],
    [
      'an undeclared argument in an http body',
      (d) => (d.tools[1].handler.body = { q: ['{{args.q}}'] }),
      'error',
      'tools[1].handler.body.q[0]',
      /args\.q/,
    ],
    [
      'params that are not URI variables',
      (d) => (d.resources[1].source.path = 'data/{{params.name}}.md'),
      'error',
      'resources[1].source.path',
      /not a variable of the URI template \(topic\)/,
    ],
    [
      'params without a URI template',
      (d) => (d.resources[0].source = { type: 'text', text: '{{params.id}}' }),
      'error',
      'resources[0].source.text',
      /needs a URI template variable, such as docs:\/\/guide\/\{id\}/,
    ],
    [
      'params outside resources',
      (d) => (d.tools[0].handler.content[0].text = '{{params.topic}}'),
      'error',
      'tools[0].handler.content[0].text',
      /only available in resource sources/,
    ],
    [
      'args in a resource',
      (d) => (d.resources[2].source.text = '{{user.id}} {{args.x}}'),
      'error',
      'resources[2].source.text',
      /resources have no arguments/,
    ],
    [
      'user.id without per_user',
      (d) => (d.resources[0].source = { type: 'text', text: 'hi {{user.id}}' }),
      'error',
      'resources[0].source.text',
      /needs per_user: true/,
    ],
    [
      'an unknown template value',
      (d) => (d.tools[0].handler.content[0].text = '{{ user.name }}'),
      'error',
      'tools[0].handler.content[0].text',
      /\{\{user\.name\}\} is not a known value/,
    ],
    [
      'an unclosed template',
      (d) => (d.tools[1].handler = { type: 'error', message: 'oops {{args.lat' }),
      'error',
      'tools[1].handler.message',
      /\{\{ without a closing \}\}/,
    ],
    [
      'a malformed ${} in a header',
      (d) => (d.tools[1].handler.headers.Authorization = 'Bearer ${API TOKEN}'),
      'error',
      'tools[1].handler.headers.Authorization',
      /not a variable name/,
    ],
    ['an unclosed ${ in deploy', (d) => (d.deploy.env_vars.X = '${X'), 'error', 'deploy.env_vars.X', /unclosed \$\{/],
    [
      'min_instances above max_instances',
      (d) => (d.deploy.scaling = { min_instances: 4, max_instances: 2 }),
      'error',
      'deploy.scaling.min_instances',
      /min_instances \(4\) is greater than max_instances \(2\)/,
    ],
    [
      'per-environment scaling',
      (d) => (d.deploy.environments = { production: { scaling: { min_instances: 5, max_instances: 3 } } }),
      'error',
      'deploy.environments.production.scaling.min_instances',
      /greater than/,
    ],
    [
      'an expected tool that does not exist',
      (d) => d.tests.cases[0].expect.tools.push('great'),
      'error',
      'tests.cases[0].expect.tools[1]',
      /"great" is not a declared tool/,
    ],
    [
      'a forbidden tool that does not exist',
      (d) => (d.tests.cases[0].expect.not_tools = ['nope']),
      'error',
      'tests.cases[0].expect.not_tools[0]',
      /not a declared tool/,
    ],
    [
      'an expected resource that does not exist',
      (d) => (d.tests.cases[0].expect.resources = ['notes://a/b']),
      'error',
      'tests.cases[0].expect.resources[0]',
      /"notes:\/\/a\/b" is not a declared resource/,
    ],
    ['an unknown test model', (d) => (d.tests.model = 'gpt-17'), 'warning', 'tests.model', /unknown model "gpt-17"/],
    [
      'a literal auth token (on a server that needs no user)',
      (d) => (
        (d.auth = { type: 'bearer', token: 'hunter2hunter2' }),
        d.resources.pop(),
        (d.tools[0].handler.content[0].text = 'Hello')
      ),
      'warning',
      'auth.token',
      /a literal token/,
    ],
    [
      'a literal secret env var',
      (d) => (d.deploy.env_vars.API_KEY = 'abc123'),
      'warning',
      'deploy.env_vars.API_KEY',
      /literal secret/,
    ],
    [
      'a secret-looking value',
      (d) => (d.deploy.env_vars.UPSTREAM = 'sk-live-1234567890abcdef'),
      'warning',
      'deploy.env_vars.UPSTREAM',
      /literal secret/,
    ],
    [
      'a literal secret per environment',
      (d) => (d.deploy.environments = { staging: { env_vars: { DB_PASSWORD: 'pw' } } }),
      'warning',
      'deploy.environments.staging.env_vars.DB_PASSWORD',
      /literal secret/,
    ],
    [
      'a literal authorization header',
      (d) => (d.tools[1].handler.headers.Authorization = 'Bearer abcdefghijkl'),
      'warning',
      'tools[1].handler.headers.Authorization',
      /literal secret/,
    ],
    [
      'a literal secret in exec env',
      (d) => (d.tools[2].handler.env = { GITHUB_TOKEN: 'ghp_abc' }),
      'warning',
      'tools[2].handler.env.GITHUB_TOKEN',
      /literal secret/,
    ],
    [
      'per_user without {{user.id}}',
      (d) => (d.resources[2].source.text = 'same for all'),
      'warning',
      'resources[2].per_user',
      /never uses \{\{user\.id\}\}/,
    ],
    [
      'a server with nothing in it',
      (d) => (delete d.tools, delete d.resources, delete d.prompts, delete d.tests),
      'warning',
      '',
      /no tools, resources or prompts/,
    ],
    [
      'a completion module outside template custom',
      (d) => (d.prompts[0].arguments[0].complete = { module: 'tools.ts', export: 'topics' }),
      'error',
      'prompts[0].arguments[0].complete',
      /a completion module runs your own code and needs template: custom \(this is advanced\)/,
    ],
    [
      'a completion module that is not JavaScript or TypeScript',
      (d) => {
        d.template = 'custom';
        d.resources[1].complete = { topic: { module: 'topics.py', export: 'topics' } };
      },
      'error',
      'resources[1].complete.topic.module',
      /must be a \.js, \.mjs, \.cjs, \.ts, \.mts or \.cts file/,
    ],
    [
      'a completion module that does not exist',
      (d) => {
        d.template = 'custom';
        d.prompts[0].arguments[0].complete = { module: 'lib/complete.ts', export: 'topics' };
      },
      'error',
      'prompts[0].arguments[0].complete.module',
      /lib\/complete\.ts does not exist \(paths are relative to the definition's folder\)/,
    ],
    [
      'a completion module outside the definition folder',
      (d) => {
        d.template = 'custom';
        d.prompts[0].arguments[0].complete = { module: '../complete.ts', export: 'topics' };
      },
      'error',
      'prompts[0].arguments[0].complete.module',
      /must stay inside the definition folder/,
    ],
    [
      'a listed completion the enum refuses',
      (d) =>
        (d.prompts[0].arguments[0] = {
          name: 'topic',
          enum: ['release', 'onboarding'],
          complete: ['release', 'holidays'],
        }),
      'error',
      'prompts[0].arguments[0].complete[1]',
      /"holidays" is not in the argument's enum, so the prompt would refuse it/,
    ],
    [
      'a completion for a variable the URI template does not have',
      (d) => (d.resources[1].complete = { topics: ['release'] }),
      'error',
      'resources[1].complete.topics',
      /"topics" is not a variable of the URI template \(its variables: topic\)/,
    ],
    [
      'a completion for a resource without variables',
      (d) => (d.resources[0].complete = { page: ['1'] }),
      'error',
      'resources[0].complete.page',
      /docs:\/\/guide has no variables/,
    ],
  ])('reports %s', (_, change, severity, path, message) => {
    const def = base();
    change(def);
    const issues = check(def);
    expect(issues, JSON.stringify(issues, null, 1)).toHaveLength(1);
    expect(issues[0]).toMatchObject({ severity, path });
    expect(issues[0]!.message).toMatch(message);
  });

  it('skips existence checks without a stat function, and for templated paths', () => {
    const def = base();
    def.resources[0].source.path = 'nowhere/{{user.id}}.md';
    def.resources[0].per_user = true;
    def.include = ['missing'];
    expect(checkDefinition(def).filter((i) => i.severity === 'error')).toEqual([]);
    expect(check(def).map((i) => i.path)).toEqual(['include[0]']);
  });

  it('reads a malformed document without throwing', () => {
    const cases: unknown[] = [
      null,
      42,
      'text',
      [],
      { tools: 'x' },
      { tools: [null, 3, { name: 7, inputSchema: [] }] },
      { resources: [{ uri: 5 }] },
      { deploy: { scaling: 'big' } },
      { tests: { cases: [{ expect: { tools: 'greet' } }] } },
    ];
    for (const input of cases) expect(() => checkDefinition(input, { stat })).not.toThrow();
  });
});

describe('requiredEnvVars', () => {
  it('lists the ${VAR}s without a default that the server resolves when it starts, each once, with its first field', () => {
    const def = {
      auth: { type: 'bearer', token: '${MCP_AUTH_TOKEN}' },
      tools: [
        {
          name: 'a',
          handler: { type: 'http', url: '${API_URL:-https://x}/a', headers: { Authorization: 'Bearer ${API_KEY}' } },
        },
        { name: 'b', handler: { type: 'exec', command: ['x'], env: { KEY: '${API_KEY}', HOME: '$${HOME}' } } },
      ],
      resources: [{ uri: 'r://x', source: { type: 'url', url: '${DATA_URL}' } }],
      deploy: { env_vars: { ONLY_AT_DEPLOY: '${ONLY_AT_DEPLOY}' } },
    };
    expect(requiredEnvVars(def)).toEqual([
      { name: 'MCP_AUTH_TOKEN', field: 'auth.token' },
      { name: 'API_KEY', field: 'tools[0].handler.headers.Authorization' },
      { name: 'DATA_URL', field: 'resources[0].source.url' },
    ]);
    expect(requiredEnvVars({ name: 'x' })).toEqual([]);
  });
});

describe('checkRelativePath', () => {
  it.each([
    ['data/a.md', undefined],
    ['./data/a.md', undefined],
    ['a/../b.md', undefined],
    ['{{user.id}}/a.md', undefined],
    ['..', /inside/],
    ['../a', /inside/],
    ['a/../../b', /inside/],
    ['/abs', /absolute/],
    ['C:\\x', /separator/],
    ['D:/x', /absolute/],
  ])('%s', (path, problem) => {
    const result = checkRelativePath(path);
    if (problem === undefined) expect(result).toBeUndefined();
    else expect(result).toMatch(problem);
  });
});

describe('parseUriTemplate', () => {
  it.each([
    ['docs://guide', []],
    ['notes://{topic}', ['topic']],
    ['files://{+path}', ['path']],
    ['search://q{?query,limit}', ['query', 'limit']],
    ['x://{a}/{b*}/{c:3}', ['a', 'b', 'c']],
    ['x://{user.name}', ['user.name']],
  ])('%s has variables %j', (uri, variables) => {
    expect(parseUriTemplate(uri)).toEqual({ variables });
  });

  it.each(['x://{', 'x://}', 'x://{}', 'x://{a b}', 'x://{{a}}', 'x://{a}{a}', 'x://{a:0}'])(
    '%s is malformed',
    (uri) => {
      expect(parseUriTemplate(uri)).toHaveProperty('error');
    },
  );
});

describe('parseTemplateRefs', () => {
  it('finds references with or without spaces', () => {
    expect(
      parseTemplateRefs('{{args}} {{ args.a.b }} {{params.id}} {{user.id}} {{server.name}} {{server.version}}'),
    ).toEqual({
      refs: [
        { root: 'args' },
        { root: 'args', name: 'a' },
        { root: 'params', name: 'id' },
        { root: 'user', name: 'id' },
        { root: 'server', name: 'name' },
        { root: 'server', name: 'version' },
      ],
      errors: [],
    });
  });

  it('reports unknown values and unclosed braces', () => {
    expect(parseTemplateRefs('{{env.HOME}} and {{args.x').errors).toEqual([
      expect.stringMatching(/\{\{env\.HOME\}\} is not a known value/),
      'has a {{ without a closing }}',
    ]);
  });
});

describe('validateJsonSchema', () => {
  it.each([
    [{ type: 'object' }, 0],
    [{ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'array', prefixItems: [{ type: 'string' }] }, 0],
    [{ $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object' }, 0],
    [{ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { a: { type: 'nope' } } }, 1],
    [{ type: 'object', minProperties: -1 }, 1],
    [{ type: 'object', properties: { a: { type: 'string', minLength: 'x' } } }, 1],
  ])('%j has %i problems', (schema, count) => {
    expect(validateJsonSchema(schema)).toHaveLength(count);
  });
});

describe('looksLikeSecret', () => {
  it.each([
    ['API_KEY', 'abc', true],
    ['DB_PASSWORD', 'x', true],
    ['Authorization', 'Bearer xyz', true],
    ['UPSTREAM', 'ghp_1234', true],
    ['UPSTREAM', 'AKIAABCDEFGHIJKLMNOP', true],
    ['API_KEY', '${API_KEY}', false],
    ['Authorization', 'Bearer ${TOKEN}', false],
    ['API_KEY', '', false],
    ['LOG_LEVEL', 'debug', false],
    ['REGION', 'eu-west-1', false],
  ])('%s=%s → %s', (name, value, expected) => {
    expect(looksLikeSecret(name, value)).toBe(expected);
  });
});
