// The engine worker: loads the WebAssembly module (threads when cross-origin isolated) and
// answers typed requests (engine/protocol.ts). The page's main thread never calls the engine:
// a pthread join there would busy-wait and freeze the page.
/// <reference lib="webworker" />
import type { AttnLabModule, EngineMha, LoadAttnLab } from './attnlab_api';
import type { Reply, ReplyEnvelope, Request, RequestEnvelope, StageData, Tensor, TraceRequest, TraceResult, WorkerEvent } from './protocol';
import { missingTrainingBindings, TrainingSession } from './training_engine';

declare const self: DedicatedWorkerGlobalScope;

let lab: AttnLabModule | null = null;
let session: TrainingSession | null = null;
let running = false;

function buffersOf(value: unknown, out: Set<ArrayBuffer> = new Set()): Set<ArrayBuffer> {
  if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer) out.add(value.buffer);
  } else if (Array.isArray(value)) {
    for (const v of value) buffersOf(v, out);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) buffersOf(v, out);
  }
  return out;
}

function post(message: ReplyEnvelope | WorkerEvent) {
  self.postMessage(message, [...buffersOf(message)]);
}

/** Copies an engine tensor into a Float32Array the worker owns (the binding already copies; this makes transfer safe). */
const own = (t: Tensor): Tensor => ({ shape: [...t.shape], data: new Float32Array(t.data) });

function readStage(trace: Pick<ReturnType<EngineMha['trace']>, 'numHeads' | 'stage'>, name: string, perHeadNames: Set<string>): StageData {
  const perHead = perHeadNames.has(name);
  const n = perHead ? trace.numHeads(name) : 1;
  const heads: Tensor[] = [];
  for (let h = 0; h < n; h++) heads.push(own(perHead ? trace.stage(name, h) : trace.stage(name)));
  return { name, perHead, heads };
}

// Per-head stages, as documented in include/attnlab/attention/stage.hpp.
const PER_HEAD = new Set(['q', 'k', 'v', 'q_rot', 'k_rot', 'scores', 'scaled', 'masked', 'weights', 'context']);

