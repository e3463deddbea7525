/** The CLI's errors live in the lowest layer now; this name stays for code that still imports it here. */
export * from '../shared/errors.js';
