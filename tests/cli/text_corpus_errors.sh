#!/usr/bin/env bash
# Text corpora and text checkpoints on the command line, refused with one line naming the values
# (exit 2): a corpus that is not UTF-8 (the byte offset and its value), empty (its size), or
# shorter than one sequence (both counts); chars or merges out of range (the range); a checkpoint
# whose tokenizer has more ids than its embedding has rows (both sizes). And `attnlab corpus`,
# which writes the training documents the page's lab trains on.
# Usage: text_corpus_errors.sh <attnlab executable> <source dir>
set -euo pipefail
cli=$1
root=$2
[[ -f "$root/data/derived/opencc_chars.txt" ]] || { echo "$root/data is missing its corpora: run scripts/fetch_data.sh"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

refused() {
  local want=$1; shift
  local status=0
  "$@" > "$dir/out" 2> "$dir/err" || status=$?
  [[ $status -eq 2 ]] || { echo "expected exit 2 from: $*, got $status"; cat "$dir/err"; exit 1; }
  [[ $(wc -l < "$dir/err") -eq 1 ]] || { echo "expected one line from: $*"; cat "$dir/err"; exit 1; }
  grep -qF -- "$want" "$dir/err" || { echo "expected '$want' from: $*"; cat "$dir/err"; exit 1; }
}

printf 'caf\xe9\n' > "$dir/latin1.txt"
refused "is not valid UTF-8 at byte 3 (byte value 233)" "$cli" train --corpus "$dir/latin1.txt" --steps 1
: > "$dir/zero.txt"
refused "has no text (0 bytes" "$cli" train --corpus "$dir/zero.txt" --steps 1
printf ' \n\t\n' > "$dir/blank.txt"
refused "has no text (4 bytes, all blank)" "$cli" train --corpus "$dir/blank.txt" --steps 1
printf 'a\n' > "$dir/short.txt"
refused "the corpus has 3 tokens, fewer than one sequence of 65" "$cli" train --corpus "$dir/short.txt" --steps 1 --length 64
# Vocabulary sizes out of range name the range.
refused "merges must be in 1 .. 65536, got 0" "$cli" train --corpus brown --merges 0 --steps 1 --data "$root/data"
refused "merges must be in 1 .. 65536, got 70000" "$cli" train --corpus "$dir/short.txt" --tokens bpe --merges 70000 --steps 1
refused "chars must be in 1 .. 65536, got 2000000" "$cli" train --corpus "$dir/short.txt" --chars 2000000 --steps 1
# A checkpoint whose tokenizer has more ids than its embedding has rows: refused, both sizes named.
"$cli" train --task copy --vocab 40 --length 6 --steps 1 --d-model 16 --heads 2 --layers 1 --quiet \
  --save "$dir/small.safetensors" > /dev/null
node "$root/tests/cli/swap_tokenizer.mjs" "$dir/small.safetensors" "$root/models/tang.safetensors" "$dir/mismatch.safetensors"
refused "the char tokenizer has 4003 token ids, more than the model's vocab_size of 41" \
  "$cli" generate --model "$dir/mismatch.safetensors" --prompt "白日" --max-new 2
refused "the char tokenizer has 4003 token ids, more than the model's vocab_size of 41" \
  "$cli" eval --model "$dir/mismatch.safetensors"

# attnlab corpus: the training documents the page's lab trains on, a blank line between them.
"$cli" corpus --corpus tang --data "$root/data" --out "$dir/tang.txt" | grep -q "documents"
want=$(node -e "const s=require('$root/models/tang.json');console.log(s.train_documents)")
got=$(awk 'BEGIN{RS="";n=0}{n++}END{print n}' "$dir/tang.txt")
[[ "$got" == "$want" ]] || { echo "attnlab corpus tang: $got documents, tang.json says $want"; exit 1; }
head -c 64 "$dir/tang.txt" | grep -q "，" || { echo "attnlab corpus tang: no verse"; exit 1; }
# --max-bytes: every k-th document, the smallest k that fits (the page's compact training text).
"$cli" corpus --corpus brown --data "$root/data" --out "$dir/brown.txt" --max-bytes 1500000 | grep -q "of 475 documents (every 4)"
[[ $(stat -c %s "$dir/brown.txt") -le 1500000 ]] || { echo "attnlab corpus --max-bytes: $(stat -c %s "$dir/brown.txt") bytes"; exit 1; }
refused "one document alone makes" "$cli" corpus --corpus brown --data "$root/data" --out "$dir/b" --max-bytes 10
refused "the corpus must be tang or brown, got 'x.txt'" "$cli" corpus --corpus x.txt --out "$dir/x" --data "$root/data"
refused "--out FILE is required" "$cli" corpus --corpus tang
echo "text corpus errors ok"
