// Train on text through the JavaScript API: Task.fromText reads a corpus from bytes (the page's
// training text or the reader's file) with the native recipe (train/text_corpus.hpp: documents at
// blank lines, every tenth held out, characters or a BPE learned from the text), a decoder trains
// on it and writes text (Model.continueText), and its checkpoint carries the tokenizer. Bad input
// is an Error naming the values, and a refused call leaves the module's heap as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { FLAVOURS, ROOT, assertSameHeap, heapSnapshot, loadLab } from './harness.mjs';

const CLI = path.join(ROOT, 'build/attnlab');
const utf8 = (s) => new TextEncoder().encode(s);

// Twelve short "poems": documents 0..11, the tenth (index 9) held out, as the native recipe does.
const LINES = ['白日依山尽，', '黄河入海流。', '欲穷千里目，', '更上一层楼。', '床前明月光，', '疑是地上霜。'];
const POEMS = Array.from({ length: 12 }, (_, i) => `${LINES[i % 6]}${LINES[(i + 1) % 6]}\n${LINES[(i + 2) % 6]}${LINES[(i + 3) % 6]}\n`);
const CORPUS = POEMS.join('\n');

function decoderFor(lab, task) {
  return new lab.Model({ kind: 'decoder', vocabSize: task.vocabSize(), maxLen: task.seqLen(), dModel: 16, numHeads: 2, numLayers: 1, positional: 'rope', tieWeights: true, seed: 1 });
}

// Writes a safetensors file: `target`'s tensors with `source`'s tokenizer in the metadata.
function withTokenizerOf(target, source) {
  const read = (bytes) => {
    const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
    return { header: JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))), data: bytes.subarray(8 + n) };
  };
  const t = read(target), s = read(source);
  t.header.__metadata__ = { ...(t.header.__metadata__ ?? {}), tokenizer: s.header.__metadata__.tokenizer };
  let json = utf8(JSON.stringify(t.header));
  const padded = new Uint8Array(Math.ceil(json.length / 8) * 8).fill(0x20);
  padded.set(json);
  json = padded;
  const out = new Uint8Array(8 + json.length + t.data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  out.set(t.data, 8 + json.length);
  return out;
}

