// The training lab's form limits (web/src/engine/protocol/limits.json) against the engine: every
// value the form accepts is one the engine accepts (make_task's ranges, the Trainer's), a form
// bound that is the engine's own (brackets: 4 bracket kinds) is refused one step beyond, and the
// tasks whose defaults the lab chose for learnability reach a good accuracy with them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { ROOT, loadLab } from './harness.mjs';

const LIMITS = JSON.parse(fs.readFileSync(path.join(ROOT, 'web/src/engine/protocol/limits.json'), 'utf8'));

// Engine bounds the form shares exactly (tasks.cpp: "bracket kinds: () [] {} <>").
const ENGINE_MAX = { brackets: { vocab: 4 } };

// The engine option each form field sets (limits.json "options"; series: context and horizon).
function taskOptions(name, length, vocab) {
  const t = LIMITS.tasks[name];
  const key = (field) => t.options?.[field] ?? field;
  return t.vocab ? { [key('length')]: length, [key('vocab')]: vocab } : { [key('length')]: length };
}

test('every corner of each task\'s form ranges makes an engine task', async () => {
  const lab = await loadLab('single');
  assert.deepEqual(Object.keys(LIMITS.tasks).sort(), lab.taskNames().filter((n) => n !== 'k_back' && n !== 'caption_match').sort(),
    'the lab offers every task but k_back and caption_match (an image with a caption)');
  for (const [name, t] of Object.entries(LIMITS.tasks)) {
    const vocabs = t.vocab ? [t.vocab.min, t.vocab.default, t.vocab.max] : [undefined];
    for (const length of [t.length.min, t.length.default, t.length.max]) {
      for (const vocab of vocabs) {
        // assoc_recall needs a key per pair: the form says so (labProblems) for vocab < length.
        if (name === 'assoc_recall' && vocab < length) continue;
        const task = new lab.Task(name, taskOptions(name, length, vocab));
        task.delete();
      }
    }
    for (const [field, max] of Object.entries(ENGINE_MAX[name] ?? {})) {
      assert.equal(t[field].max, max);
      assert.throws(() => new lab.Task(name, { ...taskOptions(name, t.length.default, t.vocab?.default), [field]: max + 1 }), /must be in \[1, 4\]/);
    }
  }
});

test('the form\'s training ranges are accepted by the Trainer', async () => {
  const lab = await loadLab('single');
  const task = new lab.Task('reverse', { length: 4, vocab: 6 });
  const model = new lab.Model({ vocabSize: task.vocabSize(), dModel: 16, numHeads: 2, numLayers: 1 });
  const { lr, steps, seed } = LIMITS.training;
  for (const options of [
    { lr: lr.min, totalSteps: steps.min, warmupSteps: 0, seed: seed.min },
    { lr: lr.max, totalSteps: steps.max, warmupSteps: Math.min(100, Math.floor(steps.max / 10)), seed: seed.max },
  ]) {
    const trainer = new lab.Trainer(model, task, { ...options, minLr: options.lr / 10 });
    trainer.step(1);
    trainer.delete();
  }
  model.delete();
  task.delete();
});

// A run as the page makes it (web/src/engine/worker/training.ts: the model and trainer options
// from the form's settings), with the form's defaults (limits.json "defaults" and the task's own).
async function trainDefaults(name) {
  const lab = await loadLab('threads');
  lab.setNumThreads(1);
  const t = LIMITS.tasks[name];
  const s = LIMITS.defaults;
  const task = new lab.Task(name, { ...taskOptions(name, t.length.default, t.vocab?.default), seed: s.seed });
  const encoder = task.kind() === 'classification';
  const model = new lab.Model({
    kind: encoder ? 'encoder' : 'decoder', architecture: s.architecture, vocabSize: task.vocabSize(), maxLen: Math.max(32, task.seqLen()), dModel: s.dModel, numHeads: s.heads,
    numKvHeads: s.kvHeads, numLayers: s.layers, ffDim: 4 * s.dModel, positional: s.positional, norm: s.norm, scale: s.scale, seed: s.seed,
    ...(encoder ? { numClasses: task.numClasses() } : {}),
  });
  const trainer = new lab.Trainer(model, task, { lr: s.lr, minLr: s.lr / 10, batchSize: s.batch, warmupSteps: Math.min(100, Math.floor(t.steps / 10)), totalSteps: t.steps, clipNorm: 1, seed: s.seed });
  for (let done = 0; done < t.steps; done += 100) trainer.step(Math.min(100, t.steps - done));
  const r = trainer.evaluate(8);
  for (const o of [trainer, model, task]) o.delete();
  return r.accuracy;
}

test('assoc_recall learns with the lab\'s defaults', async () => {
  const accuracy = await trainDefaults('assoc_recall');
  assert.ok(accuracy >= 0.9, `held-out accuracy ${accuracy}`);
});

test('brackets learns with the lab\'s defaults', async () => {
  const accuracy = await trainDefaults('brackets');
  assert.ok(accuracy >= 0.9, `held-out accuracy ${accuracy}`);
});

test('Train on text\'s context range and vocabulary sizes make engine text tasks', async () => {
  const lab = await loadLab('single');
  const t = LIMITS.text;
  const text = Array.from({ length: 20 }, (_, i) => `document ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(4)}\n`).join('\n');
  for (const length of [t.length.min, t.length.default, t.length.max]) {
    for (const tokens of ['char', 'bpe']) {
      const task = lab.Task.fromText(text, { tokens, chars: t.chars, merges: t.merges, length });
      assert.equal(task.seqLen(), length);
      task.delete();
    }
  }
  assert.ok(t.sampleEvery >= 1 && t.sampleTokens >= 1);
});
