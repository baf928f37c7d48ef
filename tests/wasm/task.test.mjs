// lab.Task: the generated toy tasks (include/attnlab/train/tasks.hpp) from JavaScript: geometry,
// seeded batches, decode/encode, and an Error naming the problem for every bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FLAVOURS, loadLab, expectError } from './harness.mjs';

// tasks.hpp's layout table for the options used below.
const GEOMETRY = [
  ['copy', { length: 4, vocab: 6 }, { kind: 'sequence', vocabSize: 7, seqLen: 8, numClasses: 7 }],
  ['reverse', { length: 4, vocab: 6 }, { kind: 'sequence', vocabSize: 7, seqLen: 8, numClasses: 7 }],
  ['sort', { length: 5, vocab: 3 }, { kind: 'sequence', vocabSize: 4, seqLen: 10, numClasses: 4 }],
  ['assoc_recall', { length: 3, vocab: 5 }, { kind: 'sequence', vocabSize: 11, seqLen: 8, numClasses: 11 }],
  ['k_back', { length: 12, vocab: 4, k: 3 }, { kind: 'sequence', vocabSize: 4, seqLen: 12, numClasses: 4 }],
  ['brackets', { length: 10, vocab: 2 }, { kind: 'classification', vocabSize: 5, seqLen: 10, numClasses: 2 }],
  ['char_lm', { length: 20 }, { kind: 'sequence', seqLen: 20 }],
];

const rowsOf = (t) => Array.from({ length: t.shape[0] }, (_, b) => t.data.subarray(b * t.shape[1], (b + 1) * t.shape[1]));

