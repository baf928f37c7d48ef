#!/usr/bin/env bash
# The article's section 6.3 on the command line: a decoder with one unscaled 32-dimensional head
# (scores past 11 from the first step) trained with attention in fp16 and the naive softmax
# computed in fp16 stops on a NaN loss; the same softmax computed in fp32 trains; the flags
# round-trip through a checkpoint; bad values are named; demo prints the numerics.
# Usage: precision_story.sh <path to the attnlab executable>
set -euo pipefail
cli=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
story=(train --task copy --length 6 --vocab 6 --d-model 32 --heads 1 --scale off --warmup 0 --steps 20 --quiet
       --threads 1 --precision fp16 --unstable-softmax)

if err=$("$cli" "${story[@]}" --softmax-precision same 2>&1); then echo "the naive fp16 softmax trained: $err"; exit 1; fi
grep -q "attention in fp16, softmax same, naive exp(s)/sum exp(s); loss scale 1" <<<"$err" || { echo "no summary in: $err"; exit 1; }
grep -q "the loss is nan at step 0" <<<"$err" || { echo "unexpected error: $err"; exit 1; }

out=$("$cli" "${story[@]}" --softmax-precision fp32 --loss-scale dynamic --save "$dir/fp16.safetensors")
grep -q "attention in fp16, softmax fp32, naive exp(s)/sum exp(s); loss scale dynamic" <<<"$out" || { echo "no summary in: $out"; exit 1; }
grep -q "^done: 20 steps" <<<"$out" || { echo "did not finish: $out"; exit 1; }
grep -q "^dynamic loss scale: " <<<"$out" || { echo "no loss scale report: $out"; exit 1; }
out=$("$cli" eval --model "$dir/fp16.safetensors")
grep -q "on task copy: loss " <<<"$out" || { echo "eval failed: $out"; exit 1; }

if err=$("$cli" train --task copy --precision fp8 --steps 1 2>&1); then echo "fp8 accepted"; exit 1; fi
grep -q "unknown precision 'fp8'; valid: fp32, fp16, bf16" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
if err=$("$cli" train --task copy --loss-scale fast --steps 1 2>&1); then echo "loss scale 'fast' accepted"; exit 1; fi
grep -q "loss scale must be a positive number or 'dynamic', got 'fast'" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
help=$("$cli" train --help)  # captured first: grep -q would close the pipe early (pipefail)
grep -q -- "--precision VALUE" <<<"$help" || { echo "--precision missing from train --help"; exit 1; }

out=$("$cli" demo --precision fp16 --softmax-precision same --unstable-softmax --scale 40)
grep -q "^== numerics in fp16 (softmax same, naive)" <<<"$out" || { echo "no numerics table: $out"; exit 1; }
grep -qE "^weights +[^ ]+ +[0-9]+ +[0-9]+ +[1-9]" <<<"$out" || { echo "no NaN weights at scale 40: $out"; exit 1; }
echo ok
