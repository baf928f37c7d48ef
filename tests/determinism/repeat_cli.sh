#!/usr/bin/env bash
# Determinism of the attnlab tool: the same command, build and thread count give the same
# numbers on every run. Runs a short training (its per-step CSV log and summary), a trace (the
# demo prints every stage of one attention call) and each experiment in its --quick form (its
# whole result as JSON, which holds everything it prints, and its curves as CSV) twice per
# thread count, and fails on any difference.
# Timings are the only output that may differ; they are masked before the comparison: the
# training summary's rates, the training log's ms column, and in an experiment's JSON the
# columns named "... /s" or "... (ms)" and its "timing" line (and its message).
#
#   tests/determinism/repeat_cli.sh build/attnlab [threads ...]     (default threads: 1 2)
set -euo pipefail
cli=$1
shift
threads=("$@")
(( ${#threads[@]} )) || threads=(1 2)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Drops the last column of tables whose header ends in a rate (".../s") and the heads
# experiment's "; speed from ..." clause, and masks durations ("0.2s", "1m05s") and rates
# ("(189.3 steps/s)") in the training summary.
mask_rates() {
  awk '
    /^$/ { rate = 0 }
    rate && NF > 1 { $NF = ""; print; next }
    $NF ~ /\/s$/ { rate = 1; $NF = ""; print; next }
    { sub(/; speed from .*/, ""); print }
  ' "$1" | sed -E 's/\(([0-9.]+) steps\/s\)/(rate)/g; s/\b[0-9]+m[0-9]+s\b|\b[0-9][0-9.]*s\b/(time)/g'
}

# An experiment's result.json with its wall-time cells, timing line and timing message replaced
# by "(time)".
mask_experiment_json() {
  node -e '
    const fs = require("fs");
    const r = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    r.timing = "(time)";
    if (r.timingMessage) r.timingMessage = "(time)";
    for (const t of r.tables) {
      const timed = t.columns.map((c, i) => (/\/s$|\(ms\)$/.test(c) ? i : -1)).filter((i) => i >= 0);
      for (const row of t.rows) for (const i of timed) row[i] = "(time)";
    }
    fs.writeFileSync(process.argv[1], JSON.stringify(r, null, 1));
  ' "$1"
}

# The training log's last column is the step's wall time in ms: dropped in place.
mask_time_column() {
  awk -F, -v OFS=, 'NR == 1 { timed = $NF == "ms" } { if (timed) NF--; print }' "$1" > "$1.masked"
  mv "$1.masked" "$1"
}

failures=0
# run NAME ARGS...: runs the command twice in fresh folders and compares every output file.
run() {
  local name=$1
  shift
  for pass in a b; do
    mkdir -p "$work/$name.$pass"
    (cd "$work/$name.$pass" && "$cli" "$@" > stdout 2> stderr) || {
      echo "FAIL $name: exit code $? (stderr: $(head -c 400 "$work/$name.$pass/stderr"))"
      failures=$((failures + 1))
      return
    }
    if [[ -f "$work/$name.$pass/result.json" ]]; then
      mask_experiment_json "$work/$name.$pass/result.json"  # stdout prints the same result, timings unmasked
    else
      mask_rates "$work/$name.$pass/stdout" > "$work/$name.$pass/stdout.masked"
    fi
    [[ -f "$work/$name.$pass/log.csv" ]] && mask_time_column "$work/$name.$pass/log.csv"
    rm "$work/$name.$pass/stdout" "$work/$name.$pass/stderr"
  done
  if diff -r "$work/$name.a" "$work/$name.b" > "$work/$name.diff"; then
    echo "same  $name"
  else
    echo "FAIL  $name: two runs differ"
    head -20 "$work/$name.diff"
    failures=$((failures + 1))
  fi
}

# The demo has no --threads flag: it runs on the default pool (all cores).
run demo demo --d-model 64 --heads 4 --kv-heads 2 --pe rope --mask padding \
  --text "the keeper lit the lamp and watched the sea until the morning came"
for t in "${threads[@]}"; do
  run "train-t$t" train --task reverse --length 6 --layers 2 --d-model 32 --heads 4 --steps 30 --batch 8 \
    --eval-every 10 --eval-batches 2 --quiet --log log.csv --save model.safetensors --threads "$t"
  for e in $("$cli" experiment --names); do
    # An experiment that reads files (the shipped models, held-out text) reads them from the
    # repository, as its defaults do from the repository's root; the runs happen elsewhere.
    inputs=()
    help=$("$cli" experiment "$e" --help)
    grep -q -- '--models ' <<< "$help" && inputs+=(--models "$root/models")
    grep -q -- '--data ' <<< "$help" && inputs+=(--data "$root/data")
    run "experiment-$e-t$t" experiment "$e" --quick "${inputs[@]}" --csv curves.csv --json result.json --quiet --threads "$t"
  done
done

if (( failures )); then
  echo "$failures of the commands above gave different numbers on two runs"
  exit 1
fi
