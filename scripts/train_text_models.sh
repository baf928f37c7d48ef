#!/usr/bin/env bash
# Trains the language models attnlab ships in models/, one seeded 2-thread command each, and
# writes beside each its held-out figures (<name>.json: loss in nats per token, bits per
# character for tang, bits per byte for the English models; train/text_corpus.hpp says how).
# Needs the corpora of scripts/fetch_data.sh and the native build (build/attnlab).
#
#   scripts/train_text_models.sh                 # all four: tang brown induction-2l induction-1l
#   scripts/train_text_models.sh tang            # one
#   STEPS=3 OUT=/tmp/m scripts/train_text_models.sh brown   # a short run elsewhere (the tests' check)
#
#   tang          decoder on regulated Tang poems, simplified characters, one character a token
#   brown         decoder on the Brown corpus, byte-level BPE of 2048 merges learned from it
#   induction-2l  2-layer attention-only decoder (no feed-forward) on the Brown corpus's BPE
#   induction-1l  its 1-layer twin
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli=${ATTNLAB:-$root/build/attnlab}
out=${OUT:-$root/models}
[[ -x "$cli" ]] || { echo "train_text_models: $cli is missing (build the native CLI first)" >&2; exit 1; }
mkdir -p "$out"

# The flags every model shares: 2 threads, seeded, rope positions, tied embeddings, fp16 storage.
common=(--threads 2 --seed 1 --pe rope --tie --save-f16 --data "$root/data" --eval-every 0 --eval-batches 1 --quiet)

# steps <default>: the run's steps, or $STEPS when set.
steps() { echo "${STEPS:-$1}"; }

train() {
  local name=$1; shift
  echo "train_text_models: $name"
  "$cli" train "$@" "${common[@]}" --save "$out/$name.safetensors" --stats "$out/$name.json"
}

model_tang() {
  train tang --corpus tang --chars 4000 --length 72 --layers 4 --heads 4 --d-model 128 --ff 512 \
    --batch 32 --lr 0.004 --warmup 50 --steps "$(steps 500)"
}
model_brown() {
  train brown --corpus brown --merges 2048 --length 128 --layers 4 --heads 4 --d-model 128 --ff 512 \
    --batch 16 --lr 0.004 --warmup 50 --steps "$(steps 500)"
}
model_induction-2l() {
  train induction-2l --corpus brown --merges 2048 --length 128 --layers 2 --heads 4 --d-model 128 \
    --attention-only --batch 16 --lr 0.004 --warmup 50 --steps "$(steps 1000)"
}
model_induction-1l() {
  train induction-1l --corpus brown --merges 2048 --length 128 --layers 1 --heads 4 --d-model 128 \
    --attention-only --batch 16 --lr 0.004 --warmup 50 --steps "$(steps 1000)"
}

models=("$@")
[[ ${#models[@]} -gt 0 ]] || models=(tang brown induction-2l induction-1l)
for m in "${models[@]}"; do
  declare -F "model_$m" > /dev/null || { echo "train_text_models: unknown model '$m' (tang, brown, induction-2l, induction-1l)" >&2; exit 2; }
  "model_$m"
done
