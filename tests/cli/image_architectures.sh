#!/usr/bin/env bash
# attnlab train / eval with --architecture vit and swin on the shapes task: both train, save,
# load and evaluate; a token architecture on images, an image architecture on tokens and
# switches an image model cannot honour are refused.
# Usage: image_architectures.sh <path to the attnlab executable>
set -euo pipefail
# Output is captured before grep -q reads it: grep -q stops at the first match, and with pipefail
# a writer still writing into the closed pipe would fail the test.
cli=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

out=$("$cli" train --task shapes --architecture vit --patch 4 --d-model 16 --heads 2 --ff 32 --steps 5 --quiet \
      --save "$dir/vit.safetensors")
grep -q "task shapes (16x16 images, 6 classes), vit with 2 layers, d_model 16" <<<"$out" || { echo "no ViT summary in: $out"; exit 1; }
grep -q "patch 4, pe learned" <<<"$out" || { echo "a ViT without --pe does not learn its positions: $out"; exit 1; }
grep -q "on task shapes: loss " <<<"$("$cli" eval --model "$dir/vit.safetensors")"

out=$("$cli" train --task shapes --length 32 --vocab 4 --architecture swin --patch 4 --swin-window 4 \
      --d-model 16 --heads 2 --ff 32 --steps 5 --quiet --save "$dir/swin.safetensors")
grep -q "task shapes (32x32 images, 4 classes), swin with 2 layers per stage" <<<"$out" || { echo "no Swin summary in: $out"; exit 1; }
grep -q "patch 4, pe none" <<<"$out" || { echo "a Swin without --pe adds absolute positions: $out"; exit 1; }
grep -q "on task shapes: loss " <<<"$("$cli" eval --model "$dir/swin.safetensors")"

if err=$("$cli" train --task shapes --steps 1 2>&1); then echo "a transformer accepted images"; exit 1; fi
grep -q "transformer reads tokens; an image task needs architecture vit or swin" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
if err=$("$cli" train --task brackets --architecture vit --steps 1 2>&1); then echo "a vit accepted tokens"; exit 1; fi
grep -q "image_size and patch_size > 0" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
if err=$("$cli" train --task shapes --architecture swin --pooling cls --steps 1 2>&1); then echo "swin accepted cls"; exit 1; fi
grep -q "pooling cls does not apply" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
if err=$("$cli" train --task shapes --architecture vit --patch 5 --steps 1 2>&1); then echo "patch 5 accepted"; exit 1; fi
grep -q "patch_size (5) must divide image_size (16)" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
echo ok
