// The tools of examples/everything that need code: they talk to the client while they run,
// through the `context` every module function receives.

const pause = (ms, signal) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

export async function withLogging(_args, context) {
  await context.log('info', 'Tool execution started');
  await pause(50, context.signal);
  await context.log('info', 'Tool processing data');
  await pause(50, context.signal);
  await context.log('info', 'Tool execution completed');
  return 'Tool with logging executed successfully';
}

export async function withProgress(_args, context) {
  for (const done of [0, 50, 100]) {
    await context.progress(done, 100, `${done}% done`);
    if (done < 100) await pause(50, context.signal);
  }
  return 'Tool with progress executed successfully';
}

export async function sampling({ prompt }, context) {
  const answer = await context.sample({
    messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
    maxTokens: 100,
  });
  const text = answer.content.type === 'text' ? answer.content.text : JSON.stringify(answer.content);
  return `LLM response: ${text}`;
}

export async function elicitation({ message }, context) {
  const answer = await context.elicit(message, {
    type: 'object',
    properties: {
      username: { type: 'string', description: "User's response" },
      email: { type: 'string', description: "User's email address" },
    },
    required: ['username', 'email'],
  });
  return `User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
}

export async function elicitationDefaults(_args, context) {
  const answer = await context.elicit('Please review and update the form fields with defaults', {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'User name', default: 'John Doe' },
      age: { type: 'integer', description: 'User age', default: 30 },
      score: { type: 'number', description: 'User score', default: 95.5 },
      status: {
        type: 'string',
        description: 'User status',
        enum: ['active', 'inactive', 'pending'],
        default: 'active',
      },
      verified: { type: 'boolean', description: 'Verification status', default: true },
    },
    required: [],
  });
  return `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
}

export async function elicitationEnums(_args, context) {
  const answer = await context.elicit('Please choose', {
    type: 'object',
    properties: {
      untitledSingle: { type: 'string', description: 'Pick one', enum: ['option1', 'option2', 'option3'] },
      titledSingle: {
        type: 'string',
        description: 'Pick one',
        oneOf: [
          { const: 'value1', title: 'First Option' },
          { const: 'value2', title: 'Second Option' },
          { const: 'value3', title: 'Third Option' },
        ],
      },
      legacyEnum: {
        type: 'string',
        description: 'Pick one',
        enum: ['opt1', 'opt2', 'opt3'],
        enumNames: ['Option One', 'Option Two', 'Option Three'],
      },
      untitledMulti: {
        type: 'array',
        description: 'Pick some',
        items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
      },
      titledMulti: {
        type: 'array',
        description: 'Pick some',
        items: {
          anyOf: [
            { const: 'value1', title: 'First Choice' },
            { const: 'value2', title: 'Second Choice' },
            { const: 'value3', title: 'Third Choice' },
          ],
        },
      },
    },
    required: [],
  });
  return `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
}

export async function reconnection(_args, context) {
  // the client reconnects with Last-Event-ID and receives the result from the event store
  context.closeStream();
  await pause(200, context.signal);
  return 'Reconnection test completed';
}

export async function touchWatched(_args, context) {
  await context.resourceUpdated('test://watched-resource');
  return 'notified';
}

const CITIES = {
  France: ['Paris', 'Lyon', 'Marseille', 'Lille', 'Nantes'],
  Germany: ['Berlin', 'Hamburg', 'Munich', 'Leipzig'],
  Japan: ['Tokyo', 'Kyoto', 'Osaka', 'Nagoya'],
};

// completion/complete for the city of plan_trip: the cities of the country already chosen
// (context.arguments), those starting with what was typed
export function cities(typed, context) {
  const country = context.arguments.country;
  const known = Object.hasOwn(CITIES, country) ? CITIES[country] : Object.values(CITIES).flat();
  return known.filter((city) => city.toLowerCase().startsWith(typed.toLowerCase()));
}
