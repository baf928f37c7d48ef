// The page's two string tables (web/src/i18n/en.ts, zh.ts) hold the same keys, none empty, and
// each text names the same {params} in both languages, so t(key, params) fills every blank in
// either. Runs in Node without the page's build: each table is one object literal of string
// literals (`export const en = { ... };`), read here as JavaScript.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/**
 * The object literal `file` exports as `name` (its type annotation, if any, left out). A table
 * may spread others it imports (`...handsOn`, from './hands_on'): they are read the same way.
 */
function table(file, name) {
  const source = readFileSync(join(root, 'web', 'src', 'i18n', file), 'utf8');
  const start = source.search(new RegExp(`^export const ${name}(: [^=]+)? = \\{$`, 'm'));
  assert.ok(start >= 0, `${file} has a line 'export const ${name} = {' (or '${name}: Strings = {')`);
  const open = source.indexOf('{', source.indexOf('= {', start));
  const close = source.indexOf('\n};', open);
  assert.ok(close > open, `${file}: the table ends with a line '};'`);
  const body = source.slice(open, close + 2);
  const spread = [...body.matchAll(/^\s*\.\.\.(\w+),$/gm)].map((m) => m[1]);
  const parts = spread.map((part) => {
    const from = source.match(new RegExp(`^import \\{[^}]*\\b${part}\\b[^}]*\\} from '\\./(\\w+)';$`, 'm'));
    assert.ok(from, `${file} imports the table ${part} it spreads`);
    return table(`${from[1]}.ts`, part);
  });
  const value = new Function(...spread, `return (${body});`)(...parts);
  assert.equal(typeof value, 'object', `${file} exports ${name}`);
  return value;
}
const params = (text) => [...new Set([...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]))].sort();

const en = table('en.ts', 'en');
const zh = table('zh.ts', 'zh');

test('both tables have the same keys', () => {
  const missingInZh = Object.keys(en).filter((k) => !(k in zh));
  const missingInEn = Object.keys(zh).filter((k) => !(k in en));
  assert.deepEqual(missingInZh, [], `keys missing in zh.ts: ${missingInZh.join(', ')}`);
  assert.deepEqual(missingInEn, [], `keys missing in en.ts: ${missingInEn.join(', ')}`);
  assert.ok(Object.keys(en).length > 100, `en.ts holds the page's texts (${Object.keys(en).length} keys)`);
});

test('no text is empty in either table', () => {
  for (const [lang, t] of [['en', en], ['zh', zh]]) {
    const empty = Object.entries(t).filter(([, v]) => typeof v !== 'string' || v.trim() === '').map(([k]) => k);
    assert.deepEqual(empty, [], `empty texts in ${lang}: ${empty.join(', ')}`);
  }
});

test('every text names the same {params} in both languages', () => {
  const differ = Object.keys(en)
    .filter((k) => k in zh && params(en[k]).join() !== params(zh[k]).join())
    .map((k) => `${k}: en {${params(en[k]).join('}, {')}} vs zh {${params(zh[k]).join('}, {')}}`);
  assert.deepEqual(differ, [], differ.join('\n'));
});

test('the Chinese table is written in Chinese', () => {
  // Texts that are only symbols, numbers or technical names (d_model, RoPE) may stay as they are;
  // every sentence-like text carries Chinese characters.
  const han = /\p{Script=Han}/u;
  const english = Object.entries(zh).filter(([k, v]) => !han.test(v) && /[A-Za-z]{3,} [A-Za-z]{3,}/.test(v.replace(/<[^>]*>|\{\w+\}/g, ''))).map(([k]) => k);
  assert.deepEqual(english, [], `zh texts still in English: ${english.join(', ')}`);
});
