// Walkthrough traces, computed in the engine worker: one attention call with seeded random weights
// (MultiHeadAttention.trace), or one layer of a token model (Model.trace: the lab's, or a checkpoint
// the reader opened, pretrained.ts), as a TraceResult.
import type { AttnLab, Model, Normalizer, PositionalKind, StageName, Trace } from '../../../attnlab';
import { CHOICES } from '../../../generated/choices.mjs';
import type { Tensor } from '../protocol/messages';
import type { TaskName } from '../protocol/lab';
import type { BackwardResult, StageData, StageTensor, TraceRequest, TraceResult } from '../protocol/walk';
import type { TrainingSession } from './training';

/** Copies an engine tensor into a Float32Array the worker owns (the binding already copies; this makes transfer safe). */
const own = (t: Tensor): Tensor => ({ shape: [...t.shape], data: new Float32Array(t.data) });

/** lab.rowStats of the worker's engine (set by trace and modelTrace; absent in a build without it). */
let rowStats: AttnLab['rowStats'] | null = null;

function readStage(trace: Trace, name: StageName, perHeadNames: Set<string>): StageData {
  const perHead = perHeadNames.has(name);
  const n = perHead ? trace.numHeads(name) : 1;
  const heads: StageTensor[] = [];
  for (let h = 0; h < n; h++) {
    const t: StageTensor = own(perHead ? trace.stage(name, h) : trace.stage(name));
    // The cells rounding flushed to ±0 (a build without the binding marks none).
    const flushed = typeof trace.flushedCells === 'function' ? trace.flushedCells(name, perHead ? h : -1) : null;
    if (flushed?.length) t.flushed = new Int32Array(flushed);
    if (name === 'weights' && rowStats) {
      const r = rowStats(t);
      t.rowSum = new Float32Array(r.sum.data);
      t.rowEntropy = new Float32Array(r.entropy.data);
    }
    heads.push(t);
  }
  return { name, perHead, heads };
}

// Per-head stages, as documented in include/attnlab/attention/stage.hpp.
const PER_HEAD = new Set(['q', 'k', 'v', 'q_rot', 'k_rot', 'phi_q', 'phi_k', 'scores', 'scaled', 'masked', 'weights',
  'context']);

export function trace(lab: AttnLab, req: TraceRequest): TraceResult {
  const t0 = performance.now();
  rowStats = typeof lab.rowStats === 'function' ? lab.rowStats.bind(lab) : null;
  const [T, C] = req.x.shape;
  const mha = new lab.MultiHeadAttention({
    dModel: req.dModel,
    numHeads: req.numHeads,
    numKvHeads: req.numKvHeads,
    bias: true,
    seed: req.seed,
  });
  const deletables: { delete(): void }[] = [mha];
  try {
    const options = {
      causal: req.causal,
      keyPaddingMask: req.keyPaddingMask ? { shape: [T], data: req.keyPaddingMask } : null,
      scale: req.scale,
      positional: req.positional,
      window: req.window ?? 0,
      globalTokens: req.globalTokens ?? 0,
      memory: req.memory ?? null,
      normalizer: req.normalizer ?? 'softmax',
      precision: req.precision ?? 'fp32',
    };
    const tr = mha.trace(req.x, options);
    deletables.push(tr);
    const stageNames = tr.stageNames();
    const stages: Record<string, StageData> = {};
    for (const name of stageNames) stages[name] = readStage(tr, name, PER_HEAD);

    const numerics = tr.numerics();
    // Generation through a KV cache, of the layer's recorded input x (positions added, if any; no RoPE).
    const layer = { dModel: req.dModel, numHeads: req.numHeads, numKvHeads: req.numKvHeads, seed: req.seed };
    const kvCache =
      typeof lab.kvCacheSteps === 'function' && !req.memory && req.positional !== 'rope'
        ? { full: lab.kvCacheSteps(layer, stages.x.heads[0], { variant: 'full' }), linear: lab.kvCacheSteps(layer, stages.x.heads[0], { variant: 'linear' }) }
        : null;
    const normalizerWeights = {} as Record<Normalizer, StageData>;
    for (const n of CHOICES.Normalizer) {
      const tn = mha.trace(req.x, { ...options, normalizer: n, stages: ['weights'] });
      deletables.push(tn);
      normalizerWeights[n] = readStage(tn, 'weights', PER_HEAD);
    }
    const variants = variantTraces(lab, mha, req, options, deletables);
    const tr2 = mha.trace(req.x, { ...options, scale: false, stages: ['scaled', 'weights'] });
    deletables.push(tr2);
    const unscaled = { scaled: readStage(tr2, 'scaled', PER_HEAD), weights: readStage(tr2, 'weights', PER_HEAD) };

    let positionTable: Tensor | null = null;
    if (req.positional === 'sinusoidal') {
      // The table the engine adds to x: the recorded x of an all-zero input.
      const tr3 = mha.trace({ shape: [T, C], data: new Float32Array(T * C) }, { positional: 'sinusoidal', stages: ['x'] });
      deletables.push(tr3);
      positionTable = own(tr3.stage('x'));
    }
    const parameters: Record<string, Tensor> = {};
    for (const name of mha.parameterNames()) parameters[name] = own(mha.getParameter(name));
    const D = req.dModel / req.numHeads;
    // The backward steps run in float32 (the gradients of the emulated formats are the engine's too, but not shown).
    const backward = gradients(lab, req, { ...options, precision: undefined });
    return {
      backward,
      numerics,
      normalizerWeights,
      kvCache,
      variants,
      request: req,
      stageNames,
      stages,
      parameters,
      unscaled,
      positionTable,
      scaleFactor: req.scale ? 1 / Math.sqrt(D) : 1,
      elapsedMs: performance.now() - t0,
    };
  } finally {
    for (const d of deletables.reverse()) d.delete();
  }
}

