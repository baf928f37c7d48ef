// Walkthrough actions: the only code that changes walkStore (engine calls, navigation, playback).
import { t } from '../i18n';
import type { EngineClient } from '../engine/client/client';
import type { Request } from '../engine/protocol/messages';
import type { PretrainedInfo } from '../engine/protocol/pretrained';
import { derive } from './derive';
import { GENERATE_COUNTS, buildInput, inputFromModelTrace, settingsOfModelTrace, settingsProblems, type WalkSettings } from './inputs';
import type { SortedFiles } from './model_files';
import { walkStore, type PretrainedState, type WalkState } from './state';
import type { StepContext } from './step';
import { STEPS } from './steps';
import type { WalkUrlState } from './url';

let engine: EngineClient | null = null;
let requestSeq = 0;

export function attachEngine(client: EngineClient) {
  engine = client;
}

/** Recomputes the trace for `settings` (latest request wins). */
export async function compute(settings: WalkSettings) {
  const problems = settingsProblems(settings);
  if (problems.length) {
    ++requestSeq; // a trace still under way is for settings that no longer hold
    walkStore.set({ settings, status: 'error', error: problems.join(' '), playing: false });
    clearTimeout(timer);
    return;
  }
  if (!engine) return;
  const seq = ++requestSeq;
  walkStore.set({ settings, status: 'computing', error: null });
  try {
    let trace, input, traced;
    let scaledOn: WalkState['scaledOn'] = null;
    if (settings.model === 'trained' || settings.model === 'pretrained') {
      // One layer of the lab's model or of the opened checkpoint, recorded by the engine in the worker (Model.trace).
      const request: Request =
        settings.model === 'trained'
          ? { kind: 'lab.trace', text: settings.modelInput, layer: settings.layer }
          : { kind: 'pretrained.trace', text: settings.pretrainedText ?? '', layer: settings.pretrainedLayer ?? 0, generate: settings.pretrainedGenerate ?? GENERATE_COUNTS[1] };
      trace = (await engine.call('trace', request)).result;
      input = inputFromModelTrace(trace);
      traced = settingsOfModelTrace(settings, trace);
    } else {
      input = buildInput(settings);
      trace = await engine.trace(input.request);
      traced = settings;
      if (!settings.scale) {
        // The same seeded layer with scaling on: what the scaling step shows beside the unscaled run.
        const on = await engine.trace({ ...input.request, scale: true });
        scaledOn = { scaled: on.stages.scaled, weights: on.stages.weights };
      }
    }
    if (seq !== requestSeq) return;
    const derived = derive(trace, scaledOn);
    const s = walkStore.get();
    walkStore.set({
      status: 'ready',
      error: null,
      traced,
      input,
      trace,
      scaledOn,
      derived,
      version: s.version + 1,
      head: Math.min(s.head, derived.H - 1),
      beat: 0,
      hover: null,
    });
  } catch (e) {
    if (seq !== requestSeq) return;
    walkStore.set({ status: 'error', error: t('walk.engineError', { message: e instanceof Error ? e.message : String(e) }) });
  }
}

/**
 * Opens the reader's checkpoint in the worker ("Open a model…"), following its progress, and
 * resolves to what the worker reports of it, or null when it could not be opened (the store's
 * `pretrained.error` says why). Files `sortModelFiles` could not use are reported, nothing opened.
 * The model held before is deleted first (two large models do not fit the module's memory).
 */
export async function openModel(files: SortedFiles): Promise<PretrainedInfo | null> {
  const pretrained = (p: Partial<PretrainedState>) => walkStore.set({ pretrained: { ...walkStore.get().pretrained, ...p } });
  const name = files.weights?.name ?? '';
  if (!files.weights || files.problems.length) {
    pretrained({ phase: 'error', name, info: null, error: { message: files.problems.join(' '), picker: true }, ignored: files.ignored });
    return null;
  }
  if (!engine) return null;
  const client = engine;
  pause();
  pretrained({ phase: 'loading', name, loaded: 0, total: files.weights.size, info: null, error: null, ignored: files.ignored });
  const stop = client.onPretrainedEvent((e) => pretrained({ loaded: e.loaded, total: e.total }));
  try {
    const bundledTokenizerUrl = new URL('gpt2/', document.baseURI).href;
    const { info } = await client.call('pretrained', { kind: 'pretrained.open', files: { weights: files.weights, config: files.config, tokenizer: files.tokenizer, bundledTokenizerUrl } });
    pretrained({ phase: 'ready', info });
    return info;
  } catch (e) {
    const problem = (e as { problem?: unknown }).problem;
    pretrained({ phase: 'error', info: null, error: { message: e instanceof Error ? e.message : String(e), ...(typeof problem === 'string' ? { problem } : {}) } });
    return null;
  } finally {
    stop();
  }
}

/** The shipped models the walkthrough offers (each one is in models/, which build_web.sh copies whole into the page), fetched only when chosen. */
export const SHIPPED_MODELS = ['tang', 'brown'] as const;
export type ShippedModel = (typeof SHIPPED_MODELS)[number];

