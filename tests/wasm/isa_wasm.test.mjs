// The command line reproduces the page: the native engine on its "wasm" kernels (ATTNLAB_ISA=wasm,
// `attnlab ... --isa wasm`: the WebAssembly build's kernels, in the same order, kernels/isa.hpp)
// computes what the WebAssembly module computes, bit for bit. Here: training runs (every weight
// of the checkpoint the CLI saves equals the module's after the same steps) and one attention
// layer's trace (tests/reference/wasm_isa_trace.json, which tests/kernels/test_isa.cpp holds the
// native "wasm" kernels to as well). The experiments: experiments.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { FLAVOURS, ROOT, loadLab, parseSafetensors } from './harness.mjs';
import { FIXTURE, compute } from './isa_fixture.mjs';

const CLI = path.join(ROOT, 'build', 'attnlab');

// Two training runs, each as CLI flags and as the JS Model, Task and Trainer options of the same
// run: a short one, and one whose 160 keys span two tiles of the flash path forward and backward
// (the lazy-reference forward of the WebAssembly kernels).
const RUNS = {
  reverse: {
    flags: ['--task', 'reverse', '--length', '4', '--vocab', '6', '--layers', '2', '--d-model', '32', '--heads', '4',
      '--ff', '128', '--pe', 'rope', '--norm', 'pre', '--max-len', '16', '--steps', '40', '--batch', '32', '--lr', '0.003',
      '--min-lr', '0.0001', '--warmup', '10', '--clip', '1', '--seed', '1'],
    task: ['reverse', { length: 4, vocab: 6 }],
    model: { kind: 'decoder', vocabSize: 7, maxLen: 16, dModel: 32, numHeads: 4, numLayers: 2, ffDim: 128, positional: 'rope', norm: 'pre', seed: 1 },
    trainer: { lr: 3e-3, minLr: 1e-4, weightDecay: 0.01, batchSize: 32, warmupSteps: 10, totalSteps: 40, clipNorm: 1, seed: 1 },
    steps: 40,
  },
  long_keys: {
    flags: ['--task', 'k_back', '--length', '160', '--k', '20', '--layers', '1', '--d-model', '16', '--heads', '2',
      '--ff', '32', '--pe', 'rope', '--norm', 'pre', '--max-len', '160', '--steps', '6', '--batch', '4', '--lr', '0.003',
      '--min-lr', '0.0001', '--warmup', '2', '--clip', '1', '--seed', '2'],
    task: ['k_back', { length: 160, k: 20 }],
    model: { kind: 'decoder', maxLen: 160, dModel: 16, numHeads: 2, numLayers: 1, ffDim: 32, positional: 'rope', norm: 'pre', seed: 2 },
    trainer: { lr: 3e-3, minLr: 1e-4, weightDecay: 0.01, batchSize: 4, warmupSteps: 2, totalSteps: 6, clipNorm: 1, seed: 2 },
    steps: 6,
  },
};

// The tensors of the checkpoint the CLI saves after the run, with --isa wasm on `threads` threads
// (a batch of more than 512 rows runs as micro-batches on one lane per thread, so its sums follow
// the thread count); null without a native build.
function nativeCheckpoint(run, threads) {
  if (!fs.existsSync(CLI)) return null;
  const dir = fs.mkdtempSync(path.join(ROOT, 'build', 'wasm-test-'));
  const file = path.join(dir, 'model.safetensors');
  execFileSync(CLI, ['train', ...run.flags, '--eval-every', '0', '--quiet', '--threads', String(threads), '--isa', 'wasm', '--save', file],
    { stdio: 'ignore' });
  const { tensors } = parseSafetensors(new Uint8Array(fs.readFileSync(file)));
  fs.rmSync(dir, { recursive: true });
  return tensors;
}

const bits = (data) => new Uint32Array(Float32Array.from(data).buffer);

function firstDifference(a, b) {
  const x = bits(a), y = bits(b);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return i;
  return -1;
}

for (const flavour of FLAVOURS) {
  for (const [name, run] of Object.entries(RUNS)) {
    test(`${flavour}: training run '${name}' ends in the weights the CLI's --isa wasm saves at the module's thread count, bit for bit`, async (t) => {
      const lab = await loadLab(flavour);
      const native = nativeCheckpoint(run, lab.buildInfo().threads);
      if (!native) return t.skip('no native build (build/attnlab)');
      const task = new lab.Task(...run.task);
      const model = new lab.Model({ vocabSize: task.vocabSize(), ...run.model });
      const trainer = new lab.Trainer(model, task, run.trainer);
      trainer.step(run.steps);
      const { tensors } = parseSafetensors(model.save());
      assert.deepEqual(Object.keys(tensors).sort(), Object.keys(native).sort());
      for (const [key, tensor] of Object.entries(native)) {
        assert.deepEqual(tensors[key].shape, tensor.shape, key);
        const i = firstDifference(tensors[key].data, tensor.data);
        assert.equal(i, -1, `${key}[${i}]: wasm ${tensors[key].data[i]}, native ${tensor.data[i]}`);
      }
      for (const o of [trainer, model, task]) o.delete();
    });
  }

  test(`${flavour}: one attention layer's trace and a long forward equal the committed fixture, bit for bit`, async () => {
    const lab = await loadLab(flavour);
    const fixture = JSON.parse(fs.readFileSync(FIXTURE, 'utf8'));
    const now = compute(lab, fixture.case);
    assert.equal(now.stages.length, fixture.stages.length);
    now.stages.forEach((s, i) => {
      const f = fixture.stages[i];
      assert.deepEqual([s.stage, s.head, s.shape], [f.stage, f.head, f.shape]);
      assert.equal(s.bits, f.bits, `${s.stage} head ${s.head}: other bits than the fixture's`);
    });
    assert.equal(now.longFnv1a64, fixture.longFnv1a64, 'the long forward (flash path, several key tiles)');
  });
}
