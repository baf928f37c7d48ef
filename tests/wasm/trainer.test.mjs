// lab.Trainer: training a Model on a Task from JavaScript. Equal to the native engine on the same
// seed, lowers the reverse-task loss, shares ownership of model and task, an Error naming the
// problem for every bad input, and no leak across 1,000 create/step/evaluate/delete cycles and
// failing calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';

import { FLAVOURS, ROOT, loadLab, expectError } from './harness.mjs';

// The native CLI on the same settings (one thread; the losses do not depend on the thread count):
//   build/attnlab train --task reverse --length 4 --vocab 6 --layers 2 --d-model 32 --heads 4 --pe rope \
//     --norm pre --steps 5 --batch 32 --lr 0.003 --warmup 10 --schedule constant --clip 1 --seed 1 \
//     --max-len 16 --eval-every 0 --quiet --threads 1 --log native.csv
const NATIVE_ARGS = ['train', '--task', 'reverse', '--length', '4', '--vocab', '6', '--layers', '2', '--d-model', '32',
  '--heads', '4', '--pe', 'rope', '--norm', 'pre', '--steps', '5', '--batch', '32', '--lr', '0.003', '--warmup', '10',
  '--schedule', 'constant', '--clip', '1', '--seed', '1', '--max-len', '16', '--eval-every', '0', '--quiet', '--threads', '1'];
// Its losses (native.csv, 6 significant digits), committed so the test runs without a native build.
const NATIVE_LOSSES = [2.25469, 2.12865, 1.99766, 1.87781, 1.77162];

const MODEL = { kind: 'decoder', vocabSize: 7, maxLen: 16, dModel: 32, numHeads: 4, numLayers: 2, ffDim: 128, positional: 'rope', norm: 'pre', seed: 1 };
const TASK = ['reverse', { length: 4, vocab: 6 }];
const OPTIONS = { optimizer: 'adamw', lr: 3e-3, batchSize: 32, warmupSteps: 10, clipNorm: 1, seed: 1 };

function nativeLosses() {
  const cli = path.join(ROOT, 'build', 'attnlab');
  if (!fs.existsSync(cli)) return null;
  const log = path.join(fs.mkdtempSync(path.join(ROOT, 'build', 'wasm-test-')), 'native.csv');
  execFileSync(cli, [...NATIVE_ARGS, '--log', log], { stdio: 'ignore' });
  const rows = fs.readFileSync(log, 'utf8').trim().split('\n').slice(1);
  fs.rmSync(path.dirname(log), { recursive: true });
  return rows.map((r) => Number(r.split(',')[1]));
}

