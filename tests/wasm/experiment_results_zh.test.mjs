// Everything an experiment's run returns has its 简体中文 in web/src/i18n/results_zh.ts:
// - every message id the engine lists (lab.experiments()[i].messages: the experiment's own, then
//   the notes' shared ones) has a Chinese template (CONCLUSIONS_ZH, COMMON_ZH) with exactly the
//   placeholders of the English one, in Chinese wherever the English has words, and no Chinese
//   template is left over for an id the engine no longer has;
// - every text the engine puts in a table, a chart or a note (caption, column, text cell, series
//   title, axis label, line name, note), and every text value of a message, is translated (a term,
//   or a phrase the engine made from a template, rendered by its id), or a number, or notation
//   kept as is (KEEP). The texts come from each experiment run once at toy sizes (1–2 training
//   steps, tiny models: about a second in all), plus the notes of branches toy runs do not reach (a
//   diverged run), given as the messages the engine makes them from.
// The Chinese conclusion of each toy run renders (every placeholder filled) and holds no English
// sentence. Reads results_zh.ts as JavaScript once each `export const NAME: Type =` lost its type.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { ROOT, loadLab } from './harness.mjs';

function tables() {
  const source = readFileSync(path.join(ROOT, 'web/src/i18n/results_zh.ts'), 'utf8').replace(/^export const (\w+): [^=]+ = /gm, 'const $1 = ');
  return new Function(`${source}\nreturn { COMMON_ZH, CONCLUSIONS_ZH, TERMS_ZH, KEEP };`)();
}
const zh = tables();
/** The Chinese templates of one experiment: the shared notes' and its own. */
const templatesZh = (experiment) => ({ ...zh.COMMON_ZH, ...(zh.CONCLUSIONS_ZH[experiment] ?? {}) });

// The lookup of web/src/i18n/results.ts (ResultText.termZh, sameInZh): a phrase of the result by
// its message, else a term.
function termZh(experiment, phrases, text) {
  const m = phrases.get(text);
  if (m) return render(m, templatesZh(experiment), experiment, phrases);
  return zh.TERMS_ZH[text];
}
const NUMBER = /^-?\d+(\.\d+)?(e[-+]\d+)?%?$/;
const covered = (experiment, phrases, text) => zh.KEEP.has(text) || NUMBER.test(text) || termZh(experiment, phrases, text) !== undefined;

const placeholders = (s) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
const HAN = /[\u4e00-\u9fff]/;
// Three English words in a row: a sentence (or most of one) left in English.
const ENGLISH = /\b[A-Za-z]{2,} [A-Za-z]{2,} [A-Za-z]{2,}\b/;

function render(m, templates, experiment, phrases) {
  const template = templates[m.id];
  assert.ok(template !== undefined, `${experiment}: no zh template '${m.id}'`);
  return template.replace(/\{(\w+)\}/g, (_, name) => {
    const v = m.values[name];
    assert.ok(v !== undefined, `${experiment}: '${m.id}' has no value '${name}'`);
    if (typeof v === 'string') return name === 'error' ? v : (termZh(experiment, phrases, v) ?? v);
    return v.parts.map((p) => render(p, templates, experiment, phrases)).join({ '; ': '；', ', ': '、' }[v.separator] ?? v.separator);
  });
}

// The English of a message with the engine's templates (web/src/i18n/results.ts renderMessage).
function renderEnglish(m, templates) {
  return templates[m.id].replace(/\{(\w+)\}/g, (_, name) => {
    const v = m.values[name];
    return typeof v === 'string' ? v : v.parts.map((p) => renderEnglish(p, templates)).join(v.separator);
  });
}

