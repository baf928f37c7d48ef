// The engine worker: loads the WebAssembly module (threads when cross-origin isolated) and
// dispatches the page's typed requests (engine/protocol/) to the walkthrough traces
// (walk_trace.ts; an opened checkpoint's, pretrained.ts), the lab's training session (training.ts, train_loop.ts), the chapters' figures
// (chapters/figures/computations.ts) and the experiments. The page's main thread never calls the
// engine: a pthread join there would busy-wait and freeze the page.
/// <reference lib="webworker" />
import type { AttnLab, loadAttnLab } from '../../../attnlab';
import { START_BEAT_MS, type Reply, type ReplyEnvelope, type Request, type RequestEnvelope, type WorkerEvent } from '../protocol/messages';
import { computeFigure, shippedOf } from '../../chapters/figures/computations';
import { PROGRESS_EVERY_MS, type ExperimentProgress } from '../protocol/chapters';
import { LabRunner } from './train_loop';
import { missingTrainingBindings, parameterCount, TrainingSession } from './training';
import { provideExperimentInputs } from './experiment_inputs';
import { lensOf, patchOf, trainedInterp, type InterpModel } from './lens';
import { openFigureModel } from './figure_models';
import { openPretrained, openShipped, pretrainedInterp, pretrainedTrace } from './pretrained';
import { headsAblation, headsGallery } from './heads';
import { modelTrace, trace } from './walk_trace';

declare const self: DedicatedWorkerGlobalScope;

let lab: AttnLab | null = null;
let runner: LabRunner | null = null;

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

/**
 * A trap (unreachable, out-of-bounds access, an Emscripten abort such as running out of memory)
 * leaves the module unusable: every later call would fail or compute on a broken heap. The worker
 * says why and closes; the page rejects what it still waits for and starts a new worker.
 */
function fatal(e: unknown): boolean {
  if (!(e instanceof WebAssembly.RuntimeError)) return false;
  post({ event: 'engine.fatal', message: e.message });
  self.close();
  return true;
}

/** Holds the Web Lock `name` for the worker's whole life (the page waits on it to learn of the worker's end). */
function holdLock(name: string): Promise<void> {
  if (!('locks' in navigator)) return Promise.resolve();
  return new Promise((held) => {
    void navigator.locks.request(name, () => {
      held();
      return new Promise<never>(() => {});
    });
  });
}

function loaded(): { lab: AttnLab; runner: LabRunner } {
  if (!lab || !runner) throw new Error('the engine is not loaded yet');
  return { lab, runner };
}

function session(): TrainingSession {
  const s = loaded().runner.session;
  if (!s) throw new Error('no model: create one first');
  return s;
}

/** The decoder the lens and patching read: the lab's trained model or the walkthrough's opened one. */
function interpModel(source: 'trained' | 'pretrained'): InterpModel {
  if (source === 'pretrained') return pretrainedInterp();
  const s = loaded().runner.session;
  if (!s) throw new Error('the lab has no model yet: train one or load a checkpoint');
  return trainedInterp(s);
}

