#!/usr/bin/env bash
# Runs every experiment of `attnlab experiment` and writes README's experiments table (markdown)
# to stdout, one row per experiment: its name, the article section, the claim, what this run
# measured (the experiment's own conclusion, computed from its numbers) and the command that
# repeats it. No number in the table is typed by hand.
#
#   scripts/experiments_table.sh                 the full runs (each a few minutes on 2 threads)
#   scripts/experiments_table.sh --quick         the --quick forms (seconds each)
#   options: --cli PATH (default build/attnlab), --threads N (default 2), --only NAME[,NAME]
# Progress goes to stderr; the JSON results are kept in a temporary folder and removed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli=$root/build/attnlab
threads=2
quick=()
only=""
while (( $# )); do
  case "$1" in
    --quick) quick=(--quick) ;;
    --cli) cli=$2; shift ;;
    --threads) threads=$2; shift ;;
    --only) only=$2; shift ;;
    *) echo "experiments_table: unknown option '$1' (valid: --quick, --cli PATH, --threads N, --only NAMES)" >&2; exit 2 ;;
  esac
  shift
done
[[ -x "$cli" ]] || { echo "experiments_table: no attnlab tool at $cli (build it: cmake --build build --target attnlab_cli)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
names=$("$cli" experiment --names)
[[ -n "$only" ]] && names=$(tr ',' '\n' <<< "$only")
for name in $names; do
  echo "experiments_table: $name ${quick[*]}" >&2
  start=$SECONDS
  "$cli" experiment "$name" "${quick[@]}" --threads "$threads" --quiet --json "$work/$name.json" > /dev/null
  echo "experiments_table: $name took $((SECONDS - start)) s" >&2
done

node - "$work" $names <<'JS'
const fs = require('fs');
const [dir, ...names] = process.argv.slice(2);
const cell = (s) => String(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');
console.log('| experiment | claim (article §) | measured here | re-run |');
console.log('|---|---|---|---|');
for (const name of names) {
  const r = JSON.parse(fs.readFileSync(`${dir}/${name}.json`, 'utf8'));
  console.log(`| \`${name}\` | ${cell(r.claim)} | ${cell(r.conclusion)} | \`${cell(r.command)}\` |`);
}
JS