for (const flavour of FLAVOURS) {
  test(`${flavour}: taskNames and every task's geometry`, async () => {
    const lab = await loadLab(flavour);
    assert.deepEqual(lab.taskNames(), ['copy', 'reverse', 'sort', 'assoc_recall', 'k_back', 'brackets', 'char_lm', 'shapes', 'caption_match', 'series']);
    for (const [name, options, expected] of GEOMETRY) {
      const task = new lab.Task(name, options);
      const got = { kind: task.kind(), vocabSize: task.vocabSize(), seqLen: task.seqLen(), numClasses: task.numClasses() };
      for (const [k, v] of Object.entries(expected)) assert.equal(got[k], v, `${name}.${k}`);
      assert.equal(task.name(), name);
      task.delete();
    }
    const defaults = new lab.Task('reverse');
    assert.equal(defaults.seqLen(), 32);  // length 16
    defaults.delete();
  });

  test(`${flavour}: sample is seeded, typed, and has the tensors of its kind`, async () => {
    const lab = await loadLab(flavour);
    const task = new lab.Task('reverse', { length: 4, vocab: 6, seed: 3 });
    const a = task.sample(5, 7), b = task.sample(5, 7);
    assert.deepEqual(a.tokens.shape, [5, 8]);
    assert.ok(a.tokens.data instanceof Int32Array && a.targets.data instanceof Int32Array);
    assert.deepEqual(a, b, 'the same seed gives the same batch');
    assert.equal(a.labels, null);
    assert.equal(a.padding, null);
    for (const [row, targets] of rowsOf(a.tokens).map((r, i) => [r, rowsOf(a.targets)[i]])) {
      assert.equal(row[4], 6, 'SEP after the prompt');
      assert.deepEqual([...targets.subarray(0, 4)], [-1, -1, -1, -1], 'prompt targets are ignored');
      assert.deepEqual([...targets.subarray(4)], [...row.subarray(0, 4)].reverse(), 'the answer is the reversed prompt');
    }
    // The task's own stream: seeded by the `seed` option, successive draws differ.
    const s1 = task.sample(5), s2 = task.sample(5);
    assert.notDeepEqual(s1.tokens.data, s2.tokens.data);
    const again = new lab.Task('reverse', { length: 4, vocab: 6, seed: 3 });
    assert.deepEqual(again.sample(5), s1);
    again.delete();

    const brackets = new lab.Task('brackets', { length: 8, vocab: 2 });
    const c = brackets.sample(16, 1);
    assert.equal(c.targets, null);
    assert.deepEqual(c.labels.shape, [16]);
    assert.ok(c.padding.data instanceof Uint8Array);
    assert.deepEqual(c.padding.shape, [16, 8]);
    for (const label of c.labels.data) assert.ok(label === 0 || label === 1);
    brackets.delete();
    task.delete();
  });

  test(`${flavour}: encode inverts decode for every task`, async () => {
    const lab = await loadLab(flavour);
    for (const [name, options] of GEOMETRY) {
      const task = new lab.Task(name, options);
      const batch = task.sample(4, 11);
      const texts = task.decode(batch.tokens);
      assert.equal(texts.length, 4, `${name}: one string per row`);
      rowsOf(batch.tokens).forEach((row, i) => {
        assert.equal(task.decode(row), texts[i], `${name}: a [T] input gives one string`);
        assert.deepEqual(task.encode(texts[i]), Int32Array.from(row), `${name}: encode(decode(row)) == row for '${texts[i]}'`);
      });
      task.delete();
    }
    const reverse = new lab.Task('reverse', { length: 4, vocab: 6 });
    assert.equal(reverse.decode([3, 1, 4, 0, 6, -1]), '3 1 4 0 | _');
    assert.deepEqual(reverse.encode('  3 1\t4 0 |  '), Int32Array.of(3, 1, 4, 0, 6));
    assert.deepEqual(reverse.encode(''), new Int32Array(0));
    const recall = new lab.Task('assoc_recall', { length: 2, vocab: 4 });
    assert.deepEqual(recall.encode('k1 v2 k0 v3 | k1'), Int32Array.of(1, 6, 0, 7, 8, 1));
    assert.deepEqual(recall.encode('1 6 8'), Int32Array.of(1, 6, 8), 'ids are accepted too');
    const brackets = new lab.Task('brackets', { length: 8, vocab: 2 });
    assert.deepEqual(brackets.encode('( [ ] )..'), Int32Array.of(0, 2, 3, 1, 4, 4));
    const chars = new lab.Task('char_lm', { length: 16 });
    const hello = chars.encode('The cat');
    assert.equal(hello.length, 7);
    assert.equal(chars.decode(hello), 'The cat');
    for (const t of [reverse, recall, brackets, chars]) t.delete();
  });

  test(`${flavour}: bad input throws an Error naming the problem; the module keeps working`, async () => {
    const lab = await loadLab(flavour);
    const task = new lab.Task('reverse', { length: 4, vocab: 6 });
    const chars = new lab.Task('char_lm', { length: 8 });
    const cases = [
      [() => new lab.Task('revers'), /unknown task 'revers'; valid names: copy, reverse/],
      [() => new lab.Task(7), /the task name must be a string/],
      [() => new lab.Task('reverse', { length: 4, size: 3 }), /unknown option 'size' \(valid: length, vocab, k, context, horizon, periods, features, trend, noise, drift, seed\)/],
      [() => new lab.Task('reverse', { length: 0 }), /length must be in \[1, .*got length=0/],
      [() => new lab.Task('reverse', { length: -1 }), /option 'length' must be a non-negative integer/],
      [() => new lab.Task('char_lm', { vocab: 5 }), /option vocab does not apply to this task/],
      [() => new lab.Task('reverse', { k: 2 }), /option k does not apply/],
      [() => new lab.Task('reverse', 'long'), /options must be an object, got string/],
      [() => task.sample(0, 1), /batch_size must be positive, got 0/],
      [() => task.sample(-2), /batchSize must be a non-negative integer/],
      [() => task.sample(1e7, 1), /Task::sample: the batch needs 80000000 .*over the budget/],
      [() => task.sample(1e9, 1), /the batch would overflow the address space/],
      [() => task.sample(2, 'seed'), /seed must be a number, got string/],
      [() => task.decode([3, 7]), /token 7 at position 1 is outside \[0, 7\)/],
      [() => task.decode([3, 1.5]), /tokens\[1\] must be an integer token id/],
      [() => task.decode('3 1'), /tokens must be an Int32Array, an array of integers or \{shape/],
      [() => task.decode({ shape: [2, 2], data: Int32Array.of(1, 2, 3) }), /holds 4 elements but data\.length is 3/],
      [() => task.decode({ shape: [1, 1, 2], data: Int32Array.of(1, 2) }), /must have shape \[T\] or \[B, T\]/],
      [() => task.encode('3 x |'), /'x' is not a token of task 'reverse' \(tokens: 0 1 2 3 4 5 \|; or an id in \[0, 7\)\)/],
      [() => task.encode('3 9'), /'9' is not a token of task 'reverse'/],
      [() => task.encode([3, 1]), /the text must be a string/],
      [() => chars.encode('é'), /character '\\xc3' at position 0 is not in the alphabet of task 'char_lm'/],
    ];
    for (const [call, re] of cases) {
      expectError(assert, call, re);
      assert.equal(task.decode([3, 6]), '3 |', `still working after ${re}`);
    }
    task.delete();
    chars.delete();
  });
}
