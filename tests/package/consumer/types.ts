// tests/package/consumer/types.ts: type-checked (never run) by the package test, under Node's and
// under a bundler's module resolution: the package's `types` and `exports` lead TypeScript to
// web/attnlab.d.ts for the main entry and for each flavour's factory.
import { loadAttnLab, unloadAttnLab, type AttnLab, type Tensor } from 'attnlab';
import createThreaded from 'attnlab/threads';
import createSingle from 'attnlab/single';

export async function outputOf(x: Tensor): Promise<Tensor> {
  const lab: AttnLab = await loadAttnLab({ flavour: 'single' });
  const mha = new lab.MultiHeadAttention({ dModel: x.shape[1], numHeads: 2 });
  const trace = mha.trace(x, { causal: true, positional: 'rope' });
  const out: Tensor = trace.stage('output');
  trace.delete();
  mha.delete();
  unloadAttnLab(lab);
  return out;
}

export const factories: Array<() => Promise<AttnLab>> = [createThreaded, createSingle];

// @ts-expect-error: 'gpu' is not a flavour
loadAttnLab({ flavour: 'gpu' });
