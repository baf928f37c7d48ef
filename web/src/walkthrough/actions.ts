// Walkthrough actions: the only code that changes walkStore (engine calls, navigation, playback).
import type { EngineClient } from '../engine/client';
import { derive } from './derive';
import { buildInput, inputFromModelTrace, settingsOfModelTrace, settingsProblems, type WalkSettings } from './inputs';
import { walkStore } from './state';
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
    walkStore.set({ settings, status: 'error', error: problems.join(' ') });
    return;
  }
  if (!engine) return;
  const seq = ++requestSeq;
  walkStore.set({ settings, status: 'computing', error: null });
  try {
    let trace, input, traced;
    if (settings.model === 'trained') {
      // One layer of the lab's model, recorded by the engine in the worker (Model.trace).
      trace = (await engine.call('trace', { kind: 'lab.trace', text: settings.modelInput, layer: settings.layer })).result;
      input = inputFromModelTrace(trace);
      traced = settingsOfModelTrace(settings, trace);
    } else {
      input = buildInput(settings);
      trace = await engine.trace(input.request);
      traced = settings;
    }
    if (seq !== requestSeq) return;
    const derived = derive(trace);
    const s = walkStore.get();
    walkStore.set({
      status: 'ready',
      traced,
      input,
      trace,
      derived,
      version: s.version + 1,
      head: Math.min(s.head, derived.H - 1),
      beat: 0,
      hover: null,
    });
  } catch (e) {
    if (seq !== requestSeq) return;
    walkStore.set({ status: 'error', error: e instanceof Error ? e.message : String(e) });
  }
}

export function beatsOf(step: number): number {
  const s = walkStore.get();
  if (!s.input || !s.trace || !s.derived) return 1;
  const ctx = { settings: s.traced ?? s.settings, input: s.input, trace: s.trace, derived: s.derived, head: s.head, beat: 0, hover: null, cell: 30, setHover: () => {} } as StepContext;
  return Math.max(1, STEPS[step].beats(ctx));
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
export const setSpeed = (speed: number) => walkStore.set({ speed });
/** Takes the settings and speed a link describes (before the first compute). */
export const restore = (w: WalkUrlState) => walkStore.set({ settings: w.settings, speed: w.speed });
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
    walkStore.set({ playing: false });
    return;
  }
  schedule();
}

function schedule() {
  clearTimeout(timer);
  const s = walkStore.get();
  const n = beatsOf(s.step);
  // Long animations (many cells) move faster per beat; resting pictures stay a little longer.
  const base = s.beat === 0 ? 2200 : Math.max(120, Math.min(700, 5000 / n));
  timer = window.setTimeout(tick, base / s.speed);
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
  walkStore.set({ playing: false });
}

export const togglePlay = () => (walkStore.get().playing ? pause() : play());
