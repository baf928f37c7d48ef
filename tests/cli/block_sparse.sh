#!/usr/bin/env bash
# attnlab train / eval / generate with --variant block_sparse: the layout flags are listed by
# --help, a decoder trains with them, its checkpoint records them and reloads for eval and
# generate; a block size of 0 and a window with block_sparse are refused naming the values.
# Usage: block_sparse.sh <path to the attnlab executable>
set -euo pipefail
# Output is captured before grep -q reads it: grep -q stops at the first match, and with pipefail
# a writer still writing into the closed pipe would fail the test.
cli=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

help=$("$cli" train --help)
for flag in --variant --block-size --window-blocks --global-blocks --random-blocks --sparse-seed; do
  grep -q -- "$flag" <<<"$help" || { echo "train --help does not list $flag"; exit 1; }
done

"$cli" train --task reverse --variant block_sparse --block-size 8 --window-blocks 1 --global-blocks 1 \
  --random-blocks 1 --sparse-seed 3 --steps 5 --quiet --save "$dir/lm.safetensors" >/dev/null
meta=$(head -c 16384 "$dir/lm.safetensors" | tr -d '\0')
for kv in '"variant":"block_sparse"' '"sparse_block_size":"8"' '"sparse_seed":"3"'; do
  grep -q "$kv" <<<"$meta" || { echo "the checkpoint metadata lacks $kv"; exit 1; }
done
grep -q "on task reverse: loss " <<<"$("$cli" eval --model "$dir/lm.safetensors")"
grep -q "^1 2 3 | " <<<"$("$cli" generate --model "$dir/lm.safetensors" --prompt "1 2 3 10" --max-new 3)"

if err=$("$cli" train --task reverse --variant block_sparse --block-size 0 --steps 1 2>&1); then
  echo "block size 0 accepted"; exit 1
fi
grep -q "sparse_block_size must be positive, got 0" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
if err=$("$cli" train --task reverse --variant block_sparse --window 4 --steps 1 2>&1); then
  echo "block_sparse with a window accepted"; exit 1
fi
grep -q "variant block_sparse with attention_window 4" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
echo ok