/** Opens the shipped model `name` in the worker, as openModel opens the reader's files. */
export async function openShippedModel(name: ShippedModel): Promise<PretrainedInfo | null> {
  const pretrained = (p: Partial<PretrainedState>) => walkStore.set({ pretrained: { ...walkStore.get().pretrained, ...p } });
  if (!engine) return null;
  const client = engine;
  const file = `${name}.safetensors`;
  pause();
  pretrained({ phase: 'loading', name: file, loaded: 0, total: 0, info: null, error: null, ignored: [] });
  const stop = client.onPretrainedEvent((e) => pretrained({ loaded: e.loaded, total: e.total }));
  try {
    const url = new URL(`models/${file}`, document.baseURI).href;
    const { info } = await client.call('pretrained', { kind: 'pretrained.openShipped', url, name: file });
    pretrained({ phase: 'ready', info });
    return info;
  } catch (e) {
    pretrained({ phase: 'error', info: null, error: { message: e instanceof Error ? e.message : String(e) } });
    return null;
  } finally {
    stop();
  }
}

/** The engine worker ended and a new one started: the model opened in the old one is gone. */
export function pretrainedLost(reason: string) {
  const p = walkStore.get().pretrained;
  if (p.phase !== 'ready' && p.phase !== 'loading') return;
  walkStore.set({ pretrained: { ...p, phase: 'error', info: null, error: { message: t('walk.open.lost', { name: p.name, reason }), picker: true } } });
}

function contextOf(s: WalkState): StepContext | null {
  if (!s.input || !s.trace || !s.derived) return null;
  return { settings: s.traced ?? s.settings, input: s.input, trace: s.trace, scaledOn: s.scaledOn, derived: s.derived, head: s.head, beat: 0, hover: null, cell: 30, setHover: () => {}, later: (draw) => draw() };
}

export function beatsOf(step: number): number {
  const ctx = contextOf(walkStore.get());
  return ctx ? Math.max(1, STEPS[step].beats(ctx)) : 1;
}

/** Reading pace of the player at 1×: words per minute of a step's explanation, and the least rest. */
const READING_WPM = 200;
const MIN_REST_MS = 3000;

/** How long playback rests on a step's picture at 1×: long enough to read its explanation. */
function readingMs(step: number): number {
  const ctx = contextOf(walkStore.get());
  if (!ctx) return MIN_REST_MS;
  const words = STEPS[step].explain(ctx).replace(/<[^>]*>/g, ' ').split(/\s+/).filter(Boolean).length;
  return Math.max(MIN_REST_MS, (words * 60000) / READING_WPM);
}

export function gotoStep(step: number) {
  const n = STEPS.length;
  const target = Math.max(0, Math.min(n - 1, step));
  const playing = walkStore.get().playing;
  walkStore.set({ step: target, beat: playing && beatsOf(target) > 1 ? 1 : 0, hover: null });
}

export const next = () => gotoStep(walkStore.get().step + 1);
export const prev = () => gotoStep(walkStore.get().step - 1);
export const setHead = (head: number) => walkStore.set({ head, hover: null });
export const setSpeed = (speed: number) => {
  walkStore.set({ speed });
  if (walkStore.get().playing) schedule();
};
/** Takes the settings, speed, step and head a link describes (before the first compute). */
export const restore = (w: WalkUrlState) => walkStore.set({ settings: w.settings, speed: w.speed, step: w.step, head: w.head });
export const setHover = (hover: [number, number] | null) => {
  const h = walkStore.get().hover;
  if (h === hover || (h && hover && h[0] === hover[0] && h[1] === hover[1])) return;
  walkStore.set({ hover });
};

let timer: number | undefined;

function tick() {
  const s = walkStore.get();
  if (!s.playing) return;
  const n = beatsOf(s.step);
  if (s.beat > 0 && s.beat < n - 1) walkStore.set({ beat: s.beat + 1 });
  else if (s.beat === n - 1 && n > 1) walkStore.set({ beat: 0 });
  else if (s.step < STEPS.length - 1) gotoStep(s.step + 1);
  else {
    walkStore.set({ playing: false, restMs: 0 });
    return;
  }
  schedule();
}

function schedule() {
  clearTimeout(timer);
  const s = walkStore.get();
  const n = beatsOf(s.step);
  // Long animations (many cells) move faster per beat; a resting picture stays until its
  // explanation can have been read (the view shows the remaining time).
  const ms = (s.beat === 0 ? readingMs(s.step) : Math.max(120, Math.min(700, 5000 / n))) / s.speed;
  walkStore.set({ restMs: s.beat === 0 ? ms : 0 });
  timer = window.setTimeout(tick, ms);
}

export function play() {
  const s = walkStore.get();
  if (s.status !== 'ready') return;
  const atEnd = s.step === STEPS.length - 1 && s.beat === 0;
  const step = atEnd ? 0 : s.step;
  walkStore.set({ playing: true, step, beat: s.beat > 0 && !atEnd ? s.beat : beatsOf(step) > 1 ? 1 : 0, hover: null });
  schedule();
}

export function pause() {
  clearTimeout(timer);
  walkStore.set({ playing: false, restMs: 0 });
}

export const togglePlay = () => (walkStore.get().playing ? pause() : play());
