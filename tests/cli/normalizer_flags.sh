#!/usr/bin/env bash
# attnlab train with --normalizer and --tie-qk (and demo with --normalizer): both flags are listed by --help (they come from
# the ModelConfig table), a sigmoid model with tied W_Q = W_K trains, saves and evaluates, its
# checkpoint records both, the demo names its normaliser in its first line, and bad values are
# refused naming the valid ones.
# Usage: normalizer_flags.sh <path to the attnlab executable>
set -euo pipefail
# Output is captured before grep -q reads it: grep -q stops at the first match, and with pipefail
# a writer still writing into the closed pipe would fail the test.
cli=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

help=$("$cli" train --help 2>&1)
grep -q -- "--normalizer" <<<"$help" || { echo "--normalizer missing from: $help"; exit 1; }
grep -q -- "--tie-qk" <<<"$help" || { echo "--tie-qk missing from: $help"; exit 1; }

"$cli" train --task reverse --d-model 16 --heads 2 --layers 1 --ff 32 --steps 5 --quiet --normalizer sigmoid \
    --tie-qk --save "$dir/lm.safetensors" >/dev/null
grep -q "on task reverse: loss " <<<"$("$cli" eval --model "$dir/lm.safetensors")"
grep -a -q '"normalizer":"sigmoid"' "$dir/lm.safetensors" || { echo "no normalizer in the metadata"; exit 1; }
grep -a -q '"tie_qk":"true"' "$dir/lm.safetensors" || { echo "no tie_qk in the metadata"; exit 1; }
if grep -a -q 'k_proj' "$dir/lm.safetensors"; then echo "a tied checkpoint stores k_proj"; exit 1; fi
"$cli" train --task brackets --d-model 16 --heads 2 --layers 1 --ff 32 --steps 5 --quiet --normalizer relu >/dev/null

out=$("$cli" demo --normalizer sigmoid)
head -1 <<<"$out" | grep -q "normalizer sigmoid" || { echo "demo's header does not name the normalizer: $(head -1 <<<"$out")"; exit 1; }
grep -q -- "--normalizer" <<<"$("$cli" demo --help 2>&1)" || { echo "demo --help lacks --normalizer"; exit 1; }
if err=$("$cli" demo --normalizer tanh 2>&1); then echo "demo accepted tanh"; exit 1; fi
grep -q "unknown normalizer 'tanh'" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
if err=$("$cli" train --task reverse --normalizer tanh --steps 1 2>&1); then echo "tanh accepted"; exit 1; fi
grep -q "unknown normalizer 'tanh'; valid: softmax, sigmoid, relu" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
if err=$("$cli" train --task reverse --tie-qk --kv-heads 2 --steps 1 2>&1); then echo "tie-qk with GQA accepted"; exit 1; fi
grep -q "tie_qk needs num_kv_heads = num_heads" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
echo ok