/**
 * The backward steps' numbers: the last token's output pulled towards the first token's
 * embedding, L = ½‖y_{T-1} − x_0‖², every gradient from the engine (lab.attentionGradients).
 */
function gradients(lab: AttnLab, req: TraceRequest, options: { causal: boolean; keyPaddingMask: { shape: number[]; data: Uint8Array } | null; scale: boolean; positional: TraceRequest['positional']; window: number; globalTokens: number; memory: Tensor | null; normalizer: Normalizer; precision?: string }): BackwardResult | null {
  if (typeof lab.attentionGradients !== 'function') return null; // a build without the binding: the backward steps say so
  const [T, C] = req.x.shape;
  const target = { shape: [C], data: new Float32Array(req.x.data.subarray(0, C)) };
  const { precision: _precision, ...fp32 } = options;
  const g = lab.attentionGradients({ dModel: req.dModel, numHeads: req.numHeads, numKvHeads: req.numKvHeads, seed: req.seed }, req.x, { ...fp32, lossRow: T - 1, target });
  return { ...g, targetToken: 0, target };
}

/** Blocks of the walkthrough's block-sparse picture: small enough that a short sentence has several. */
const SPARSE = { blockSize: 2, windowBlocks: 0, globalBlocks: 1, randomBlocks: 0 };

/** The same layer as linear and as block-sparse attention (null where the engine refuses the settings). */
function variantTraces(lab: AttnLab, mha: { trace: (x: Tensor, o: object) => Trace }, req: TraceRequest, options: object, deletables: { delete(): void }[]): NonNullable<TraceResult['variants']> {
  const attempt = <T>(f: () => T): T | null => {
    try {
      return f();
    } catch {
      return null; // e.g. a window with block-sparse: the variant's picture is left out
    }
  };
  const [T] = req.x.shape;
  const S = req.memory ? req.memory.shape[0] : T;
  return {
    linear: attempt(() => {
      const tr = mha.trace(req.x, { ...options, variant: 'linear', stages: ['phi_q', 'phi_k', 'weights'] });
      deletables.push(tr);
      return { phiQ: readStage(tr, 'phi_q', PER_HEAD), phiK: readStage(tr, 'phi_k', PER_HEAD), weights: readStage(tr, 'weights', PER_HEAD) };
    }),
    blockSparse: attempt(() => {
      const tr = mha.trace(req.x, { ...options, variant: 'block_sparse', ...SPARSE, window: 0, globalTokens: 0, stages: ['masked', 'weights'] });
      deletables.push(tr);
      const layout = lab.sparseLayout(T, S, { ...SPARSE, causal: req.causal });
      return { blockSize: SPARSE.blockSize, layout: { shape: [...layout.shape], data: new Uint8Array(layout.data) }, masked: readStage(tr, 'masked', PER_HEAD), weights: readStage(tr, 'weights', PER_HEAD) };
    }),
  };
}

