// Functions of the repository's source files, cut out as they are, for the chapters that show the
// code the engine runs (§8). The Vite plugin `sourceExcerpts` serves them to the page as the module
// 'virtual:source-excerpts', read from the files at build time, so the page never holds a copy
// that could drift; tests/browser/chapter_8.test.mjs compares what the page shows with the files.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The function whose first line starts with `signature` (at the start of a line), with the
 * comment lines right above it, through the brace that closes its body. Lines are 1-based.
 * An Error names the file and the signature when it is not found or its braces do not close.
 */
export function extractFunction(text, signature, file = '(text)') {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith(signature));
  if (at < 0) throw new Error(`source excerpt: no line of ${file} starts with '${signature}'`);
  let first = at;
  while (first > 0 && /^\s*(\/\/|\/\*\*|\*)/.test(lines[first - 1])) first--;
  let depth = 0;
  let opened = false;
  for (let i = at; i < lines.length; i++) {
    for (const ch of lines[i].replace(/\/\/.*$/, '')) {
      if (ch === '{') (depth++, (opened = true));
      else if (ch === '}') depth--;
    }
    if (opened && depth === 0) return { first: first + 1, last: i + 1, text: lines.slice(first, i + 1).join('\n') };
  }
  throw new Error(`source excerpt: the body of '${signature}' in ${file} does not close`);
}

/** Each listed excerpt ({ id, file, signature }, file relative to `root`) with its lines and text. */
export function readExcerpts(root, list) {
  return list.map((e) => ({ ...e, ...extractFunction(readFileSync(join(root, e.file), 'utf8'), e.signature, e.file) }));
}

/** Vite plugin: `import excerpts from 'virtual:source-excerpts'` gives readExcerpts(root, list). */
export function sourceExcerpts(root, listFile) {
  const id = 'virtual:source-excerpts';
  const resolved = '\0' + id;
  return {
    name: 'attnlab-source-excerpts',
    resolveId: (source) => (source === id ? resolved : null),
    load(loaded) {
      if (loaded !== resolved) return null;
      const list = JSON.parse(readFileSync(listFile, 'utf8'));
      for (const e of list) this.addWatchFile(join(root, e.file));
      return `export default ${JSON.stringify(readExcerpts(root, list))};`;
    },
  };
}
