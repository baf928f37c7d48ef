// lab.experiments() and lab.runExperiment() (web/bindings/experiments.cpp): the registry of the
// native `attnlab experiment`, and runs whose results equal the native ones for the same seed.
//
// Native results: committed JSON (tests/experiments/native/, written by the commands in NATIVE
// below), and, when build/attnlab exists, the same commands run now. Agreement: the structure
// (names, columns, row labels, config, command, notes) and every text cell exactly; number cells
// within 1e-5 + 1e-3·|native|, fp16's within 4e-3 (RELATIVE below) (WebAssembly's kernels sum in
// another order than AVX2's, so float results agree to rounding, not bit for bit); the conclusion
// with its numbers masked exactly; wall-time columns ("/s", "(ms)") and the timing line are not
// compared. Multiply-adds counted by the engine (core/flop_counter.hpp: columns "counted ...",
// "work ~ n^x", series "flops") are what the kernels compute, and which kernel path runs (strip
// padding, the one-tile limits) depends on the ISA's kernel table: they are compared only for their
// presence, and the conclusions of the experiments built on them (COUNTED below) only for being
// there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { FLAVOURS, ROOT, loadLab, expectError, heapSnapshot, assertSameHeap } from './harness.mjs';

const NATIVE_DIR = path.join(ROOT, 'tests/experiments/native');
// name -> [JS options, CLI flags]: the same run both ways.
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
  series_short: ['series', { quick: true, steps: 6, logEvery: 2, warmup: 2, evalBatches: 1 },
    ['--quick', '--steps', '6', '--log-every', '2', '--warmup', '2', '--eval-batches', '1']],
};

function nativeNow(name) {
  const cli = path.join(ROOT, 'build', 'attnlab');
  if (!fs.existsSync(cli)) return null;
  const dir = fs.mkdtempSync(path.join(ROOT, 'build', 'wasm-test-'));
  const [experiment, , flags] = NATIVE[name];
  execFileSync(cli, ['experiment', experiment, ...flags, '--threads', '1', '--quiet', '--json', path.join(dir, 'r.json')], { stdio: 'ignore' });
  const r = JSON.parse(fs.readFileSync(path.join(dir, 'r.json'), 'utf8'));
  fs.rmSync(dir, { recursive: true });
  return r;
}

const TIMED = /\/s$|\(ms\)$/;
const COUNTED_COLUMN = /^counted |^work ~/;
const COUNTED_SERIES = new Set(['flops']);
const COUNTED = new Set(['cost', 'variants']);
const NUMBER = /^-?\d+(\.\d+)?(e[-+]\d+)?%?$/;
// fp16 emulation rounds activations to 11 significant bits: a float32 difference in the last
// bit can move a value by one fp16 step (2^-10 relative, 2^-11 at best), and a 2-decimal cell
// by a digit. Its runs agree within 4e-3 relative (four fp16 steps).
const RELATIVE = { fp16: 4e-3 };
let relative = 1e-3;
const close = (a, b) => Math.abs(a - b) <= 1e-5 + relative * Math.abs(b);
const maskNumbers = (s) => s.replace(/-?\d+(\.\d+)?(e[-+]\d+)?/g, '#');

function assertSameResult(wasm, native, what) {
  relative = RELATIVE[native.name] ?? 1e-3;
  for (const key of ['name', 'claim', 'command', 'config', 'notes']) assert.deepEqual(wasm[key], native[key], `${what}: ${key}`);
  if (!COUNTED.has(native.name)) {
    assert.equal(maskNumbers(wasm.conclusion), maskNumbers(native.conclusion), `${what}: conclusion`);
    assert.equal(wasm.conclusion.split(':')[0], native.conclusion.split(':')[0], `${what}: verdict`);
    assert.equal(wasm.verdict, native.verdict, `${what}: verdict field`);
  } else {
    assert.ok(wasm.conclusion.length > 0, `${what}: conclusion`);
  }
  assert.equal(wasm.tables.length, native.tables.length, `${what}: tables`);
  native.tables.forEach((t, i) => {
    const w = wasm.tables[i];
    assert.equal(w.name, t.name);
    assert.deepEqual(w.columns, t.columns, `${what}: ${t.name} columns`);
    assert.equal(w.rows.length, t.rows.length);
    t.rows.forEach((row, r) => row.forEach((cell, c) => {
      if (TIMED.test(t.columns[c]) || COUNTED_COLUMN.test(t.columns[c])) return;
      const got = w.rows[r][c];
      const where = `${what}: ${t.name}[${row[0]}][${t.columns[c]}]`;
      if (NUMBER.test(cell) && NUMBER.test(got)) assert.ok(close(parseFloat(got), parseFloat(cell)), `${where}: wasm ${got}, native ${cell}`);
      else assert.equal(got, cell, where);
    }));
  });
  assert.equal(wasm.series.length, native.series.length);
  native.series.forEach((s, i) => {
    const w = wasm.series[i];
    assert.equal(w.name, s.name);
    assert.deepEqual(w.x, s.x);
    if (COUNTED_SERIES.has(s.name)) return;
    s.lines.forEach((line, l) => {
      assert.equal(w.lines[l].name, line.name);
      line.y.forEach((y, j) => assert.ok(y === null ? w.lines[l].y[j] === null : close(w.lines[l].y[j], y),
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

  for (const name of Object.keys(NATIVE)) {
    test(`${flavour}: ${name} equals the native result for the same seed`, async () => {
      const lab = await loadLab(flavour);
      const [experiment, options] = NATIVE[name];
      const wasm = lab.runExperiment(experiment, options);
      const committed = JSON.parse(fs.readFileSync(path.join(NATIVE_DIR, `${name}.json`), 'utf8'));
      assertSameResult(wasm, committed, `${name} vs committed`);
      const now = nativeNow(name);
      if (now) assertSameResult(wasm, now, `${name} vs native CLI now`);
    });
  }
}