/** What a walkthrough trace reads of a model: the lab's session or a checkpoint the reader opened. */
export interface TracedModel {
  model: Model;
  /** The lab's task (ModelTraceInfo.task), or null for an opened checkpoint. */
  task: TaskName | null;
  seed: number;
  /** The text of a sequence, and the label of one token, as the page shows them. */
  text(tokens: number[]): string;
  label(token: number): string;
  /** Tokens a decoder generates after the input for the KV-cache step (fewer if max_len is near). */
  generate: number;
}

/** One layer of the lab's model on `text` (empty: the lab's example), recorded by Model.trace. */
export function modelTrace(lab: AttnLab, s: TrainingSession, sample: number[], text: string, layer: number): TraceResult {
  if (!s.hasAttention) throw new Error('the lab’s model is an LSTM: it has no attention to walk through (train a Transformer in the lab)');
  const tokens = text.trim() ? Array.from(s.task.encode(text)) : sample.length ? sample : s.sampleTokens();
  if (!tokens.length) throw new Error('type an input in the task’s syntax first');
  const traced: TracedModel = { model: s.model, task: s.settings.task, seed: s.settings.seed, text: (t) => s.text(t), label: (t) => s.text([t]), generate: GENERATED };
  return layerTrace(lab, traced, tokens, layer);
}

/** Layer `layer` of a token model on `tokens`, recorded by Model.trace, as the walkthrough's TraceResult. */
export function layerTrace(lab: AttnLab, m: TracedModel, tokens: number[], layer: number): TraceResult {
  rowStats = typeof lab.rowStats === 'function' ? lab.rowStats.bind(lab) : null;
  const t0 = performance.now();
  const c = m.model.config();
  const tr = m.model.trace(Int32Array.from(tokens), { layer });
  const stages: Record<string, StageData> = {};
  let stageNames: StageName[];
  try {
    stageNames = tr.stageNames();
    for (const name of stageNames) stages[name] = readStage(tr, name, PER_HEAD);
  } finally {
    tr.delete();
  }
  const parameters: Record<string, Tensor> = {};
  const names = new Set(m.model.parameterNames());
  for (const proj of ['q_proj', 'k_proj', 'v_proj', 'out_proj'])
    for (const kind of ['weight', 'bias']) {
      const name = `blocks.${layer}.attn.${proj}.${kind}`;
      if (names.has(name)) parameters[`${proj}.${kind}`] = own(m.model.getParameter(name));
    }
  const H = c.numHeads;
  const D = c.dModel / H;
  const kind = m.model.kind();
  // The walkthrough shows token models only (the lab's TaskName leaves series out, a checkpoint is a decoder).
  if (kind === 'forecaster') throw new Error('walkthrough: a forecaster reads values, not tokens; the walkthrough shows token models');
  const x = stages.x.heads[0];
  // tie-qk: one weight and bias serve as W_Q and W_K.
  if (!parameters['k_proj.weight'] && parameters['q_proj.weight']) {
    parameters['k_proj.weight'] = parameters['q_proj.weight'];
    if (parameters['q_proj.bias']) parameters['k_proj.bias'] = parameters['q_proj.bias'];
  }
  const unscaledWeights = unscaledTrace(lab, { dModel: c.dModel, numHeads: H, numKvHeads: c.numKvHeads || H }, parameters, x, {
    causal: kind === 'decoder',
    window: c.attentionWindow ?? 0,
    globalTokens: c.globalTokens ?? 0,
    positional: c.positional === 'rope' ? 'rope' : 'none',
    normalizer: c.normalizer ?? 'softmax',
  });
  // kvCacheSteps runs full causal attention in float32: a model trained with a window, global
  // tokens, another variant or an emulated format gets no cache picture rather than a wrong one.
  const plainAttention = !c.attentionWindow && !c.globalTokens && (c.variant ?? 'full') === 'full' && (c.precision ?? 'fp32') === 'fp32';
  const kvCache = kind === 'decoder' && plainAttention && typeof lab.kvCacheSteps === 'function' ? generation(lab, m, tokens, layer, parameters) : null;
  const labels = tokens.map((t) => m.label(t));
  // An encoder with a CLS token records one more row than there are tokens.
  while (labels.length < x.shape[0]) labels.unshift('CLS');
  return {
    request: {
      x: own(x),
      dModel: c.dModel,
      numHeads: H,
      numKvHeads: c.numKvHeads || H,
      seed: m.seed,
      positional: c.positional === 'rope' ? 'rope' : 'none',
      causal: kind === 'decoder',
      keyPaddingMask: null,
      scale: c.scale,
    },
    model: { kind, task: m.task, layer, layers: c.numLayers, tokens, text: m.text(tokens), labels },
    kvCache,
    stageNames,
    stages,
    parameters,
    unscaled: { scaled: { name: 'scaled', perHead: true, heads: stages.scores.heads.map(own) }, weights: unscaledWeights },
    positionTable: null,
    scaleFactor: c.attentionScale ?? (c.scale ? 1 / Math.sqrt(D) : 1),
    elapsedMs: performance.now() - t0,
  };
}

