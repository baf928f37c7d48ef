// Everything an experiment's run returns has its 简体中文 in web/src/i18n/results_zh.ts:
// - every message id the engine lists (lab.experiments()[i].messages) has a Chinese template with
//   exactly the placeholders of the English one, in Chinese wherever the English has words, and
//   no Chinese template is left over for an id the engine no longer has;
// - every text the engine puts in a table, a chart or a note (caption, column, text cell, series
//   title, axis label, line name, note), and every text value of a message, is translated (a term,
//   an experiment's own term or a pattern), or a number, or notation kept as is (KEEP). The texts
//   come from each experiment run once at toy sizes (1–2 training steps, tiny models: about a
//   second in all), plus the notes of branches toy runs do not reach (a diverged run).
// The Chinese conclusion of each toy run renders (every placeholder filled) and holds no English
// sentence. Reads results_zh.ts as JavaScript once each `export const NAME: Type =` lost its type.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { ROOT, loadLab } from './harness.mjs';

function tables() {
  const source = readFileSync(path.join(ROOT, 'web/src/i18n/results_zh.ts'), 'utf8').replace(/^export const (\w+): [^=]+ = /gm, 'const $1 = ');
  return new Function(`${source}\nreturn { CONCLUSIONS_ZH, TERMS_ZH, TERMS_ZH_BY_EXPERIMENT, PATTERNS_ZH, KEEP };`)();
}
const zh = tables();

// The lookup of web/src/i18n/results.ts (termZh, sameInZh).
function termZh(experiment, text) {
  const own = zh.TERMS_ZH_BY_EXPERIMENT[experiment]?.[text] ?? zh.TERMS_ZH[text];
  if (own !== undefined) return own;
  for (const p of zh.PATTERNS_ZH) {
    const m = p.en.exec(text);
    if (m) return p.zh.replace(/\$(\d)/g, (_, i) => (Number(i) === p.error ? m[i] : (termZh(experiment, m[i]) ?? m[i])));
  }
  return undefined;
}
const NUMBER = /^-?\d+(\.\d+)?(e[-+]\d+)?%?$/;
const covered = (experiment, text) => zh.KEEP.has(text) || NUMBER.test(text) || termZh(experiment, text) !== undefined;

const placeholders = (s) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
const HAN = /[\u4e00-\u9fff]/;
// Three English words in a row: a sentence (or most of one) left in English.
const ENGLISH = /\b[A-Za-z]{2,} [A-Za-z]{2,} [A-Za-z]{2,}\b/;

function render(m, templates, experiment) {
  const template = templates[m.id];
  assert.ok(template !== undefined, `${experiment}: no zh template '${m.id}'`);
  return template.replace(/\{(\w+)\}/g, (_, name) => {
    const v = m.values[name];
    assert.ok(v !== undefined, `${experiment}: '${m.id}' has no value '${name}'`);
    if (typeof v === 'string') return termZh(experiment, v) ?? v;
    return v.parts.map((p) => render(p, templates, experiment)).join({ '; ': '；', ', ': '、' }[v.separator] ?? v.separator);
  });
}

// Every text value of a message, with its parts'.
function messageTexts(m) {
  return m ? Object.values(m.values).flatMap((v) => (typeof v === 'string' ? [v] : v.parts.flatMap(messageTexts))) : [];
}

// Toy sizes: 1–2 steps of models a few numbers wide. heads 3 does not divide 16 (a "skipped" note).
const TRAIN = { steps: 2, logEvery: 1, warmup: 0, batch: 2, evalBatches: 1 };
const TOY = {
  scaling: { ...TRAIN, dModel: 16, length: 4, ff: 8, gradientDims: [16, 32] },
  heads: { ...TRAIN, dModels: [16], heads: [1, 2, 3], length: 4 },
  cost: { dModel: 16, length: 8, batch: 1, heads: [1, 2], repeats: 1 },
  lstm: { ...TRAIN, distances: [2, 3], extra: 2, dModel: 8 },
  positional: { ...TRAIN, length: 4, k: 1, dModel: 8, heads: 2, layers: 1 },
  permutation: { length: 4, dModel: 8, heads: 2, layers: 1, batches: 1 },
  mask: { ...TRAIN, length: 3, dModel: 8, heads: 2, layers: 1, samples: 1, genExamples: 2 },
  fp16: { ...TRAIN, length: 4, dModel: 8, heads: 2, layers: 1 },
  norm: { ...TRAIN, warmup: 1, length: 3, dModel: 8, heads: 2, layers: 2 },
  'kv-heads': { ...TRAIN, length: 3, dModel: 8, heads: 2, layers: 1, kvHeads: [2, 1], genTokens: 2 },
  variants: { ...TRAIN, lengths: [8], window: 2, blockSize: 2, dModel: 8, heads: 2, timedBatch: 1, repeats: 1 },
  normalizer: { ...TRAIN, length: 3, dModel: 8, heads: 2, layers: 1, sequences: 1 },
  'tie-qk': { ...TRAIN, length: 6, k: 1, dModel: 8, heads: 2, layers: 1, sequences: 1 },
  importance: { ...TRAIN, length: 6, k: 1, dModel: 8, heads: 2, layers: 1, sequences: 1 },
  series: { ...TRAIN, seeds: 2, dModel: 8, layers: 1 },
};
// Notes of branches the toy runs do not reach: the engine's run name and error framing.
const NOTES = {
  scaling: ['unscaled stopped: Trainer::step: loss is not finite at step 3'],
  positional: ['learned cannot run at length 48: positional: position 40 exceeds max_len 24'],
  fp16: ['fp16, fp16 softmax: Trainer::step: loss is not finite at step 7'],
  norm: ['post-LN, no warm-up: Trainer::step: gradient is not finite at step 9'],
  variants: ['linear n=64 stopped: Trainer::step: loss is not finite at step 2'],
  importance: ['training stopped: Trainer::step: loss is not finite at step 2'],
  series: ['Transformer (time-aware) seed 2 stopped: Trainer::step: loss is not finite at step 4'],
  lstm: ['Transformer k=100 stopped: Trainer::step: loss is not finite at step 4'],
};