for (const flavour of FLAVOURS) {
  test(`${flavour}: the first 5 losses equal the native engine's on the same seed`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model(MODEL), task = new lab.Task(...TASK);
    const trainer = new lab.Trainer(model, task, OPTIONS);
    const m = trainer.step(5);
    const wasm = [...m.losses];
    for (const [name, expected] of [['committed', NATIVE_LOSSES], ['native CLI now', nativeLosses()]]) {
      if (!expected) continue;
      expected.forEach((e, i) => assert.ok(Math.abs(wasm[i] - e) < 1e-4, `step ${i}: wasm ${wasm[i]} vs ${name} ${e}`));
    }
    for (const o of [trainer, task, model]) o.delete();
  });

  test(`${flavour}: step(n) reports cumulative steps and the metrics of the last step`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model(MODEL), task = new lab.Task(...TASK);
    const trainer = new lab.Trainer(model, task, { ...OPTIONS, totalSteps: 50, minLr: 1e-4 });
    const one = trainer.step();
    assert.equal(one.step, 1);
    assert.equal(one.losses.length, 1);
    const m = trainer.step(4);
    assert.equal(m.step, 5);
    assert.equal(trainer.stepsDone(), 5);
    assert.equal(m.losses.length, 4);
    assert.equal(m.loss, m.losses[3]);
    assert.ok(m.losses instanceof Float32Array && m.headEntropy instanceof Float32Array);
    assert.equal(m.headEntropy.length, 2 * 4, 'one entropy per layer and head');
    for (const h of m.headEntropy) assert.ok(h >= 0 && h <= Math.log(8) + 1e-5);
    assert.ok(m.accuracy >= 0 && m.accuracy <= 1);
    assert.ok(m.gradNorm > 0 && m.maxScore > 0 && m.ms > 0 && m.totalMs >= m.ms);
    assert.ok(Math.abs(m.lr - trainer.lrAt(4)) < 1e-9, 'lr of the last step (0-based index 4)');
    assert.ok(Math.abs(trainer.lrAt(5) - 3e-3 * 6 / 10) < 1e-7, 'linear warm-up');
    assert.equal(trainer.options().totalSteps, 50);
    const e1 = trainer.evaluate(2), e2 = trainer.evaluate(2);
    assert.deepEqual(e1, e2, 'evaluation batches come from a fixed seed');
    assert.equal(e1.count, 2 * 32 * 4, 'answer tokens counted');
    assert.notDeepEqual(trainer.evaluate(2, 99), e1, 'another evaluation seed, other batches');
    for (const o of [trainer, task, model]) o.delete();
  });

  test(`${flavour}: training lowers the reverse-task loss within 300 steps`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model(MODEL), task = new lab.Task(...TASK);
    const trainer = new lab.Trainer(model, task, OPTIONS);
    const before = trainer.evaluate(4);
    const first = trainer.step(10);
    let last = first;
    while (last.step < 300) last = trainer.step(50);
    const after = trainer.evaluate(4);
    assert.ok(last.loss < 0.3 * first.losses[0], `training loss ${first.losses[0]} -> ${last.loss}`);
    assert.ok(after.loss < 0.3 * before.loss, `evaluation loss ${before.loss} -> ${after.loss}`);
    assert.ok(after.accuracy > 0.9, `evaluation accuracy ${after.accuracy}`);
    // The trained model reverses a prompt it has not necessarily seen.
    const out = model.generate(task.encode('5 0 3 2 |'), 4);
    assert.equal(task.decode(out), '5 0 3 2 | 2 3 0 5');
    for (const o of [trainer, task, model]) o.delete();
  });

  test(`${flavour}: an encoder trains on brackets; the trainer outlives the JS model and task`, async () => {
    const lab = await loadLab(flavour);
    const task = new lab.Task('brackets', { length: 8, vocab: 2 });
    const model = new lab.Model({ kind: 'encoder', vocabSize: task.vocabSize(), numClasses: task.numClasses(), dModel: 16, numHeads: 2, numLayers: 1, seed: 3 });
    const trainer = new lab.Trainer(model, task, { batchSize: 16, seed: 2 });
    const m = trainer.step(3);
    assert.equal(m.step, 3);
    assert.equal(m.headEntropy.length, 2);
    const saved = model.save();
    model.delete();
    task.delete();
    const later = trainer.step(2);  // shared ownership: still alive
    assert.equal(later.step, 5);
    assert.ok(Number.isFinite(trainer.evaluate(1).loss));
    trainer.delete();
    const reloaded = lab.Model.load(saved);
    assert.equal(reloaded.kind(), 'encoder');
    reloaded.delete();
  });

  test(`${flavour}: bad input throws an Error naming the problem; the module keeps working`, async () => {
    const lab = await loadLab(flavour);
    const model = new lab.Model(MODEL), task = new lab.Task(...TASK);
    const trainer = new lab.Trainer(model, task, OPTIONS);
    const brackets = new lab.Task('brackets');
    const encoder = new lab.Model({ kind: 'encoder', vocabSize: 5, numClasses: 3 });
    const small = new lab.Model({ ...MODEL, vocabSize: 5 });
    const learned = new lab.Model({ ...MODEL, positional: 'learned', maxLen: 6 });
    const deleted = new lab.Model(MODEL);
    deleted.delete();
    const cases = [
      [() => new lab.Trainer(model, brackets, OPTIONS), /task 'brackets' is a classification task and needs an encoder model/],
      [() => new lab.Trainer(encoder, task, OPTIONS), /task 'reverse' is a sequence task and needs a decoder model/],
      [() => new lab.Trainer(encoder, brackets, OPTIONS), /the model has 3 classes, task 'brackets' has 2/],
      [() => new lab.Trainer(small, task, OPTIONS), /the model's vocab_size \(5\) is smaller than task 'reverse' needs \(7\)/],
      [() => new lab.Trainer(learned, task, OPTIONS), /sequences of 8 positions but the learned position table holds max_len = 6/],
      [() => new lab.Trainer(model, task, { lr: 3e-3, learningRate: 1 }), /unknown option 'learningRate' \(valid: optimizer, lr, minLr/],
      [() => new lab.Trainer(model, task, { optimizer: 'adam' }), /option 'optimizer' must be 'adamw' or 'sgd', got 'adam'/],
      [() => new lab.Trainer(model, task, { lr: -1 }), /lr must be positive and finite/],
      [() => new lab.Trainer(model, task, { lr: 1e-3, minLr: 1e-2 }), /min_lr must be in \[0, lr/],
      [() => new lab.Trainer(model, task, { batchSize: 0 }), /batch_size must be positive/],
      [() => new lab.Trainer(model, task, { warmupSteps: 10, totalSteps: 5 }), /warmup_steps \(10\) exceeds total_steps \(5\)/],
      [() => new lab.Trainer(model, task, { clipNorm: 'on' }), /option 'clipNorm' must be a finite number/],
      [() => new lab.Trainer(model, task, { batchSize: 1e6 }), /new Trainer: the \(B, T, C\) activations needs 256000000 floats .*over the budget/],
      [() => new lab.Trainer(model, model, OPTIONS), /Task/],
      [() => new lab.Trainer(deleted, task, OPTIONS), /deleted/],
      [() => new lab.Trainer(model), /Trainer/],
      [() => trainer.step(0), /the step count must be at least 1, got 0/],
      [() => trainer.step(-3), /the step count must be a non-negative integer/],
      [() => trainer.step('10'), /the step count must be a number, got string/],
      [() => trainer.evaluate(0), /batches must be positive, got 0/],
      [() => trainer.step(1e9), /the step count must be at most 1000000 per call \(call step again to continue\), got 1000000000/],
      [() => trainer.evaluate(1e9), /batches must be at most 100000, got 1000000000/],
      [() => trainer.evaluate(1, -1), /seed must be a non-negative integer/],
    ];
    for (const [call, re] of cases) {
      expectError(assert, call, re);
      assert.equal(trainer.step(1).losses.length, 1, `still working after ${re}`);
    }
    // A diverging run stops with an Error naming the step, and the trainer stays usable.
    const wild = new lab.Model({ ...MODEL, scale: false, seed: 4 });
    const wildTrainer = new lab.Trainer(wild, task, { optimizer: 'sgd', lr: 0.9, momentum: 0.9, clipNorm: 0, warmupSteps: 0, seed: 1 });
    let error;
    try { for (let i = 0; i < 200; i++) wildTrainer.step(1); } catch (e) { error = e; }
    if (error) assert.match(error.message, /at step \d+/);
    for (const o of [wildTrainer, wild, trainer, task, model, brackets, encoder, small, learned]) o.delete();
  });

  test(`${flavour}: 1,000 create/step/evaluate/delete cycles and failing calls do not leak`, async () => {
    const lab = await loadLab(flavour);
    const SLACK = 4096;
    const snapshot = async () => {
      await tick();
      return { heap: lab.heapUsed(), memory: lab.HEAP8.length, stack: lab.stackUsed(), handles: lab.count_emval_handles() };
    };
    const tiny = { kind: 'decoder', vocabSize: 5, dModel: 8, numHeads: 2, numLayers: 1, ffDim: 16, positional: 'rope', seed: 1 };
    const cycle = (i) => {
      const model = new lab.Model({ ...tiny, seed: i });
      const task = new lab.Task('copy', { length: 2, vocab: 4 });
      const trainer = new lab.Trainer(model, task, { batchSize: 4, warmupSteps: 1, seed: i });
      trainer.step(1);
      trainer.evaluate(1);
      model.attentionMaps([0, 1, 4]);
      model.generate([0, 1], 2);
      const again = lab.Model.load(model.save());
      task.sample(2, i);
      task.decode(task.encode('0 1 |'));
      // Delete in a different order each time: shared ownership must not care.
      const all = [model, task, trainer, again];
      for (let k = 0; k < 4; k++) all[(i + k) % 4].delete();
    };
    const model = new lab.Model(tiny), task = new lab.Task('copy', { length: 2, vocab: 4 });
    const trainer = new lab.Trainer(model, task, { batchSize: 4, warmupSteps: 1 });
    const brackets = new lab.Task('brackets');
    const failing = () => {
      for (const call of [
        () => new lab.Model({ ...tiny, dModel: 7 }),
        () => new lab.Task('nope'),
        () => new lab.Trainer(model, brackets, {}),
        () => trainer.step(0),
        () => model.generate([9], 1),
        () => lab.Model.load(new Uint8Array(16)),
        () => task.encode('0 z'),
        () => model.attentionMaps({ shape: [1, 3], data: [0, 1] }),
      ]) assert.throws(call, Error);
    };
    for (let i = 0; i < 20; i++) cycle(i);  // warm up: pools, scratch buffers, the kept message
    failing();
    const before = await snapshot();
    for (let i = 0; i < 1000; i++) cycle(i);
    for (let i = 0; i < 125; i++) failing();  // 1,000 failing calls
    const after = await snapshot();
    assert.ok(Math.abs(after.heap - before.heap) <= SLACK, `heapUsed ${before.heap} -> ${after.heap}`);
    assert.equal(after.memory, before.memory, 'HEAP8.length');
    assert.equal(after.stack, before.stack, 'stackUsed');
    assert.equal(after.handles, before.handles, 'emval handles');
    for (const o of [trainer, task, model, brackets]) o.delete();
  });
}
