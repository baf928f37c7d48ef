#!/usr/bin/env bash
# attnlab train / eval / generate on the series task: a Transformer (sinusoidal and --pe time) and
# an LSTM forecaster train, save and evaluate against the seasonal-naive baseline; the series
# flags reach the task, bad values and token-only commands are refused naming them.
# Usage: series_forecasting.sh <path to the attnlab executable>
set -euo pipefail
# Output is captured before grep -q reads it (see lstm_architecture.sh).
cli=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

out=$("$cli" train --task series --context 24 --horizon 6 --periods 6,12 --d-model 16 --heads 2 --layers 1 --steps 5 \
  --eval-every 0 --eval-batches 1 --quiet --threads 1 --save "$dir/tf.safetensors")
grep -q "task series (context 24, horizon 6, 1 feature), transformer forecaster with 1 layers" <<<"$out" \
  || { echo "no forecaster summary in: $out"; exit 1; }
grep -q "pe sinusoidal" <<<"$out" || { echo "a forecaster without --pe should add the sinusoidal table: $out"; exit 1; }
grep -q "seasonal-naive baseline mse " <<<"$out" || { echo "no baseline in: $out"; exit 1; }
out=$("$cli" eval --model "$dir/tf.safetensors" --batches 2 --threads 1)
grep -q "on task series: model mse [0-9.]*, mae [0-9.]*; seasonal-naive baseline mse [0-9.]*, mae [0-9.]* (the model" <<<"$out" \
  || { echo "eval did not compare with the baseline: $out"; exit 1; }
grep -q "over 384 forecast values" <<<"$out" || { echo "the stored task (horizon 6) was not used: $out"; exit 1; }

out=$("$cli" train --task series --pe time --d-model 16 --heads 2 --layers 1 --steps 3 --eval-every 0 --eval-batches 1 \
  --quiet --threads 1)
grep -q "pe time" <<<"$out" || { echo "no pe time in: $out"; exit 1; }
out=$("$cli" train --task series --architecture lstm --d-model 16 --layers 1 --steps 3 --eval-every 0 --eval-batches 1 \
  --quiet --threads 1 --save "$dir/lstm.safetensors")
grep -q "lstm forecaster with 1 layers, d_model 16, pe none (an lstm reads in order" <<<"$out" || { echo "no lstm forecaster summary in: $out"; exit 1; }

if err=$("$cli" generate --model "$dir/lstm.safetensors" 2>&1); then echo "generate accepted a forecaster"; exit 1; fi
grep -q "holds a forecaster" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
if err=$("$cli" train --task series --horizon 0 --steps 1 2>&1); then echo "horizon 0 accepted"; exit 1; fi
grep -q "horizon must be in \[1, 1024\]" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
if err=$("$cli" train --task series --periods 12,x --steps 1 2>&1); then echo "a bad period accepted"; exit 1; fi
grep -q -- "--periods must be" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
if err=$("$cli" train --task reverse --horizon 4 --steps 1 2>&1); then echo "a series flag accepted by reverse"; exit 1; fi
grep -q "option horizon does not apply to this task" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
if err=$("$cli" train --task reverse --pe time --steps 1 2>&1); then echo "pe time accepted by a token model"; exit 1; fi
grep -q "pe time reads timestamps" <<<"$err" || { echo "unexpected error: $err"; exit 1; }
echo ok
