// Shared look-ups for the backward steps: the engine's gradients of the trace, per-head slices.
import { t } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import type { BackwardResult } from '../../engine/protocol/walk';
import { note } from '../components/common';
import type { StepContext } from '../step';

/** The trace's gradients, or null after writing why there are none into `host` (a lab model's layer). */
export function gradientsOf(host: HTMLElement | null, c: StepContext): BackwardResult | null {
  const g = c.trace.backward ?? null;
  if (!g && host) note(host, 'no-backward', `<p>${t('walk.step.back.none')}</p>`);
  return g;
}

/** The loss in words: which row is pulled towards which token's embedding. */
export function lossWords(c: StepContext, g: BackwardResult) {
  return { r: g.lossRow, token: c.input.tokens[g.lossRow], target: c.input.tokens[g.targetToken], loss: g.loss.toPrecision(4) };
}

/** Columns c0.. of a (rows, C) tensor for the head's slice h·D .. (h+1)·D − 1. */
export function headColumns(x: Tensor, h: number, D: number): Tensor {
  const [R, C] = x.shape;
  const out = new Float32Array(R * D);
  for (let i = 0; i < R; i++) out.set(x.data.subarray(i * C + h * D, i * C + (h + 1) * D), i * D);
  return { shape: [R, D], data: out };
}

/** "y = −0.125, target = 0.5" style lines for a tooltip, each value exact to 4 significant digits. */
export const valueLines = (pairs: [string, number][]) => pairs.map(([k, v]) => `${k} = ${Number.isFinite(v) ? v.toPrecision(4) : String(v)}`).join('<br>');
