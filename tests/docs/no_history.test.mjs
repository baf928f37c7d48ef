// tests/docs/no_history.test.mjs: the repository's documentation and comments say what holds,
// not how it was reached (CONVENTIONS.md, "Docs say what holds"). Fails on history narration
// in Markdown files and in the comments of source files: quoted before/after timings
// ("12.0 -> 11.5 ms"), "interleaved rounds", sessions, earlier hosts, diaries of what was tried,
// and the issue that asked for something ("issue 12", "#12"). Measurements over time belong in
// bench/compare/RESULTS.md, the one file exempt; it and docs/testing.md (the suite's timings)
// are also the only Markdown that may name the commit a measurement ran at ("a clean-clone run of
// d2870ae").
//
//   node --test tests/docs/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const THIS_FILE = 'tests/docs/no_history.test.mjs';
// Dated measurements live here, and only here.
const EXEMPT = new Set(['bench/compare/RESULTS.md', THIS_FILE]);

// Each pattern is matched against comment (or Markdown) text whose line breaks are joined, so a
// phrase split over two comment lines is still found.
const PATTERNS = [
  { name: 'a before -> after timing', re: /\d[\d.,]*\s*(?:ms|µs|us|s|%)?\s*(?:->|→)\s*\d[\d.,]*\s*(?:ms|µs|us|GFLOP\/s|%)(?![\w/])/ },
  { name: 'interleaved rounds or runs', re: /\binterleaved (?:A\/B )?(?:rounds|runs)\b/i },
  { name: 'a session', re: /\b(?:this|previous|last|earlier|next|that) session\b|\bsessions? (?:ago|before)\b|\bsession before\b/i },
  { name: 'an earlier host', re: /\b(?:previous|earlier|old|new|current) host\b/i },
  { name: 'runs of the day', re: /\b(?:earlier|later) today\b|\bthis morning\b|\bruns? of the day\b/i },
  { name: 'a diary of attempts', re: /\btried and not kept\b/i },
  // "issue 12", "issues 3 and 4", "issue #12", "#12" (not "#440154", a colour, nor "V8 issues 128-bit loads")
  { name: 'an issue number', re: /\b[Ii]ssues? #?\d+(?![\w-])|(?<![\w&#])#\d{1,4}(?![\w-])/ },
];

// Markdown that may say which commit a measurement ran at: the dated results and the suite's timings.
const COMMITS_ALLOWED = new Set(['bench/compare/RESULTS.md', 'docs/testing.md']);
const COMMIT_PATTERNS = [
  { name: 'a commit hash', re: /\b(?:commit|run of|at|of)\s+[0-9a-f]{7,40}\b/i },
  { name: 'a bare commit hash', re: /(?<![\w/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w/.-])/ },
];

const SOURCE_EXT = /\.(?:c|cc|cpp|h|hpp|ts|mts|js|mjs|cjs|sh|py|cmake|css|html)$|(?:^|\/)CMakeLists\.txt$/;
const HASH_COMMENTS = /\.(?:sh|py|cmake)$|(?:^|\/)CMakeLists\.txt$/;

// The repository's files: git's list, or (outside a git checkout) a walk that skips build output
// and dependencies.
const SKIP_DIRS = /^(?:\.git|node_modules|build[^/]*|dist|wasm|artifacts|__pycache__|results)$/;
function trackedFiles() {
  try {
    const out = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26,
                                                          stdio: ['ignore', 'pipe', 'ignore'] });
    return out.split('\0').filter(Boolean);
  } catch {
    const files = [];
    const walk = (dir) => {
      for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const rel = dir ? `${dir}/${e.name}` : e.name;
        if (e.isDirectory()) { if (!SKIP_DIRS.test(e.name)) walk(rel); } else files.push(rel);
      }
    };
    walk('');
    return files;
  }
}

