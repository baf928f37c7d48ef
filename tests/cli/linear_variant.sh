#!/usr/bin/env bash
# attnlab train / eval / generate with --variant linear: the flag is listed by --help, a decoder
# trains with falling loss, saves (the checkpoint records the variant), evaluates and generates
# from its recurrent state; a classifier trains; a window with linear attention is refused with
# the reason. Usage: linear_variant.sh <path to the attnlab executable>
set -euo pipefail
# Output is captured before grep -q reads it: grep -q stops at the first match, and with pipefail
# a writer still writing into the closed pipe would fail the test.
cli=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

grep -q -- "--variant" <<<"$("$cli" train --help)" || { echo "--variant missing from train --help"; exit 1; }
"$cli" train --task reverse --variant linear --layers 1 --d-model 16 --heads 2 --steps 40 --eval-every 0 --quiet \
  --log "$dir/log.csv" --save "$dir/lm.safetensors" >/dev/null
first=$(sed -n 2p "$dir/log.csv" | cut -d, -f2)
last=$(tail -n 1 "$dir/log.csv" | cut -d, -f2)
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }' || { echo "loss did not fall: $first -> $last"; exit 1; }
grep -aq '"variant":"linear"' "$dir/lm.safetensors" || { echo "the checkpoint does not record variant linear"; exit 1; }
grep -q "on task reverse: loss " <<<"$("$cli" eval --model "$dir/lm.safetensors")"
grep -q "^1 2 3 | " <<<"$("$cli" generate --model "$dir/lm.safetensors" --prompt "1 2 3 10" --max-new 3)"
"$cli" train --task brackets --variant linear --d-model 16 --heads 2 --steps 5 --quiet >/dev/null

if err=$("$cli" train --task reverse --variant linear --window 4 --steps 1 2>&1); then echo "window accepted"; exit 1; fi
grep -q "variant linear cannot use attention_window 4" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
echo ok
