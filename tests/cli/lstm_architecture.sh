#!/usr/bin/env bash
# attnlab train / eval / generate with --architecture lstm: a decoder and a classifier train,
# save, load and report their parameter counts; an LSTM refuses Transformer-only switches and
# generate refuses a classifier. Usage: lstm_architecture.sh <path to the attnlab executable>
set -euo pipefail
# Output is captured before grep -q reads it: grep -q stops at the first match, and with pipefail
# a writer still writing into the closed pipe would fail the test.
cli=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

out=$("$cli" train --task reverse --architecture lstm --layers 1 --d-model 16 --steps 5 --quiet --save "$dir/lm.safetensors")
grep -q "lstm decoder with 1 layers, hidden 16; " <<<"$out" || { echo "no LSTM summary in: $out"; exit 1; }
grep -q " parameters; " <<<"$out" || { echo "no parameter count in: $out"; exit 1; }
grep -q "on task reverse: loss " <<<"$("$cli" eval --model "$dir/lm.safetensors")"
grep -q "^1 2 3 | " <<<"$("$cli" generate --model "$dir/lm.safetensors" --prompt "1 2 3 10" --max-new 3)"

"$cli" train --task brackets --architecture lstm --d-model 16 --steps 5 --quiet --save "$dir/cls.safetensors" >/dev/null
grep -q "on task brackets: loss " <<<"$("$cli" eval --model "$dir/cls.safetensors")"
if err=$("$cli" generate --model "$dir/cls.safetensors" 2>&1); then echo "generate accepted a classifier"; exit 1; fi
grep -q "holds an encoder classifier, not a decoder" <<<"$err" || { echo "unexpected error: $err"; exit 1; }

if err=$("$cli" train --task reverse --architecture lstm --dropout 0.1 --steps 1 2>&1); then echo "dropout accepted"; exit 1; fi
grep -q "an lstm has no dropout, got dropout 0.1" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
if err=$("$cli" train --task reverse --architecture gru --steps 1 2>&1); then echo "gru accepted"; exit 1; fi
grep -q "unknown architecture 'gru'; valid: transformer, lstm" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
echo ok
