/** A JUnit XML report of test cases, the format CI systems show as test results. Pure. */

export interface JUnitCase {
  name: string;
  /** seconds */
  time: number;
  failures: string[];
  /** shown as the case's output */
  output?: string;
}

export interface JUnitSuite {
  name: string;
  timestamp: string;
  cases: JUnitCase[];
}

// XML 1.0 allows tab, newline, carriage return and characters from U+0020 up (minus surrogates and FFFE/FFFF).
// eslint-disable-next-line no-control-regex
const INVALID_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

export function escapeXml(text: string): string {
  return text
    .replace(INVALID_XML, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

function seconds(value: number): string {
  return Number.isFinite(value) ? value.toFixed(3) : '0.000';
}

/** One `<testsuite>` with one `<testcase>` per case; a failed case carries one `<failure>`. */
export function toJUnitXml(suite: JUnitSuite): string {
  const failures = suite.cases.filter((c) => c.failures.length > 0).length;
  const total = suite.cases.reduce((sum, c) => sum + c.time, 0);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="mcpctl test" tests="${suite.cases.length}" failures="${failures}" errors="0" time="${seconds(total)}">`,
    `  <testsuite name="${escapeXml(suite.name)}" tests="${suite.cases.length}" failures="${failures}" errors="0" skipped="0" time="${seconds(total)}" timestamp="${escapeXml(suite.timestamp)}">`,
  ];
  for (const c of suite.cases) {
    const open = `    <testcase name="${escapeXml(c.name)}" classname="${escapeXml(suite.name)}" time="${seconds(c.time)}"`;
    const body: string[] = [];
    if (c.failures.length > 0) {
      body.push(
        `      <failure message="${escapeXml(c.failures[0] ?? 'failed')}" type="expectation">${escapeXml(c.failures.join('\n'))}</failure>`,
      );
    }
    if (c.output !== undefined && c.output !== '') body.push(`      <system-out>${escapeXml(c.output)}</system-out>`);
    if (body.length === 0) lines.push(`${open}/>`);
    else lines.push(`${open}>`, ...body, '    </testcase>');
  }
  lines.push('  </testsuite>', '</testsuites>', '');
  return lines.join('\n');
}