test('every message id has a Chinese template with the same placeholders', async () => {
  const lab = await loadLab('single');
  const list = lab.experiments();
  assert.deepEqual(Object.keys(zh.CONCLUSIONS_ZH).sort(), list.map((e) => e.name).sort(), 'CONCLUSIONS_ZH has one table per experiment');
  for (const e of list) {
    const ids = Object.keys(e.messages);
    assert.ok(ids.length > 0, `${e.name}: the engine lists its templates`);
    const table = zh.CONCLUSIONS_ZH[e.name];
    assert.deepEqual(Object.keys(table).filter((id) => !(id in e.messages)), [], `${e.name}: zh templates for ids the engine does not have`);
    for (const id of ids) {
      const english = e.messages[id];
      assert.ok(typeof table[id] === 'string', `${e.name}: no zh template '${id}' (English: ${english})`);
      assert.deepEqual(placeholders(table[id]), placeholders(english), `${e.name}/${id}: placeholders`);
      // A template with words (not only placeholders and notation) is Chinese.
      if (/[A-Za-z]{3,}/.test(english.replace(/\{\w+\}/g, '').replace(/\b(MFLOP|KiB|LSTM|Transformer|softmax|fp16|fp32|d_model|d_k|k_back|log_log|Pre-LN|Post-LN|RoPE|MSE|Spearman)\b/g, ''))) {
        assert.match(table[id], HAN, `${e.name}/${id}: the zh template is Chinese`);
        assert.doesNotMatch(table[id].replace(/\{\w+\}/g, ''), ENGLISH, `${e.name}/${id}: no English sentence`);
      }
    }
  }
});

test('every text of a toy run of each experiment is in Chinese, a number or kept notation', async () => {
  const lab = await loadLab('single');
  const names = lab.experiments().map((e) => e.name);
  assert.deepEqual(Object.keys(TOY).sort(), [...names].sort(), 'a toy run for every experiment');
  const missing = new Set();
  const need = (experiment, text, where) => {
    if (!covered(experiment, text)) missing.add(`${experiment} ${where}: ${JSON.stringify(text)}`);
  };
  const start = performance.now();
  for (const name of names) {
    const r = lab.runExperiment(name, TOY[name], () => true);
    for (const t of r.tables) {
      need(name, t.name, 'caption');
      t.columns.forEach((c) => need(name, c, 'column'));
      // A generated sample ("3 1 4 -> 4 1 3   (4 1 3)") is data, not text.
      if (!t.name.startsWith('samples: ')) t.rows.flat().forEach((c) => need(name, c, `${t.name} cell`));
    }
    for (const s of r.series) {
      [s.name, s.xLabel, s.yLabel].forEach((text) => need(name, text, 'series'));
      s.lines.forEach((l) => need(name, l.name, `${s.name} line`));
    }
    for (const note of [...r.notes, ...(NOTES[name] ?? [])]) need(name, note, 'note');
    for (const v of [...messageTexts(r.conclusionMessage), ...messageTexts(r.timingMessage)]) need(name, v, 'message value');

    const info = lab.experiments().find((e) => e.name === name);
    for (const m of [r.conclusionMessage, r.timingMessage].filter(Boolean)) {
      const text = render(m, zh.CONCLUSIONS_ZH[name], name);
      assert.match(text, HAN, `${name}: zh ${m.id}`);
      assert.doesNotMatch(text, /[{}]/, `${name}: zh ${m.id} leaves no placeholder: ${text}`);
      assert.doesNotMatch(text, ENGLISH, `${name}: zh ${m.id} has no English sentence: ${text}`);
      assert.ok(info.messages[m.id], `${name}: ${m.id} is listed`);
    }
  }
  assert.deepEqual([...missing], [], `texts without Chinese (add them to web/src/i18n/results_zh.ts):\n${[...missing].join('\n')}`);
  assert.ok(performance.now() - start < 20000, 'the toy runs stay cheap');
});
