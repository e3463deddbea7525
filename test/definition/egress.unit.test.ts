import { describe, expect, it } from 'vitest';
import { BuildRequest } from '../../src/api/build-schema.js';
import { parseDefinition } from '../../src/definition/load.js';
import { UserError } from '../../src/shared/errors.js';

const BASE = `name: demo
template: basic
tools:
  - name: profile
    description: Reads the profile of a user from the users API by id
    inputSchema: { type: object, properties: { id: { type: string, description: the user id } }, required: [id] }
    handler: { type: http, url: "https://api.example.com/v1/users/{{args.id}}" }
`;

async function parse(egress: string, base = BASE) {
  return parseDefinition(`${base}egress: ${egress}\n`, { file: '/defs/server.yaml', shown: 'server.yaml' });
}

async function problems(egress: string): Promise<string[]> {
  try {
    await parse(egress);
    return [];
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    return (error.problems ?? []).map((problem) => `${problem.path}: ${problem.message}`);
  }
}

describe('the egress section', () => {
  it('takes allow_private and a list of hosts, which a build request carries', async () => {
    const loaded = await parse(
      '{ allow_private: false, allow: [api.internal, "db.internal:5432", "10.0.0.5:8080", "[fd00::1]:443", "[fd00::2]"] }',
    );
    expect(loaded.definition.egress).toEqual({
      allow_private: false,
      allow: ['api.internal', 'db.internal:5432', '10.0.0.5:8080', '[fd00::1]:443', '[fd00::2]'],
    });
    expect(loaded.warnings).toEqual([]);
    // the build request carries it to the runtime (test/engine/egress.integration.test.ts deploys one)
    expect(BuildRequest.parse({ name: 'demo', template: 'basic', egress: loaded.definition.egress }).egress).toEqual(
      loaded.definition.egress,
    );
  });

  it.each([
    ['{ allow_private: yes }', 'egress.allow_private'],
    ['{ allow: ["http://api.internal"] }', 'egress.allow[0]'],
    ['{ allow: ["api.internal/x"] }', 'egress.allow[0]'],
    ['{ allow: ["api.internal:99999"] }', 'egress.allow[0]'],
    ['{ allow: ["::1"] }', 'egress.allow[0]'],
    ['{ allow_all: true }', 'egress'],
  ])('refuses %s', async (egress, path) => {
    expect((await problems(egress)).some((problem) => problem.startsWith(path))).toBe(true);
  });

  it('warns about entries that are never reached, need no listing, or are already allowed, and about an egress with nothing to apply to', async () => {
    const loaded = await parse(
      '{ allow_private: true, allow: [metadata.google.internal, "169.254.169.254", "[fe80::1]:80", "8.8.8.8", api.internal] }',
    );
    expect(loaded.warnings.map((warning) => `${warning.path}: ${warning.message}`)).toEqual([
      'egress.allow[0]: metadata.google.internal is never reached: link-local, metadata, multicast and reserved addresses are refused whatever egress allows',
      'egress.allow[1]: 169.254.169.254 is never reached: link-local, metadata, multicast and reserved addresses are refused whatever egress allows',
      'egress.allow[2]: [fe80::1]:80 is never reached: link-local, metadata, multicast and reserved addresses are refused whatever egress allows',
      'egress.allow[3]: 8.8.8.8 is a public address, reachable without being listed: allow is for private and loopback addresses',
      'egress.allow[4]: allow_private: true already allows api.internal',
    ]);
    const idle = await parse(
      '{ allow_private: true }',
      'name: demo\ntemplate: basic\ntools: []\nresources: [{ uri: "a://b", name: b, description: a text resource, source: { type: text, text: hi } }]\n',
    );
    expect(idle.warnings.map((warning) => `${warning.path}: ${warning.message}`)).toContain(
      'egress: no http handler or url resource calls out, so egress has nothing to apply to',
    );
  });
});
