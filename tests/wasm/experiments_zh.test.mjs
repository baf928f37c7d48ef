// Every experiment the engine lists (lab.experiments()) has its fixed texts in 简体中文 in the page's
// i18n (web/src/i18n/experiments_zh.ts): a claim and a summary citing the same article section as
// the engine's English claim, and a Chinese help line for each of its parameters; and each
// parameter has a label in both languages (web/src/i18n/parameters.ts). Reads the tables as
// JavaScript (each is one object literal of literals).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { ROOT, loadLab } from './harness.mjs';

function table(name, file = 'experiments_zh.ts') {
  const source = readFileSync(path.join(ROOT, 'web/src/i18n', file), 'utf8');
  const start = source.search(new RegExp(`^export const ${name}: [^=]+ = \\{$`, 'm'));
  assert.ok(start >= 0, `experiments_zh.ts exports ${name}`);
  const open = source.indexOf('{', source.indexOf('=', start));
  const close = source.indexOf('\n};', open);
  return new Function(`return (${source.slice(open, close + 2)});`)();
}

test('each listed experiment has a zh claim, summary and parameter labels', async () => {
  const lab = await loadLab('single');
  const experiments = table('EXPERIMENTS_ZH');
  const parameters = table('PARAMETERS_ZH');
  const list = lab.experiments();
  assert.ok(list.length >= 10);
  const missing = list.filter((e) => !experiments[e.name]?.claim?.trim() || !experiments[e.name]?.summary?.trim()).map((e) => e.name);
  assert.deepEqual(missing, [], `experiments without a zh claim and summary: ${missing.join(', ')}`);
  for (const e of list) {
    // The zh claim cites the sections the engine's claim cites ("§4.1/§4.3: ...").
    const cites = (s) => s.match(/^(§[\d./§]+)/)?.[1];
    assert.equal(cites(experiments[e.name].claim), cites(e.claim), `${e.name}: sections of the zh claim`);
    assert.match(experiments[e.name].claim, /[\u4e00-\u9fff]/, `${e.name}: the zh claim is Chinese`);
  }
  const unlabelled = [...new Set(list.flatMap((e) => e.parameters.map((p) => p.flag.replace(/^--/, ''))))].filter((f) => !parameters[f]?.trim());
  assert.deepEqual(unlabelled, [], `parameters without a zh help line: ${unlabelled.join(', ')}`);
  const labels = table('PARAMETER_LABELS', 'parameters.ts');
  const flags = [...new Set(list.flatMap((e) => e.parameters.map((p) => p.flag.replace(/^--/, ''))))];
  const nameless = flags.filter((f) => !labels[f]?.en?.trim() || !/[\u4e00-\u9fff]/.test(labels[f]?.zh ?? ''));
  assert.deepEqual(nameless, [], `parameters without an English and a Chinese label: ${nameless.join(', ')}`);
  assert.deepEqual(Object.keys(labels).filter((f) => !flags.includes(f)), [], 'labels of parameters no experiment has');
  // The Chinese help line says more than the label above it.
  assert.deepEqual(flags.filter((f) => !labels[f].help && parameters[f].trim() === labels[f].zh.trim()), [], 'zh help lines that only repeat the label');
});