for (const flavour of FLAVOURS) {
  test(`${flavour}: a char corpus from bytes trains a decoder that writes text and saves its tokenizer`, async () => {
    const lab = await loadLab(flavour);
    const task = lab.Task.fromText(utf8(CORPUS), { name: 'tang', tokens: 'char', length: 32, seed: 3 });
    const chars = new Set(Array.from(POEMS.filter((_, i) => i !== 9).join('')));
    assert.equal(task.vocabSize(), 3 + chars.size, '<unk> <bos> <eos> and every character of the training poems');
    assert.equal(task.seqLen(), 32);
    assert.equal(task.name(), 'tang');
    assert.equal(task.prompt(), POEMS[9].slice(0, 6), 'the opening (6 characters after <bos>) of the held-out poem');
    assert.equal(task.decode(task.encode('白日依山尽')), '白日依山尽');
    const tok = task.tokenizer();
    assert.equal(tok.kind(), 'char');
    assert.equal(tok.vocabSize(), task.vocabSize());
    const b = task.sample(4, 1);
    assert.deepEqual(b.tokens.shape, [4, 32]);
    for (let r = 0; r < 4; r++) assert.equal(b.tokens.data[r * 32], tok.beginId(), 'a poem of 28 tokens is one window from its start: <bos> first');

    const model = decoderFor(lab, task);
    model.setTokenizer(tok);
    tok.delete();
    const trainer = new lab.Trainer(model, task, { lr: 1e-2, batchSize: 8, warmupSteps: 0, seed: 1 });
    const first = trainer.step(1).loss;
    let last = first;
    for (let i = 0; i < 30; i++) last = trainer.step(1).loss;
    assert.ok(last < first, `the loss falls: ${first} -> ${last}`);
    const text = model.continueText(task.prompt(), 12, { temperature: 0.8, seed: 1 });
    assert.equal(typeof text, 'string');
    assert.equal(text, model.continueText(task.prompt(), 12, { temperature: 0.8, seed: 1 }), 'seeded: the same sample twice');
    assert.ok(Array.from(text).length <= 12);
    const loaded = lab.Model.load(model.save({ task: 'text', corpus: 'tang' }));
    assert.equal(loaded.continueText('白日', 8, { temperature: 0 }), model.continueText('白日', 8, { temperature: 0 }));
    assert.equal(lab.Model.checkpointNotes(loaded.save({ task: 'text' })).task, 'text');
    for (const o of [trainer, loaded, model, task]) o.delete();
  });

  test(`${flavour}: a BPE corpus learns its merges from the text, as the native CLI does`, async () => {
    const lab = await loadLab(flavour);
    const english = Array.from({ length: 20 }, (_, i) => `The jury said it was the ${i % 2 ? 'best' : 'worst'} of times.\nThe city was quiet.\n`).join('\n');
    const task = lab.Task.fromText(english, { name: 'prose', tokens: 'bpe', merges: 40, length: 16 });
    const tok = task.tokenizer();
    assert.equal(tok.kind(), 'byte_bpe');
    assert.ok(task.vocabSize() > 256 && task.vocabSize() <= 256 + 40, `256 bytes plus at most 40 merges: ${task.vocabSize()}`);
    assert.equal(task.decode(task.encode('The jury said')), 'The jury said');
    assert.ok(task.encode('The jury said').length < 'The jury said'.length, 'merges join bytes');
    assert.equal(task.prompt(), tok.decode(tok.encode(english.split('\n\n')[9]).slice(0, 7)));
    if (fs.existsSync(CLI) && flavour === 'single') {
      // The native recipe on the same text gives the same tokenizer (the same ids for a sentence).
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'text-task-'));
      fs.writeFileSync(path.join(dir, 'prose.txt'), english);
      execFileSync(CLI, ['train', '--corpus', path.join(dir, 'prose.txt'), '--tokens', 'bpe', '--merges', '40', '--length', '16',
        '--steps', '1', '--d-model', '16', '--heads', '2', '--layers', '1', '--quiet', '--save', path.join(dir, 'm.safetensors')]);
      const ids = JSON.parse(execFileSync(CLI, ['tokenize', '--model', path.join(dir, 'm.safetensors'), '--text', 'The jury said it was']).toString());
      assert.deepEqual([...task.encode('The jury said it was')], ids);
      fs.rmSync(dir, { recursive: true });
    }
    tok.delete();
    task.delete();
  });

  test(`${flavour}: bad text, sizes and checkpoints are Errors naming the values; nothing is left behind`, async () => {
    const lab = await loadLab(flavour);
    const before = await heapSnapshot(lab);
    assert.throws(() => lab.Task.fromText(new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]), { length: 8 }), /not valid UTF-8 at byte 3 \(byte value 233\)/);
    assert.throws(() => lab.Task.fromText(new Uint8Array(0), { length: 8 }), /has no text \(0 bytes/);
    assert.throws(() => lab.Task.fromText('\n \n\t\n', { length: 8 }), /has no text \(5 bytes, all blank\)/);
    assert.throws(() => lab.Task.fromText('a\n', { length: 64 }), /the corpus has 3 tokens, fewer than one sequence of 65/);
    assert.throws(() => lab.Task.fromText(CORPUS, { chars: 0 }), /chars must be in 1 \.\. 65536, got 0/);
    assert.throws(() => lab.Task.fromText(CORPUS, { tokens: 'bpe', merges: 70000 }), /merges must be in 1 \.\. 65536, got 70000/);
    assert.throws(() => lab.Task.fromText(CORPUS, { tokens: 'words' }), /tokens must be char or bpe, got 'words'/);
    assert.throws(() => lab.Task.fromText(CORPUS, { length: 0 }), /sequence length must be in 1 \.\. \d+, got 0/);
    assert.throws(() => lab.Task.fromText(CORPUS, { context: 8 }), /context/);
    assert.throws(() => lab.Task.fromText(42, {}), /Task\.fromText: the text/);
    const copy = new lab.Task('copy', { length: 4, vocab: 6 });
    assert.equal(copy.tokenizer(), null);
    assert.throws(() => copy.prompt(), /is not a text task/);
    copy.delete();
    // A checkpoint whose tokenizer has more ids than its embedding has rows: refused, both sizes named.
    const small = new lab.Model({ kind: 'decoder', vocabSize: 20, dModel: 8, numHeads: 2, numLayers: 1 });
    const tang = new Uint8Array(fs.readFileSync(path.join(ROOT, 'models/tang.safetensors')));
    const bad = withTokenizerOf(small.save(), tang);
    small.delete();
    assert.throws(() => lab.Model.load(bad), /the char tokenizer has 4003 token ids, more than the model's vocab_size of 20/);
    const plain = new lab.Model({ kind: 'decoder', vocabSize: 20, dModel: 8, numHeads: 2, numLayers: 1 });
    assert.throws(() => plain.continueText('ab', 2, {}), /has no tokenizer|carries no tokenizer/);
    plain.delete();
    assertSameHeap(assert, before, await heapSnapshot(lab), 'after the refused calls');
  });
}