// Every text value of a message, with its parts', but an engine error (shown as it is).
function messageTexts(m) {
  return m ? Object.entries(m.values).flatMap(([name, v]) => (typeof v === 'string' ? (name === 'error' ? [] : [v]) : v.parts.flatMap(messageTexts))) : [];
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
  variants: { ...TRAIN, lengths: [8], timedLengths: [8, 16], window: 2, blockSize: 2, dModel: 8, heads: 2, timedBatch: 1, repeats: 1 },
  normalizer: { ...TRAIN, length: 3, dModel: 8, heads: 2, layers: 1, sequences: 1 },
  'tie-qk': { ...TRAIN, length: 6, k: 1, dModel: 8, heads: 2, layers: 1, sequences: 1 },
  importance: { ...TRAIN, length: 6, k: 1, dModel: 8, heads: 2, layers: 1, sequences: 1 },
  series: { ...TRAIN, seeds: 2, dModel: 8, layers: 1 },
  'heads-real': { poems: 1, windows: 1 },
  induction: { ...TRAIN, vocab: 8, length: 8, depths: [2, 1], dModel: 8, heads: 2 },
};
// Notes of branches the toy runs do not reach: each as the message the engine makes it from (the
// run's own name, also a phrase, beside it) and the English the engine shows.
const stopped = (run, error) => ({ id: 'stopped', values: { run, error } });
/** The trainer's NonFiniteLoss as the one-part list a note nests it in. */
const nonfinite = (id, values) => ({ separator: '', parts: [{ id, values }] });
const NOTES = {
  scaling: [
    [stopped('unscaled', 'Trainer::step: loss is not finite at step 3'), 'unscaled stopped: Trainer::step: loss is not finite at step 3'],
    [stopped('unscaled', nonfinite('loss_not_finite', { loss: 'nan', step: '3' })), 'unscaled stopped: Trainer: the loss is nan at step 3; training stopped (try a lower learning rate, clipping, or scaling on)'],
  ],
  positional: [[{ id: 'cannot_run', values: { pe: 'learned', length: '48', error: 'positional: position 40 exceeds max_len 24' } }, 'learned cannot run at length 48: positional: position 40 exceeds max_len 24']],
  fp16: [
    [{ id: 'run_error', values: { run: 'fp16, fp16 softmax', error: 'Trainer::step: loss is not finite at step 7' } }, 'fp16, fp16 softmax: Trainer::step: loss is not finite at step 7'],
    // The trainer's non-finite loss by its template (a phrase nested in the note), in each form.
    [{ id: 'run_error', values: { run: 'fp16, fp16 softmax', error: nonfinite('loss_not_finite_naive', { loss: '-nan', step: '22', precision: 'fp16', softmax: 'same' }) } },
      'fp16, fp16 softmax: Trainer: the loss is -nan at step 22; training stopped (try a lower learning rate, clipping, or scaling on; attention runs in fp16 with softmax same, naive: a softmax in fp32 (stable) keeps large scores finite)'],
    [{ id: 'run_error', values: { run: 'fp16, fp32 softmax', error: nonfinite('loss_not_finite_precision', { loss: 'inf', step: '30', precision: 'fp16', softmax: 'fp32' }) } },
      'fp16, fp32 softmax: Trainer: the loss is inf at step 30; training stopped (try a lower learning rate, clipping, or scaling on; attention runs in fp16 with softmax fp32: a softmax in fp32 (stable) keeps large scores finite)'],
  ],
  norm: [[{ id: 'run_error', values: { run: 'post-LN, no warm-up', error: 'Trainer::step: gradient is not finite at step 9' } }, 'post-LN, no warm-up: Trainer::step: gradient is not finite at step 9']],
  variants: [[stopped('linear n=64', 'Trainer::step: loss is not finite at step 2'), 'linear n=64 stopped: Trainer::step: loss is not finite at step 2', { id: 'run', values: { variant: 'linear', n: '64' } }]],
  importance: [[{ id: 'training_stopped', values: { error: 'Trainer::step: loss is not finite at step 2' } }, 'training stopped: Trainer::step: loss is not finite at step 2']],
  series: [[stopped('Transformer (time-aware) seed 2', 'Trainer::step: loss is not finite at step 4'), 'Transformer (time-aware) seed 2 stopped: Trainer::step: loss is not finite at step 4', { id: 'run', values: { model: 'Transformer (time-aware)', seed: '2' } }]],
  lstm: [[stopped('Transformer k=100', 'Trainer::step: loss is not finite at step 4'), 'Transformer k=100 stopped: Trainer::step: loss is not finite at step 4', { id: 'run', values: { model: 'Transformer', k: '100' } }]],
};