function trace(req: TraceRequest): TraceResult {
  if (!lab) throw new Error('the engine is not loaded yet');
  const t0 = performance.now();
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
    };
    const tr = mha.trace(req.x, options);
    deletables.push(tr);
    const stageNames = tr.stageNames();
    const stages: Record<string, StageData> = {};
    for (const name of stageNames) stages[name] = readStage(tr, name, PER_HEAD);

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
    return {
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

/** Row softmax of a (T, S) matrix, -inf entries weigh 0 (the scaling step's "unscaled" picture). */
function softmaxRows(t: Tensor): Tensor {
  const [R, K] = t.shape;
  const out = new Float32Array(R * K);
  for (let i = 0; i < R; i++) {
    let m = -Infinity;
    for (let j = 0; j < K; j++) m = Math.max(m, t.data[i * K + j]);
    let sum = 0;
    for (let j = 0; j < K; j++) {
      const e = t.data[i * K + j] === -Infinity ? 0 : Math.exp(t.data[i * K + j] - m);
      out[i * K + j] = e;
      sum += e;
    }
    for (let j = 0; j < K; j++) out[i * K + j] /= sum || 1;
  }
  return { shape: [R, K], data: out };
}

/** One layer of the lab's model on `text` (empty: the lab's example), recorded by Model.trace. */
function modelTrace(s: TrainingSession, text: string, layer: number): TraceResult {
  const t0 = performance.now();
  const tokens = text.trim() ? Array.from(s.task.encode(text)) : labSample.length ? labSample : s.sampleTokens();
  if (!tokens.length) throw new Error('type an input in the task’s syntax first');
  const c = s.model.config() as { numLayers: number; dModel: number; numHeads: number; numKvHeads: number; positional: string; scale: boolean; attentionScale: number | null };
  const tr = s.model.trace(Int32Array.from(tokens), { layer });
  const stages: Record<string, StageData> = {};
  let stageNames: string[];
  try {
    stageNames = tr.stageNames();
    for (const name of stageNames) stages[name] = readStage(tr, name, PER_HEAD);
  } finally {
    tr.delete();
  }
  const parameters: Record<string, Tensor> = {};
  const names = new Set(s.model.parameterNames());
  for (const proj of ['q_proj', 'k_proj', 'v_proj', 'out_proj'])
    for (const kind of ['weight', 'bias']) {
      const name = `blocks.${layer}.attn.${proj}.${kind}`;
      if (names.has(name)) parameters[`${proj}.${kind}`] = own(s.model.getParameter(name));
    }
  // The "unscaled" picture: the engine's raw scores, and their softmax under the same mask.
  const masked = stages.masked ?? stages.scaled;
  const unscaledWeights = stages.scores.heads.map((sc, h) => {
    const m = masked.heads[h];
    const data = new Float32Array(sc.data);
    for (let i = 0; i < data.length; i++) if (m.data[i] === -Infinity) data[i] = -Infinity;
    return softmaxRows({ shape: sc.shape, data });
  });
  const H = c.numHeads;
  const D = c.dModel / H;
  const kind = s.model.kind();
  const x = stages.x.heads[0];
  const labels = tokens.map((t) => s.task.decode([t]));
  // An encoder with a CLS token records one more row than there are tokens.
  while (labels.length < x.shape[0]) labels.unshift('CLS');
  return {
    request: {
      x: own(x),
      dModel: c.dModel,
      numHeads: H,
      numKvHeads: c.numKvHeads || H,
      seed: s.settings.seed,
      positional: c.positional === 'rope' ? 'rope' : 'none',
      causal: kind === 'decoder',
      keyPaddingMask: null,
      scale: c.scale,
    },
    model: { kind, task: s.settings.task, layer, layers: c.numLayers, tokens, text: s.task.decode(tokens), labels },
    stageNames,
    stages,
    parameters,
    unscaled: { scaled: { name: 'scaled', perHead: true, heads: stages.scores.heads.map(own) }, weights: { name: 'weights', perHead: true, heads: unscaledWeights } },
    positionTable: null,
    scaleFactor: c.attentionScale ?? (c.scale ? 1 / Math.sqrt(D) : 1),
    elapsedMs: performance.now() - t0,
  };
}

const yieldToEvents = () =>
  new Promise<void>((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => resolve();
    ch.port2.postMessage(null);
  });

async function trainLoop(chunk: number, refreshEvery: number, sample: number[]) {
  const s = session;
  if (!s) return;
  running = true;
  let pending: WorkerEvent & { event: 'lab.metrics' } = { event: 'lab.metrics', metrics: [], stepsPerSecond: 0 };
  let lastPost = performance.now();
  let windowStart = performance.now();
  let windowSteps = 0;
  let step = s.lastStep;
  let lastMapsStep = -1;
  let lastMapsPost = -Infinity;
  // One kernel thread while training: the lab's models are tiny (a second thread gains little), and
  // a pthread join busy-waits, so two engine threads would take both cores of a two-core laptop
  // and starve the page's main thread. The walkthrough keeps all threads.
  const threads = lab?.buildInfo().threads ?? 1;
  lab?.setNumThreads?.(1);
  try {
    while (running) {
      const remaining = s.settings.steps - step;
      if (remaining <= 0) break;
      const m = s.step(Math.min(chunk, remaining));
      step = m.step;
      windowSteps += Math.min(chunk, remaining);
      pending.metrics.push(m);
      const now = performance.now();
      if (now - lastPost > 250) {
        pending.stepsPerSecond = (windowSteps * 1000) / (now - windowStart);
        post(pending);
        pending = { event: 'lab.metrics', metrics: [], stepsPerSecond: 0 };
        lastPost = now;
        if (now - windowStart > 2000) {
          windowStart = now;
          windowSteps = 0;
        }
      }
      // Maps every refreshEvery steps, but at most every 0.75 s: each refresh repaints them all.
      if (sample.length && Math.floor(step / refreshEvery) !== Math.floor(lastMapsStep / refreshEvery) && now - lastMapsPost > 750) {
        post({ event: 'lab.maps', maps: s.attentionMaps(sample), step });
        lastMapsStep = step;
        lastMapsPost = now;
      }
      await yieldToEvents();
      if (session !== s) return; // reset while we yielded
    }
    if (pending.metrics.length) {
      const now = performance.now();
      pending.stepsPerSecond = (windowSteps * 1000) / Math.max(1, now - windowStart);
      post(pending);
    }
    if (sample.length && lastMapsStep !== step) post({ event: 'lab.maps', maps: s.attentionMaps(sample), step });
    post({ event: 'lab.stopped', reason: running ? 'done' : 'paused', step });
  } catch (e) {
    post({ event: 'lab.stopped', reason: 'error', message: e instanceof Error ? e.message : String(e), step });
  } finally {
    running = false;
    lab?.setNumThreads?.(threads);
  }
}

let labSample: number[] = [];

async function handle(body: Request): Promise<Reply> {
  switch (body.kind) {
    case 'init': {
      const isolated = self.crossOriginIsolated === true && typeof SharedArrayBuffer !== 'undefined';
      const flavour = isolated ? 'threads' : 'single';
      const mod = (await import(/* @vite-ignore */ body.loaderUrl)) as { loadAttnLab: LoadAttnLab };
      lab = await mod.loadAttnLab({ flavour });
      const info = lab.buildInfo();
      const missing = missingTrainingBindings(lab);
      return {
        kind: 'init',
        info: {
          flavour,
          threads: info.threads,
          simd: info.simd,
          version: info.version,
          crossOriginIsolated: isolated,
          training: missing.length === 0,
          trainingMissing: missing,
        },
      };
    }
    case 'trace':
      return { kind: 'trace', result: trace(body.request) };
    case 'lab.create': {
      if (!lab) throw new Error('the engine is not loaded yet');
      running = false;
      session?.dispose();
      session = null;
      session = TrainingSession.create(lab, body.settings);
      labSample = body.sample.length ? body.sample : session.sampleTokens();
      return { kind: 'ok' };
    }
    case 'lab.load': {
      if (!lab) throw new Error('the engine is not loaded yet');
      const loaded = TrainingSession.load(lab, body.settings, body.bytes); // throws on a bad file; the old session stays
      running = false;
      session?.dispose();
      session = loaded;
      labSample = loaded.sampleTokens();
      return { kind: 'loaded', settings: loaded.settings, maps: labSample.length ? loaded.attentionMaps(labSample) : null };
    }
    case 'lab.run': {
      if (!session) throw new Error('no model: create one first');
      if (!running) void trainLoop(body.chunk, body.refreshEvery, labSample);
      return { kind: 'ok' };
    }
    case 'lab.pause':
      running = false;
      return { kind: 'ok' };
    case 'lab.evaluate': {
      if (!session) throw new Error('no model: create one first');
      const r = session.evaluate(body.batches);
      return { kind: 'evaluate', loss: r.loss, accuracy: r.accuracy };
    }
    case 'lab.maps': {
      if (!session) throw new Error('no model: create one first');
      labSample = body.tokens;
      return { kind: 'maps', maps: session.attentionMaps(body.tokens) };
    }
    case 'lab.try': {
      if (!session) throw new Error('no model: create one first');
      return { kind: 'try', result: session.tryModel(body.text, body.maxNew) };
    }
    case 'lab.trace': {
      if (!session) throw new Error('the lab has no model yet: train one or load a checkpoint');
      return { kind: 'trace', result: modelTrace(session, body.text, body.layer) };
    }
    case 'lab.save': {
      if (!session) throw new Error('no model: create one first');
      return { kind: 'save', bytes: session.save() };
    }
    case 'lab.dispose':
      running = false;
      session?.dispose();
      session = null;
      return { kind: 'ok' };
  }
}

self.onmessage = async (ev: MessageEvent<RequestEnvelope>) => {
  const { id, body } = ev.data;
  try {
    post({ id, ok: true, body: await handle(body) });
  } catch (e) {
    post({ id, ok: false, error: e instanceof Error ? e.message : String(e) });
  }
};
