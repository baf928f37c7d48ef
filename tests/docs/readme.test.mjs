// tests/docs/readme.test.mjs: README.md is the user's guide, not a log. It pins no commit hash, no
// CPU model and no time of the test command (those belong in bench/compare/RESULTS.md and
// docs/testing.md), and the cells of its experiments table stay short enough to read (what each
// run measured lives in docs/experiments.md).
//
//   node --test tests/docs/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const lines = README.split('\n');

// The README's text outside code blocks and link targets, line by line.
function proseLines() {
  const out = [];
  let code = false;
  lines.forEach((line, i) => {
    if (line.startsWith('```')) { code = !code; return; }
    if (!code) out.push([i + 1, line.replace(/\]\([^)]*\)/g, ']()')]);
  });
  return out;
}

const PINNED = [
  { name: 'a commit hash', re: /\b(?:commit|run of|at|of)\s+[0-9a-f]{7,40}\b/i },
  { name: 'a bare commit hash', re: /(?<![\w/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w/.-])/ },
  { name: 'a CPU model', re: /\b(?:Xeon|EPYC|Ryzen|Core i[3579]|Zen ?\d|Cooperlake|Sapphire Rapids|Ice Lake|Skylake|Cascade Lake)\b|\bfamily \d+ model \d+\b/i },
  { name: 'a time of the test command', re: /test\.sh[^|]*?\b\d+\s*min(?:utes?)?\s*\d*\s*s?\b|\b\d+ min \d+ s\b/i },
];

test('README pins no commit hash, CPU model or test-command time', () => {
  const problems = [];
  for (const [n, line] of proseLines()) {
    for (const p of PINNED) if (p.re.test(line)) problems.push(`README.md:${n}: ${p.name}: ${line.trim()}`);
  }
  assert.deepEqual(problems, [], `README.md is the user's guide; measurements and their conditions go to ` +
    `bench/compare/RESULTS.md, test times to docs/testing.md:\n${problems.join('\n')}`);
});

test("the README's experiments table has short cells", () => {
  const start = lines.findIndex((l) => /^\| experiment \|/.test(l));
  assert.ok(start >= 0, 'README.md has an experiments table (| experiment | ...)');
  const rows = [];
  for (let i = start + 2; i < lines.length && lines[i].startsWith('|'); i++) rows.push([i + 1, lines[i]]);
  assert.ok(rows.length >= 15, `the experiments table lists every experiment (found ${rows.length} rows)`);
  const long = [];
  for (const [n, row] of rows) {
    const cells = row.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
    for (const c of cells) if (c.length > 140) long.push(`README.md:${n}: a ${c.length}-character cell: ${c.slice(0, 60)}...`);
  }
  assert.deepEqual(long, [], `keep the README's cells short; details go to docs/experiments.md:\n${long.join('\n')}`);
});
