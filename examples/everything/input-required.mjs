// The tools of examples/everything that ask the client for input: a 2026-07-28 client gets the
// questions as an input-required result and calls again with its answers (the function runs again,
// and each question it asked before returns its answer); a 2025 client on a session is asked while
// the function runs. The `key` option names a question in the client's inputResponses.

const nameForm = {
  type: 'object',
  properties: { name: { type: 'string' } },
  required: ['name'],
};

const textOf = (answer) => (answer.content?.type === 'text' ? answer.content.text : JSON.stringify(answer.content));

export async function askName(_args, context) {
  const answer = await context.elicit('What is your name?', nameForm, { key: 'user_name' });
  if (answer.action !== 'accept') return `No name given (${answer.action}).`;
  return `Hello, ${answer.content.name}!`;
}

export async function askCapital(_args, context) {
  const answer = await context.sample(
    {
      messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
      maxTokens: 100,
    },
    { key: 'capital_question' },
  );
  return `The model says: ${textOf(answer)}`;
}

export async function listRoots(_args, context) {
  const { roots } = await context.roots({ key: 'client_roots' });
  return `The client shares ${roots.length} root(s): ${roots.map((root) => root.uri).join(', ')}`;
}

export async function confirmWithState(_args, context) {
  const answer = await context.elicit(
    'Please confirm',
    { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
    { key: 'confirm' },
  );
  // the answer came back with the request state this server signed: it checked the state first
  return `state-ok: confirmed=${answer.content?.ok === true}`;
}

export async function askTogether(_args, context) {
  const [name, greeting, { roots }] = await Promise.all([
    context.elicit('What is your name?', nameForm, { key: 'user_name' }),
    context.sample(
      { messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 },
      { key: 'greeting' },
    ),
    context.roots({ key: 'client_roots' }),
  ]);
  return `${textOf(greeting)} ${name.content?.name ?? 'stranger'} (${roots.length} root(s))`;
}

export async function twoSteps(_args, context) {
  const first = await context.elicit('Step 1: What is your name?', nameForm, { key: 'step1' });
  const second = await context.elicit(
    'Step 2: What is your favorite color?',
    { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
    { key: 'step2' },
  );
  return `${first.content?.name} likes ${second.content?.color}.`;
}

// asks only for what the client said it supports
export async function askWhatIsSupported(_args, context) {
  const capabilities = context.clientCapabilities();
  const asked = [];
  if (capabilities.elicitation !== undefined) asked.push(context.elicit('What is your name?', nameForm));
  if (capabilities.sampling !== undefined) {
    asked.push(
      context.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Say hello' } }], maxTokens: 20 }),
    );
  }
  if (capabilities.roots !== undefined) asked.push(context.roots());
  const answers = await Promise.all(asked);
  return `Asked ${answers.length} question(s) the client can answer.`;
}

// needs sampling whatever the client declared: a client without it gets the -32021 error
export async function needsSampling(_args, context) {
  const answer = await context.sample({
    messages: [{ role: 'user', content: { type: 'text', text: 'Say hello' } }],
    maxTokens: 20,
  });
  return textOf(answer);
}

export async function logQuietly(_args, context) {
  await context.log('info', 'a message the client sees only when it asked for a log level');
  return 'Logged.';
}
