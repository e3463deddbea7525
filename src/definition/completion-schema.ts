/**
 * The schema of what completion/complete offers for a prompt argument or a URI-template variable:
 * listed values, or a function of the definition's own module. Built on first use. Pure: no IO.
 */
import { z } from 'zod';
import { once, timeoutMs } from './schema-fields.js';

/** What completion/complete offers for a prompt argument or a URI-template variable: listed values, or a module's function. */
export const completionFunction = once(() =>
  z
    .strictObject({
      module: z.string().min(1).describe('JavaScript or TypeScript file relative to the definition (template custom)'),
      export: z
        .string()
        .regex(/^[A-Za-z_$][\w$]*$/, 'must be a JavaScript identifier')
        .describe('exported function (value, context) returning the values, or a promise of them'),
      timeout_ms: timeoutMs.default(5_000),
    })
    .describe('a function of your own module answers completion/complete'),
);
export const completion = once(() =>
  z.union([
    z.array(z.string()).max(1000).describe('the values a client may complete to, matched by prefix'),
    completionFunction(),
  ]),
);
