/** The `{{...}}` grammar and its compiled templates live with the definition; the runtime renders them. */
export * from '../definition/template.js';
