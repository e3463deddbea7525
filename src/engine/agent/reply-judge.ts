/**
 * The judge of a test's reply (`expect.reply`, `judge_model`): the offline check of key words, or a
 * model of the engine asked through the same agents that run tests, with no server to call. Its
 * verdicts go into the result's `evaluation.reply`.
 */
import type { TestEvaluation, TestRequest } from '../../api/contract.js';
import { OFFLINE_JUDGE } from '../../api/expectations.js';
import { judgeOffline, judgePrompt, readVerdicts } from '../../api/reply-judge.js';
import { ServiceError } from '../service-error.js';
import type { Agent, AgentLimits, AgentSession } from './agent-types.js';

type ReplyEvaluation = NonNullable<TestEvaluation['reply']>;

/** A judge ready to score a reply; undefined when the request has no criteria. */
export type ReplyJudge = (input: { message: string; reply: string; signal: AbortSignal }) => Promise<ReplyEvaluation>;

/**
 * The judge a request asks for. A model judge's agent is made here, before the run starts, so that
 * an unknown model or a missing key is answered at once, naming `judge_model`.
 */
export async function prepareJudge(
  request: TestRequest,
  agentOf: (model: string) => Promise<Agent>,
  limits: AgentLimits,
): Promise<ReplyJudge | undefined> {
  const criteria = request.expect?.reply ?? [];
  if (criteria.length === 0) return undefined;
  const judge = request.judge_model ?? OFFLINE_JUDGE;
  if (judge === OFFLINE_JUDGE) return async ({ reply }) => ({ judge, criteria: judgeOffline(reply, criteria) });
  let agent: Agent;
  try {
    agent = await agentOf(judge);
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    throw new ServiceError(error.code, `the judge: ${error.message}`, [
      { path: 'judge_model', message: error.details?.[0]?.message ?? error.message },
    ]);
  }
  return async ({ message, reply, signal }) => {
    try {
      const answer = await agent({
        message: judgePrompt({ message, reply, criteria }),
        session: NO_SERVER,
        limits: { ...limits, maxToolCalls: 0, maxTurns: 1 },
        signal,
      });
      return { judge, criteria: readVerdicts(typeof answer === 'string' ? answer : answer.reply, criteria) };
    } catch (error) {
      // the run itself happened: its result stands, with why the reply has no verdict
      return { judge, criteria: [], error: error instanceof Error ? error.message : String(error) };
    }
  };
}

/** What a judge sees of a server: nothing to call or read. */
const NO_SERVER: AgentSession = {
  catalog: { tools: [], resources: [], templates: [] },
  callTool: () => Promise.resolve({ ok: false, text: 'the judge has no tools' }),
  readResource: () => Promise.resolve({ ok: false, text: 'the judge has no resources' }),
  recordRejectedCall: () => undefined,
  noteUnmet: () => undefined,
};