test('every message id has a Chinese template with the same placeholders', async () => {
  const lab = await loadLab('single');
  const list = lab.experiments();
  assert.deepEqual(Object.keys(zh.CONCLUSIONS_ZH).sort(), list.map((e) => e.name).sort(), 'CONCLUSIONS_ZH has one table per experiment');
  for (const e of list) {
    const ids = Object.keys(e.messages);
    assert.ok(ids.length > 0, `${e.name}: the engine lists its templates`);
    assert.deepEqual(Object.keys(zh.COMMON_ZH).filter((id) => !(id in e.messages)), [], `${e.name}: lists the shared notes' templates`);
    assert.deepEqual(Object.keys(zh.CONCLUSIONS_ZH[e.name]).filter((id) => !(id in e.messages)), [], `${e.name}: zh templates for ids the engine does not have`);
    const table = templatesZh(e.name);
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
  let phrases = new Map();
  const need = (experiment, text, where) => {
    if (!covered(experiment, phrases, text)) missing.add(`${experiment} ${where}: ${JSON.stringify(text)}`);
  };
  const start = performance.now();
  for (const name of names) {
    // The files a run reads (heads-real: the shipped models and held-out text), from the repository.
    for (const p of lab.experimentInputs(name, TOY[name])) lab.provideExperimentFile(p, readFileSync(path.join(ROOT, p)));
    const r = lab.runExperiment(name, TOY[name], () => true);
    const info = lab.experiments().find((e) => e.name === name);
    phrases = new Map(r.phrases.map((p) => [p.text, p.message]));
    for (const p of r.phrases) {
      assert.equal(renderEnglish(p.message, info.messages), p.text, `${name}: phrase ${p.text} renders from its message`);
      messageTexts(p.message).forEach((v) => need(name, v, `value of the phrase ${JSON.stringify(p.text)}`));
    }
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
    for (const note of r.notes) need(name, note, 'note');
    for (const [message, english, ...runs] of NOTES[name] ?? []) {
      assert.equal(renderEnglish(message, info.messages), english, `${name}: the note's template`);
      phrases = new Map([...phrases, [english, message], ...runs.map((m) => [renderEnglish(m, info.messages), m])]);
      assert.doesNotMatch(render(message, templatesZh(name), name, phrases), /[{}]/, `${name}: zh note ${english}`);
      need(name, english, 'note');
      messageTexts(message).forEach((v) => need(name, v, `value of the note ${JSON.stringify(english)}`));
    }
    for (const v of [...messageTexts(r.conclusionMessage), ...messageTexts(r.timingMessage)]) need(name, v, 'message value');

    for (const m of [r.conclusionMessage, r.timingMessage].filter(Boolean)) {
      const text = render(m, templatesZh(name), name, phrases);
      assert.match(text, HAN, `${name}: zh ${m.id}`);
      assert.doesNotMatch(text, /[{}]/, `${name}: zh ${m.id} leaves no placeholder: ${text}`);
      assert.doesNotMatch(text, ENGLISH, `${name}: zh ${m.id} has no English sentence: ${text}`);
      assert.ok(info.messages[m.id], `${name}: ${m.id} is listed`);
    }
  }
  assert.deepEqual([...missing], [], `texts without Chinese (add them to web/src/i18n/results_zh.ts):\n${[...missing].join('\n')}`);
  assert.ok(performance.now() - start < 20000, 'the toy runs stay cheap');
});