/**
 * The "unscaled" weights of a trained layer: the engine's attention with the layer's weights on the
 * layer's recorded input x, scaling switched off (the scaling step's "before" picture).
 */
function unscaledTrace(lab: AttnLab, layer: { dModel: number; numHeads: number; numKvHeads: number }, parameters: Record<string, Tensor>, x: Tensor, options: { causal: boolean; window: number; globalTokens: number; positional: PositionalKind; normalizer: Normalizer }): StageData {
  // Biases the model lacks stay the layer's zeros.
  const mha = new lab.MultiHeadAttention({ ...layer, bias: true, seed: 0 });
  try {
    for (const [name, t] of Object.entries(parameters)) mha.setParameter(name, t);
    const tr = mha.trace(x, { ...options, scale: false, stages: ['weights'] });
    try {
      return readStage(tr, 'weights', PER_HEAD);
    } finally {
      tr.delete();
    }
  } finally {
    mha.delete();
  }
}

/** Tokens a lab-trained decoder generates after the walkthrough's input, in step 18 (fewer if max_len is near). */
const GENERATED = 4;

/**
 * Greedy generation by the lab's decoder after `prompt`, and layer `layer` of it decoding every
 * token fed through one KV cache (lab.kvCacheSteps with the layer's trained weights): the layer's
 * input rows x come from Model.trace of the whole generated sequence, which equals generation's
 * own, since in a causal decoder no token changes what an earlier position computes.
 */
function generation(lab: AttnLab, m: TracedModel, prompt: number[], layer: number, parameters: Record<string, Tensor>): NonNullable<TraceResult['kvCache']> {
  const c = m.model.config();
  const room = c.positional === 'learned' ? Math.max(0, c.maxLen - prompt.length) : m.generate;
  const n = Math.min(m.generate, room);
  const tokens = n > 0 ? Array.from(m.model.generate(Int32Array.from(prompt), n, { temperature: 0 })) : prompt.slice();
  const tr = m.model.trace(Int32Array.from(tokens), { layer });
  let x: Tensor;
  const k: Tensor[] = [];
  try {
    x = own(tr.stage('x'));
    const keys = tr.stageNames().includes('k_rot') ? 'k_rot' : 'k';
    for (let h = 0; h < tr.numHeads(keys); h++) k.push(own(tr.stage(keys, h)));
  } finally {
    tr.delete();
  }
  const H = c.numHeads;
  const layerShape = { dModel: c.dModel, numHeads: H, numKvHeads: c.numKvHeads || H, seed: 0 };
  const options = {
    parameters,
    positional: c.positional === 'rope' ? ('rope' as const) : ('none' as const),
    scale: c.scale,
    ...(c.attentionScale != null ? { scaleFactor: c.attentionScale } : {}),
    normalizer: c.normalizer ?? 'softmax',
  };
  return {
    full: lab.kvCacheSteps(layerShape, x, { ...options, variant: 'full' }),
    linear: lab.kvCacheSteps(layerShape, x, { ...options, variant: 'linear' }),
    generation: { tokens, labels: tokens.map((t) => m.label(t)), prompt: prompt.length, k },
  };
}
