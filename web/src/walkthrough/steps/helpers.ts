// Shared look-ups for the step scripts: stage tensors by head, labels, head slices of weights.
import { t } from '../../i18n';
import type { Tensor } from '../../engine/protocol/messages';
import { headSliceT } from '../derive';
import type { StepContext } from '../step';

export const stage = (ctx: StepContext, name: string, head = 0): Tensor => {
  const s = ctx.trace.stages[name];
  if (!s) throw new Error(`the engine did not record stage '${name}'`);
  return s.heads[s.perHead ? head : 0];
};

export const kvHead = (ctx: StepContext) => ctx.derived.kvOf[ctx.head];
export const rope = (ctx: StepContext) => ctx.settings.positional === 'rope';
export const tokens = (ctx: StepContext) => ctx.input.tokens.map((t, i) => `${i} ${t}`);
/** The keys' (and values') row labels: the context's tokens under cross-attention, else the sentence's. */
export const keyTokens = (ctx: StepContext) => (ctx.input.context ? ctx.input.context.tokens.map((t, j) => `${j} ${t}`) : tokens(ctx));
/** Under cross-attention, which sentence a stage comes from (' · from the query sentence' / context), else ''. */
export const sourceTag = (ctx: StepContext, side: 'query' | 'context') => (ctx.input.context ? ` · ${t(side === 'query' ? 'walk.cross.fromQuery' : 'walk.cross.fromContext')}` : '');
export const headLabel = (ctx: StepContext, kv = false) => {
  const { H, Hkv } = ctx.derived;
  if (H === 1) return '';
  return kv && Hkv !== H ? t('walk.step.kvHeadLabel', { h: kvHead(ctx) }) : t('walk.step.headLabel', { h: ctx.head });
};

/** The head's slice of a projection weight, transposed to (in, D), and its bias slice. */
export function weightSlice(ctx: StepContext, proj: 'q_proj' | 'k_proj' | 'v_proj', head: number) {
  const D = ctx.derived.D;
  const w = ctx.trace.parameters[`${proj}.weight`];
  const b = ctx.trace.parameters[`${proj}.bias`];
  return { wT: headSliceT(w, head * D, (head + 1) * D), bias: b ? b.data.subarray(head * D, (head + 1) * D) : null };
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