// The comment text of a source file as [line number, text] pairs: // and # comments to the end
// of the line, /* ... */ within a line, and the lines of /* ... */ blocks. Code, strings and URLs
// are not checked.
function commentLines(file, text) {
  const hash = HASH_COMMENTS.test(file);
  const lines = text.split('\n');
  const out = [];
  let inBlock = false;
  lines.forEach((line, i) => {
    if (inBlock) {
      out.push([i + 1, line]);
      if (line.includes('*/')) inBlock = false;
      return;
    }
    if (!hash) {
      const open = line.indexOf('/*');
      if (open >= 0 && !line.includes('*/', open + 2)) {
        inBlock = true;
        out.push([i + 1, line.slice(open)]);
        return;
      }
    }
    // /* ... */ within the line (a CSS section header, a note inside code), then a // comment
    const inline = hash ? [] : [...line.matchAll(/\/\*(.*?)\*\//g)].map((m) => m[1]);
    const rest = hash ? line : line.replace(/\/\*.*?\*\//g, ' ');
    const marker = hash ? /(?:^|\s)#(?!!)(.*)$/ : /(?:^|[^:'"`])\/\/(.*)$/;
    const m = marker.exec(rest);
    if (m) inline.push(m[1]);
    if (inline.length > 0) out.push([i + 1, inline.join(' ')]);
  });
  return out;
}

function checkedText(file) {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  if (file.endsWith('.md')) return text.split('\n').map((t, i) => [i + 1, t]);
  if (SOURCE_EXT.test(file)) return commentLines(file, text);
  return [];
}

// Every match of every pattern in one file, with the line it starts on.
function findings(file) {
  const pairs = checkedText(file);
  const starts = [];
  let joined = '';
  for (const [line, t] of pairs) {
    starts.push([joined.length, line]);
    joined += t.replace(/^\s*(?:\*|\/\/|#)?\s*/, '') + ' ';
  }
  const found = [];
  const patterns = file.endsWith('.md') && !COMMITS_ALLOWED.has(file) ? [...PATTERNS, ...COMMIT_PATTERNS] : PATTERNS;
  for (const { name, re } of patterns) {
    const global = new RegExp(re.source, re.flags.includes('g') ? re.flags : re.flags + 'g');
    for (const m of joined.matchAll(global)) {
      let line = 0;
      for (const [offset, l] of starts) if (offset <= m.index) line = l;
      found.push(`${file}:${line}: ${name}: "${m[0]}"`);
    }
  }
  return found;
}

test('the patterns catch what they are meant to catch', () => {
  const hit = (s) => PATTERNS.some(({ re }) => re.test(s));
  for (const s of ['12.0 -> 11.5 ms', '0.275 → 0.258 ms', '(5 interleaved rounds)', 'in this session',
                   'the previous host', 'tried and not kept', '156-174 -> 176 GFLOP/s', 'two sessions ago',
                   'the order of the table (issue 23)', 'Issue 6: no allocation', 'issues 3 and 4', 'see #12',
                   'a fix (#7)']) {
    assert.ok(hit(s), s);
  }
  for (const s of ['(B, T, C) -> (B, H, T, D)', 'x -> y', 'rotate-half, not interleaved', 'a 16.03 ms run',
                   'tokens -> embeddings', 'MR = 4: V8 spills at 6', 'its darkest colour is #440154',
                   'how fast V8 issues 128-bit loads', 'the issue rate of FMAs', 'step #include']) {
    assert.ok(!hit(s), s);
  }
  const commit = (s) => COMMIT_PATTERNS.some(({ re }) => re.test(s));
  for (const s of ['a clean-clone run of d2870ae', 'measured at commit 727bf23', '(the Xeon, 482599f)']) {
    assert.ok(commit(s), s);
  }
  for (const s of ['fp16 and bf16', 'the 2-core machine', 'sha256 of the file', 'a 1e-5 tolerance']) {
    assert.ok(!commit(s), s);
  }
});

test('no history narration, issue numbers or pinned commits in documentation or comments', () => {
  const problems = trackedFiles()
    .filter((f) => !EXEMPT.has(f) && fs.existsSync(path.join(ROOT, f)))
    .flatMap(findings);
  assert.deepEqual(problems, [], `history narration found (state what holds and why; measurements over ` +
    `time, with the commit they ran at, go to bench/compare/RESULTS.md):\n${problems.join('\n')}`);
});
