#!/usr/bin/env bash
# --isa on every command that computes (demo, train, eval, generate, experiment) and ATTNLAB_ISA:
# listed by --help with the instruction sets this CPU runs, each one accepted, an unknown one
# refused in one line naming the valid ones (exit 2), and the WebAssembly kernels named in an
# experiment's re-run command with the thread count (where the page shows it), identical with the flag
# and the variable.
# Usage: isa_flag.sh <path to the attnlab executable>
set -euo pipefail
cli=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

for command in demo train eval generate "experiment permutation"; do
  # shellcheck disable=SC2086
  help=$("$cli" $command --help 2>&1)
  grep -q -- "--isa VALUE" <<<"$help" || { echo "attnlab $command --help lacks --isa: $help"; exit 1; }
done
isas=$("$cli" demo --help | sed -n 's/.*kernel instruction set: \([^(]*\) (default.*/\1/p' | tr -d ',')
[[ -n "$isas" ]] || { echo "no instruction sets listed"; exit 1; }

"$cli" train --task reverse --d-model 16 --heads 2 --layers 1 --ff 32 --steps 3 --quiet --save "$dir/lm.safetensors" >/dev/null
for isa in $isas; do
  "$cli" demo --isa "$isa" >/dev/null
  "$cli" eval --model "$dir/lm.safetensors" --batches 1 --isa "$isa" >/dev/null
  "$cli" generate --model "$dir/lm.safetensors" --samples 1 --isa "$isa" >/dev/null
done

for command in demo "train --task reverse --steps 1" "eval --model $dir/lm.safetensors" \
               "generate --model $dir/lm.safetensors" "experiment permutation --quick"; do
  # shellcheck disable=SC2086
  if err=$("$cli" $command --isa avx1024 2>&1); then echo "attnlab $command accepted --isa avx1024"; exit 1; else code=$?; fi
  [[ $code == 2 ]] || { echo "attnlab $command --isa avx1024: exit $code, expected 2"; exit 1; }
  [[ $(wc -l <<<"$err") == 1 ]] || { echo "not one line: $err"; exit 1; }
  grep -q "instruction set 'avx1024' is not available here; valid: " <<<"$err" || { echo "unexpected error: $err"; exit 1; }
done

if grep -qw wasm <<<"$isas"; then
  flag=$("$cli" experiment permutation --quick --isa wasm --threads 1 --quiet)
  env=$(ATTNLAB_ISA=wasm "$cli" experiment permutation --quick --threads 1 --quiet)
  grep -q "^re-run: attnlab experiment permutation .* --isa wasm --threads 1$" <<<"$flag" || { echo "no --isa wasm --threads 1 in: $flag"; exit 1; }
  [[ "$flag" == "$env" ]] || { echo "--isa wasm and ATTNLAB_ISA=wasm differ"; diff <(echo "$flag") <(echo "$env"); exit 1; }
  default=$("$cli" experiment permutation --quick --threads 1 --quiet)
  if grep -q -- "--isa\|--threads" <<<"$(grep "^re-run:" <<<"$default")"; then echo "the CPU's own ISA named in the re-run command"; exit 1; fi
fi
echo ok
