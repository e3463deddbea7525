// The tools of examples/everything that run as tasks (the io.modelcontextprotocol/tasks
// extension): the client gets a task at once and follows it with tasks/get, answers its
// questions with tasks/update and may stop it with tasks/cancel.

const pause = (ms, signal) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

export async function slowCompute({ seconds = 1, label = 'job' }, context) {
  await pause(seconds * 1000, context.signal);
  return `Computed ${label} in ${seconds} s`;
}

export async function failingJob(_args, context) {
  await pause(1000, context.signal);
  // a thrown error is the tool's answer: a result with isError, so the task completes
  throw new Error('the job failed, as it always does');
}

export async function protocolErrorJob(_args, context) {
  await pause(100, context.signal);
  // an error with a JSON-RPC code is a protocol error: the task fails
  throw Object.assign(new Error('the job broke down (internal error)'), { code: -32603 });
}

const confirmSchema = {
  type: 'object',
  properties: { confirm: { type: 'boolean', description: 'Go ahead?' } },
  required: ['confirm'],
};

export async function confirmDelete({ filename }, context) {
  const answer = await context.elicit(`Delete ${filename}?`, confirmSchema);
  const yes = answer.action === 'accept' && answer.content?.confirm === true;
  return yes ? `Deleted ${filename}` : `Kept ${filename}`;
}

export async function multiInput(_args, context) {
  const nameSchema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
  const [first, second] = await Promise.all([
    context.elicit('What is the first name?', nameSchema),
    context.elicit('What is the second name?', nameSchema),
  ]);
  return `Got ${first.content?.name ?? '(none)'} and ${second.content?.name ?? '(none)'}`;
}

// Asks for a name first (an ordinary call, answered by the client), then goes on as a task.
export async function toolWithTask(_args, context) {
  const answer = await context.elicit('What is your name?', {
    type: 'object',
    properties: { name: { type: 'string', description: 'Your name' } },
    required: ['name'],
  });
  const name = answer.action === 'accept' ? answer.content?.name : undefined;
  await context.startTask();
  await pause(500, context.signal);
  return `Hello, ${name ?? 'stranger'}: your task is done`;
}
