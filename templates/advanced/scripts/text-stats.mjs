// Text statistics for the __TOOL_NAME__ tool. mcpctl runs it without a shell: the tool's
// arguments arrive as JSON on stdin, and what it prints on stdout is the result (JSON here,
// as the tool's handler says `result: json`). A non-zero exit code makes the call fail,
// with stderr as the reason.
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { text = '', top = 5 } = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');

if (typeof text !== 'string') {
  process.stderr.write('text must be a string\n');
  process.exit(1);
}

const words = text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
const counts = new Map();
for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
const topWords = [...counts]
  .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
  .slice(0, top)
  .map(([word, count]) => ({ word, count }));

process.stdout.write(
  JSON.stringify({
    words: words.length,
    lines: text === '' ? 0 : text.split(/\r?\n/).length,
    characters: [...text].length,
    top_words: topWords,
  }),
);
