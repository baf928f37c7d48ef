#!/usr/bin/env bash
# attnlab train / eval with --architecture crossmodal on the caption_match task, with the match
# loss and with --loss clip: both train, save, load and evaluate; a crossmodal model on a task
# without captions, another architecture on caption_match and bad crossmodal values are refused.
# Usage: crossmodal.sh <path to the attnlab executable>
set -euo pipefail
# Output is captured before grep -q reads it (see image_architectures.sh).
cli=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

out=$("$cli" train --task caption_match --architecture crossmodal --patch 4 --d-model 16 --heads 2 --ff 32 \
      --layers 1 --steps 5 --quiet --save "$dir/match.safetensors")
grep -q "task caption_match (16x16 images, captions of 4 words, 2 classes), crossmodal with 1 text and 1 image layers" \
  <<<"$out" || { echo "no crossmodal summary in: $out"; exit 1; }
grep -q "common width 16, 2 heads, ff 32, patch 4, loss match" <<<"$out" || { echo "no match loss in: $out"; exit 1; }
grep -q "on task caption_match: loss " <<<"$("$cli" eval --model "$dir/match.safetensors")"

out=$("$cli" train --task caption_match --vocab 4 --architecture crossmodal --loss clip --clip-temperature 0.2 \
      --embed-dim 8 --patch 4 --d-model 16 --heads 2 --ff 32 --layers 1 --steps 5 --quiet --save "$dir/clip.safetensors")
grep -q "common width 8, 2 heads, ff 32, patch 4, loss clip" <<<"$out" || { echo "no clip loss in: $out"; exit 1; }
grep -q "on task caption_match: loss " <<<"$("$cli" eval --model "$dir/clip.safetensors")"

if err=$("$cli" train --task caption_match --steps 1 2>&1); then echo "a transformer accepted captioned images"; exit 1; fi
grep -q "reads images with captions and needs a crossmodal model" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
if err=$("$cli" train --task shapes --architecture crossmodal --steps 1 2>&1); then echo "crossmodal accepted shapes"; exit 1; fi
grep -q "a crossmodal model reads captions; vocab_size must be positive" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
if err=$("$cli" train --task caption_match --architecture crossmodal --loss triplet --steps 1 2>&1); then
  echo "loss triplet accepted"; exit 1
fi
grep -q "unknown loss 'triplet'; valid: match, clip" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
if err=$("$cli" train --task caption_match --architecture crossmodal --embed-dim 5 --heads 2 --steps 1 2>&1); then
  echo "embed-dim 5 with 2 heads accepted"; exit 1
fi
grep -q "the common width E (embed_dim 5" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
echo ok