async function handle(body: Request): Promise<Reply> {
  switch (body.kind) {
    case 'init': {
      await holdLock(body.lock);
      post({ event: 'engine.alive', lock: body.lock });
      const isolated = self.crossOriginIsolated === true && typeof SharedArrayBuffer !== 'undefined';
      const flavour = isolated ? 'threads' : 'single';
      // The page restarts a starting worker that falls silent (engine/client/): the threads
      // flavour's start-up creates its pthread Workers from this worker, and Firefox under remote
      // control now and then blocks this thread for good inside one of those `new Worker` calls.
      const beat = setInterval(() => post({ event: 'engine.starting' }), START_BEAT_MS);
      try {
        const mod = (await import(/* @vite-ignore */ body.loaderUrl)) as { loadAttnLab: typeof loadAttnLab };
        lab = await mod.loadAttnLab({ flavour });
      } finally {
        clearInterval(beat);
      }
      runner = new LabRunner(lab, post, fatal);
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
      return { kind: 'trace', result: trace(loaded().lab, body.request) };
    case 'lab.create': {
      const { lab, runner } = loaded();
      runner.replace(null);
      runner.replace(TrainingSession.create(lab, body.settings, body.text ?? null));
      if (body.sample.length) runner.sample = body.sample;
      return { kind: 'created', info: runner.info() };
    }
    case 'lab.continue': {
      const { runner } = loaded();
      runner.continueWith(body.settings);
      return { kind: 'created', info: runner.info() };
    }
    case 'lab.load': {
      const { lab, runner } = loaded();
      runner.replace(TrainingSession.load(lab, body.settings, body.bytes)); // throws on a bad file; the old session stays
      const s = session();
      return { kind: 'loaded', info: runner.info(), settings: s.settings, maps: runner.sample.length && s.hasAttention ? s.attentionMaps(runner.sample) : null };
    }
    case 'lab.run':
      loaded().runner.start(body.chunk, body.refreshEvery);
      return { kind: 'ok' };
    case 'lab.pause':
      loaded().runner.pause();
      return { kind: 'ok' };
    case 'lab.evaluate': {
      const r = session().evaluate(body.batches);
      return { kind: 'evaluate', loss: r.loss, accuracy: r.accuracy };
    }
    case 'lab.maps':
      loaded().runner.sample = body.tokens;
      return { kind: 'maps', maps: session().attentionMaps(body.tokens) };
    case 'lab.try':
      return { kind: 'try', result: session().tryModel(body.text, body.maxNew) };
    case 'lab.trace': {
      const s = loaded().runner.session;
      if (!s) throw new Error('the lab has no model yet: train one or load a checkpoint');
      return { kind: 'trace', result: modelTrace(loaded().lab, s, loaded().runner.sample, body.text, body.layer) };
    }
    case 'lab.save':
      return { kind: 'save', bytes: session().save() };
    case 'lab.count':
      return { kind: 'count', parameters: parameterCount(loaded().lab, body.settings) };
    case 'lab.dispose':
      loaded().runner.replace(null);
      return { kind: 'ok' };
    case 'pretrained.open': {
      const info = await openPretrained(loaded().lab, body.files, (loaded, total) => post({ event: 'pretrained.progress', loaded, total }));
      return { kind: 'pretrained', info };
    }
    case 'pretrained.openShipped': {
      const info = await openShipped(loaded().lab, body.url, body.name, (loaded, total) => post({ event: 'pretrained.progress', loaded, total }));
      return { kind: 'pretrained', info };
    }
    case 'pretrained.trace':
      return { kind: 'trace', result: pretrainedTrace(loaded().lab, body.text, body.layer, body.generate) };
    case 'lens':
      return { kind: 'lens', result: lensOf(interpModel(body.source), body) };
    case 'patch':
      return { kind: 'patch', result: patchOf(interpModel(body.source), body) };
    case 'heads.gallery':
      return { kind: 'heads.gallery', gallery: headsGallery(loaded().lab, body, loaded().runner) };
    case 'heads.ablate':
      return { kind: 'heads.ablation', ablation: headsAblation(loaded().lab, body, loaded().runner) };
    case 'figure': {
      const { request } = body;
      const ref = shippedOf(request);
      if (ref) await openFigureModel(loaded().lab, ref, (l, total) => post({ event: 'figure.load', load: { figure: request.figure, model: ref.name, loaded: l, total } }));
      return { kind: 'figure', data: computeFigure(loaded().lab, request, (progress) => post({ event: 'figure.progress', progress })) };
    }
    case 'experiments.list':
      return { kind: 'experiments', list: loaded().lab.experiments() };
    case 'experiment.run': {
      // One synchronous call: progress is posted in batches as it comes; a Stop ends this worker
      // (EngineClient.dispose), since a busy worker reads no messages.
      await provideExperimentInputs(loaded().lab, body.name, body.options, body.base);
      let batch: ExperimentProgress[] = [];
      let last = performance.now();
      const result = loaded().lab.runExperiment(body.name, body.options, (p) => {
        batch.push(p);
        const now = performance.now();
        if (now - last >= PROGRESS_EVERY_MS) {
          post({ event: 'experiment.progress', points: batch });
          batch = [];
          last = now;
        }
      });
      if (batch.length) post({ event: 'experiment.progress', points: batch });
      return { kind: 'experiment', result };
    }
    case 'test.trap':
      return loaded().lab._trapForTests(); // never returns: the trap reaches fatal() below
  }
}

self.onmessage = async (ev: MessageEvent<RequestEnvelope>) => {
  const { id, body } = ev.data;
  try {
    post({ id, ok: true, body: await handle(body) });
  } catch (e) {
    if (fatal(e)) return; // the page rejects this request when it learns the worker ended
    const problem = (e as { problem?: unknown } | null)?.problem;
    post({ id, ok: false, error: e instanceof Error ? e.message : String(e), ...(typeof problem === 'string' ? { problem } : {}) });
  }
};
