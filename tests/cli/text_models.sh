#!/usr/bin/env bash
# The shipped text models on the command line: each training command of
# scripts/train_text_models.sh, run for a few steps twice, writes the same bytes; attnlab generate
# continues prompts of the committed models (tang in either script, answering in the prompt's);
# attnlab eval restates a committed model's held-out loss; bad corpora are one-line refusals.
# Usage: text_models.sh <attnlab executable> <source dir>
set -euo pipefail
cli=$1
root=$2
[[ -f "$root/data/derived/opencc_chars.txt" ]] || { echo "$root/data is missing its corpora: run scripts/fetch_data.sh"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

refused() {
  local want=$1; shift
  local status=0
  "$@" > "$dir/out" 2> "$dir/err" || status=$?
  [[ $status -eq 2 ]] || { echo "expected exit 2 from: $*, got $status"; cat "$dir/err"; exit 1; }
  [[ $(wc -l < "$dir/err") -eq 1 ]] || { echo "expected one line from: $*"; cat "$dir/err"; exit 1; }
  grep -qF -- "$want" "$dir/err" || { echo "expected '$want' from: $*"; cat "$dir/err"; exit 1; }
}

# Each committed command for two steps, twice: bit for bit.
for m in tang brown induction-2l induction-1l; do
  STEPS=2 OUT="$dir/a" ATTNLAB="$cli" bash "$root/scripts/train_text_models.sh" "$m" > "$dir/log_a"
  STEPS=2 OUT="$dir/b" ATTNLAB="$cli" bash "$root/scripts/train_text_models.sh" "$m" > "$dir/log_b"
  cmp "$dir/a/$m.safetensors" "$dir/b/$m.safetensors" || { echo "$m: two runs differ"; exit 1; }
  grep -q "held-out:" "$dir/log_a" || { echo "$m: no held-out line"; cat "$dir/log_a"; exit 1; }
done

# generate: the prompt comes back first, then the continuation (greedy: the same twice).
tang=$root/models/tang.safetensors
out=$("$cli" generate --model "$tang" --prompt "白日依山尽，" --max-new 40)
[[ "$out" == 白日依山尽，* ]] || { echo "tang: $out"; exit 1; }
[[ "$out" == "$("$cli" generate --model "$tang" --prompt "白日依山尽，" --max-new 40)" ]]
trad=$("$cli" generate --model "$tang" --prompt "白日依山盡，" --max-new 40)
[[ "$trad" == 白日依山盡，* && "$trad" != "$out" ]] || { echo "tang, traditional: $trad"; exit 1; }
sampled=$("$cli" generate --model "$tang" --prompt "白日依山尽，" --max-new 40 --temperature 1 --seed 3)
[[ "$sampled" == 白日依山尽，* ]]
brown=$("$cli" generate --model "$root/models/brown.safetensors" --prompt "The jury said" --max-new 12)
[[ "$brown" == "The jury said"* && ${#brown} -gt 16 ]] || { echo "brown: $brown"; exit 1; }
"$cli" generate --model "$root/models/induction-2l.safetensors" --prompt "Mr. Dursley said" --max-new 8 > /dev/null

# eval restates the .json's held-out loss (4 decimals).
want=$(node -e "const s=require('$root/models/induction-1l.json');console.log(s.heldout_loss_nats_per_token.toFixed(4))")
"$cli" eval --model "$root/models/induction-1l.safetensors" --data "$root/data" | grep -qF "loss $want nats/token" ||
  { echo "eval does not restate $want"; "$cli" eval --model "$root/models/induction-1l.safetensors" --data "$root/data"; exit 1; }

# Refusals: a corpus file that is not UTF-8, empty, or shorter than one sequence.
printf 'caf\xe9\n' > "$dir/latin1.txt"
refused "not valid UTF-8" "$cli" train --corpus "$dir/latin1.txt" --steps 1
printf '\n\n' > "$dir/empty.txt"
refused "has no text" "$cli" train --corpus "$dir/empty.txt" --steps 1
printf 'a\n' > "$dir/short.txt"
refused "fewer than one sequence" "$cli" train --corpus "$dir/short.txt" --steps 1 --length 64
refused "give --task or --corpus" "$cli" train --corpus tang --task copy --steps 1 --data "$root/data"
refused "chars must be" "$cli" train --corpus tang --chars 0 --steps 1 --data "$root/data"
echo "text models ok"
