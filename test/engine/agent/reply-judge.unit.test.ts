/** The judge of a test's reply in the engine, with stand-in agents: no model, no network. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_AGENT_LIMITS, type Agent } from '../../../src/engine/agent/agent-types.js';
import { prepareJudge } from '../../../src/engine/agent/reply-judge.js';
import { redactArguments } from '../../../src/engine/agent/session.js';
import { ServiceError } from '../../../src/engine/service-error.js';

const request = (judge?: string) => ({
  mcp_id: 'mcp_a',
  message: 'Weather in Berlin?',
  ai_model: 'mcpctl-local',
  expect: { reply: ['mentions Berlin', 'gives a temperature'] },
  ...(judge === undefined ? {} : { judge_model: judge }),
});
const signal = new AbortController().signal;
const noAgent = () => Promise.reject(new Error('no model should be asked'));

describe('prepareJudge', () => {
  it('needs no judge without criteria, and judges offline by default', async () => {
    expect(await prepareJudge({ ...request(), expect: {} }, noAgent, DEFAULT_AGENT_LIMITS)).toBeUndefined();
    const judge = await prepareJudge(request(), noAgent, DEFAULT_AGENT_LIMITS);
    const verdict = await judge!({ message: 'm', reply: 'Berlin: 21 °C, temperature rising', signal });
    expect(verdict).toMatchObject({ judge: 'mcpctl-local', criteria: [{ passed: true }, { passed: true }] });
  });

  it('asks a model judge with no tools, one turn, and reads its verdicts', async () => {
    let seen: Parameters<Agent>[0] | undefined;
    const agent: Agent = (run) => {
      seen = run;
      return Promise.resolve({
        reply: '{"verdicts":[{"criterion":1,"passed":true},{"criterion":2,"passed":false,"reason":"no number"}]}',
        usage: { input_tokens: 10, output_tokens: 5 },
      });
    };
    const judge = await prepareJudge(request('judge-llm'), () => Promise.resolve(agent), DEFAULT_AGENT_LIMITS);
    const verdict = await judge!({ message: 'Weather in Berlin?', reply: 'Sunny in Berlin', signal });
    expect(verdict).toEqual({
      judge: 'judge-llm',
      criteria: [
        { criterion: 'mentions Berlin', passed: true },
        { criterion: 'gives a temperature', passed: false, reason: 'no number' },
      ],
    });
    expect(seen?.session.catalog.tools).toEqual([]);
    expect(seen?.limits).toMatchObject({ maxTurns: 1, maxToolCalls: 0 });
    expect(seen?.message).toContain('Sunny in Berlin');
  });

  it('keeps the run when the judge fails, saying why the reply has no verdict', async () => {
    const agent: Agent = () => Promise.reject(new Error('the provider is down'));
    const judge = await prepareJudge(request('judge-llm'), () => Promise.resolve(agent), DEFAULT_AGENT_LIMITS);
    expect(await judge!({ message: 'm', reply: 'r', signal })).toEqual({
      judge: 'judge-llm',
      criteria: [],
      error: 'the provider is down',
    });
  });

  it('refuses an unusable judge model before the run, at judge_model', async () => {
    const refuse = () =>
      Promise.reject(
        new ServiceError('model_not_configured', 'the model x needs KEY', [{ path: 'ai_model', message: 'needs KEY' }]),
      );
    await expect(prepareJudge(request('x'), refuse, DEFAULT_AGENT_LIMITS)).rejects.toMatchObject({
      code: 'model_not_configured',
      message: 'the judge: the model x needs KEY',
      details: [{ path: 'judge_model', message: 'needs KEY' }],
    });
  });
});

describe('redactArguments', () => {
  it('hides values under keys that name a secret, at any depth, and keeps the rest', () => {
    expect(
      redactArguments({ city: 'Berlin', api_key: 'sk-1', auth: { password: 'p', user: 'u' }, list: [{ token: 't' }] }),
    ).toEqual({
      city: 'Berlin',
      api_key: '[redacted]',
      auth: { password: '[redacted]', user: 'u' },
      list: [{ token: '[redacted]' }],
    });
  });
});
