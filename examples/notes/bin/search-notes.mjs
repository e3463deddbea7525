// Searches the caller's notes: data/<user>/*.md. The arguments arrive as JSON on stdin; the
// caller's user id in MCPCTL_USER_ID. Prints JSON: { user, matches: [{ day, lines }] }.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const { query, limit = 10 } = JSON.parse(input);
const user = process.env.MCPCTL_USER_ID;
if (!user) {
  process.stderr.write('no user id: send the X-MCP-User-Id header\n');
  process.exit(2);
}
if (!/^[\w.-]+$/.test(user)) {
  process.stderr.write('the user id has characters a folder name cannot have\n');
  process.exit(2);
}

const words = query.toLowerCase().split(/\s+/).filter(Boolean);
const folder = join('data', user);
const files = await readdir(folder).catch(() => []);
const matches = [];
for (const file of files
  .filter((name) => name.endsWith('.md'))
  .sort()
  .reverse()) {
  const text = await readFile(join(folder, file), 'utf8');
  if (!words.every((word) => text.toLowerCase().includes(word))) continue;
  const lines = text.split('\n').filter((line) => words.some((word) => line.toLowerCase().includes(word)));
  matches.push({ day: file.replace(/\.md$/, ''), lines });
  if (matches.length >= limit) break;
}
process.stdout.write(JSON.stringify({ user, query, matches }));
