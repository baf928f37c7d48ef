#!/usr/bin/env bash
# Runs every experiment of `attnlab experiment` and writes markdown tables, one row per
# experiment, each cell from the engine (no number typed by hand):
#   to stdout, the full table of docs/experiments.md: its name, the claim, what this run measured
#     (the experiment's own conclusion, computed from its numbers) and the command that repeats it;
#   with --readme FILE, README's short table to FILE: its name, the article section, what it runs
#     and the verdict.
#
#   scripts/experiments_table.sh                 the full runs (each a few minutes on 2 threads)
#   scripts/experiments_table.sh --quick         the --quick forms (seconds each)
#   options: --readme FILE, --cli PATH (default build/attnlab), --threads N (default 2),
#            --only NAME[,NAME]
# Progress goes to stderr; the JSON results are kept in a temporary folder and removed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cli=$root/build/attnlab
threads=2
quick=()
only=""
readme=""
while (( $# )); do
  case "$1" in
    --quick) quick=(--quick) ;;
    --readme) readme=$2; shift ;;
    --cli) cli=$2; shift ;;
    --threads) threads=$2; shift ;;
    --only) only=$2; shift ;;
    *) echo "experiments_table: unknown option '$1' (valid: --quick, --readme FILE, --cli PATH, --threads N, --only NAMES)" >&2; exit 2 ;;
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

"$cli" experiment --metadata > "$work/metadata.json"

node - "$work" "$readme" $names <<'JS'
const fs = require('fs');
const [dir, readme, ...names] = process.argv.slice(2);
const cell = (s) => String(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');
const meta = Object.fromEntries(JSON.parse(fs.readFileSync(`${dir}/metadata.json`, 'utf8')).map((e) => [e.name, e]));
// The engine's verdict names (experiments/registry.cpp) in words.
const VERDICT = { held: 'held', partly: 'held in part', not_held: 'did not hold', untested: 'not tested by this run' };
const full = ['| experiment | claim (article §) | measured here | re-run |', '|---|---|---|---|'];
const brief = ['| experiment | § | what it runs | the claim here |', '|---|---|---|---|'];
for (const name of names) {
  const r = JSON.parse(fs.readFileSync(`${dir}/${name}.json`, 'utf8'));
  full.push(`| \`${name}\` | ${cell(r.claim)} | ${cell(r.conclusion)} | \`${cell(r.command)}\` |`);
  const verdict = VERDICT[r.verdict];
  if (!verdict) throw new Error(`${name}: unknown verdict '${r.verdict}'`);
  brief.push(`| \`${name}\` | ${cell(meta[name].section)} | ${cell(meta[name].summary)} | ${verdict} |`);
}
console.log(full.join('\n'));
if (readme) fs.writeFileSync(readme, brief.join('\n') + '\n');
JS
