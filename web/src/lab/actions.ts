// Lab actions: the only code that calls the engine for the lab and changes labStore (the view
// reads the store and calls these). Engine work runs in the engine worker (engine/worker/).
import { t } from '../i18n';
import type { EngineClient } from '../engine/client/client';
import type { LabEvent, LabSettings, RunInfo, TryResult } from '../engine/protocol/lab';
import type { EngineInfo } from '../engine/protocol/messages';
import { checkpointError } from './errors';
import { labProblems, settingsChange, settingsToUrl, taskLabel } from './settings';
import { labStore, MAX_RUNS, type LabState } from './state';
import { textSource } from './text_source';
import { checkTryInput } from './try_input';

const CHUNK = 1; // trainer steps per engine call: keeps pause responsive and curves smooth
const REFRESH_EVERY = 25; // steps between attention-map refreshes
/** A run estimated to take longer than this pauses, once its speed is measured, until the reader confirms. */
export const LONG_RUN_SECONDS = 180;
/** Training time before the speed counts as measured (the first steps allocate and run slower). */
const MEASURE_MS = 1500;

let engine: EngineClient | null = null;

/** Connects the lab to the engine worker and follows its training events. */
export function attachEngine(client: EngineClient) {
  engine = client;
  client.onEvent((ev: LabEvent) => {
    const s = labStore.get();
    if (!s.model || ev.run !== s.model.run) return; // a run that Reset or a new model ended
    // Metrics arrive in batches; the store coalesces updates into one render per frame.
    if (ev.event === 'lab.metrics') {
      labStore.set({ metrics: s.metrics.concat(ev.metrics), stepsPerSecond: ev.stepsPerSecond });
      checkLongRun(labStore.get());
    } else if (ev.event === 'lab.maps') labStore.set({ maps: ev.maps, mapsStep: ev.step });
    else if (ev.event === 'lab.picture') labStore.set({ picture: ev.picture });
    else if (ev.event === 'lab.sample') labStore.set({ sample: { step: ev.step, prompt: ev.prompt, text: ev.text } });
    else if (ev.event === 'lab.stopped') {
      if (ev.reason === 'error') labStore.set({ phase: 'error', error: { text: t('lab.phase.error'), details: ev.message ?? null } });
      else {
        labStore.set({ phase: ev.reason });
        if (ev.reason === 'done') keepRun(labStore.get());
        if (ev.reason === 'paused' && resumeWhenPaused) {
          resumeWhenPaused = false;
          void train();
        }
      }
    }
  });
}

function client(): EngineClient {
  if (!engine) throw new Error('the lab is not attached to an engine');
  return engine;
}

/** Pauses a run whose measured speed says it would take longer than LONG_RUN_SECONDS. */
function checkLongRun(s: LabState) {
  if (s.phase !== 'training' || s.longRunChecked || s.startedAt == null || !s.model) return;
  if (performance.now() - s.startedAt < MEASURE_MS || !(s.stepsPerSecond > 0)) return;
  const done = s.metrics.length ? s.metrics[s.metrics.length - 1].step : 0;
  const seconds = (runTarget(s) - done) / s.stepsPerSecond;
  if (seconds <= LONG_RUN_SECONDS) {
    labStore.set({ longRunChecked: true });
    return;
  }
  labStore.set({ longRun: { seconds, stepsPerSecond: s.stepsPerSecond } });
  void client().call('ok', { kind: 'lab.pause' });
}

/** The step count the current run ends at. */
export function runTarget(s: LabState): number {
  return s.model ? s.runStart + s.model.settings.steps : s.settings.steps;
}

/** Resolves once the engine has loaded (a Train pressed before that waits for it). */
let engineLoaded: () => void = () => {};
const engineUp = new Promise<void>((resolve) => (engineLoaded = resolve));

export function engineReady(info: EngineInfo) {
  labStore.set({ engine: info, phase: info.training ? 'idle' : 'unavailable' });
  engineLoaded();
  if (info.training) void countParameters(labStore.get().settings);
}

/** Tags the latest count request: an answer to an older one (the form changed since) is dropped. */
let countRequest = 0;
/** Asks the engine for the parameter count of the model the settings describe (valid settings only). */
async function countParameters(settings: LabSettings) {
  const id = ++countRequest;
  if (!engine || labProblems(settings).length) {
    labStore.set({ formParameters: null });
    return;
  }
  try {
    const r = await engine.call('count', { kind: 'lab.count', settings });
    if (id === countRequest) labStore.set({ formParameters: r.parameters === null ? null : { architecture: settings.architecture, count: r.parameters } });
  } catch {
    if (id === countRequest) labStore.set({ formParameters: null }); // the engine refused: Train reports why
  }
}
export const engineFailed = (message: string) => labStore.set({ engineError: message, phase: 'unavailable' });

/**
 * The engine worker ended (its model with it) and a new one is starting: the settings and the
 * curves drawn so far stay; Train builds a new model. `restarted` says whether the new one is ready.
 */
export function engineLost(reason: string, restarted: EngineInfo | null) {
  const curves = t(labStore.get().metrics.length ? 'lab.lost.curves' : 'lab.lost.nothing');
  const error = {
    text: t(restarted ? 'lab.lost.restarted' : 'lab.lost.restarting', { kept: curves }),
    details: reason,
  };
  if (restarted) labStore.set({ engine: restarted, engineError: null, error });
  else labStore.set({ phase: 'idle', model: null, maps: null, picture: null, tryOutput: null, longRun: null, message: null, error });
}

/** Takes the settings a link describes (before the engine is ready). */
export const restore = (settings: LabSettings) => labStore.set({ settings });

/**
 * The reader changed a setting: the URL follows. Nothing is discarded here: Train decides, from
 * what changed, whether it continues the model or builds a new one (the banner says which).
 */
export function changeSettings(settings: LabSettings) {
  history.replaceState(null, '', settingsToUrl(settings, new URL(location.href)));
  labStore.set({ settings, error: null });
  if (labStore.get().engine && labStore.get().phase !== 'unavailable') void countParameters(settings);
}

/** Puts the form back to the current model's settings (the reader keeps the model after all). */
export function keepModel(): LabSettings | null {
  const m = labStore.get().model;
  if (m) changeSettings(m.settings);
  return m?.settings ?? null;
}

function adopt(info: RunInfo, settings: LabSettings, patch: Partial<LabState> = {}) {
  labStore.set({ model: { settings, run: info.run, task: info.task, parameters: info.parameters }, runStart: info.steps, picture: info.picture ?? null, ...patch });
}

/** The reader's file the current text model was built from (null for the other models). */
let modelFile: string | null = null;

/** Set while Train waits for the engine to create or continue a model (a second click is ignored). */
let starting = false;

export async function train() {
  if (!labStore.get().engine && !labStore.get().engineError) {
    // Pressed while the engine still loads: the banner says so, and the run starts once it is up.
    if (starting) return;
    starting = true;
    labStore.set({ message: t('lab.trainWhenLoaded'), error: null });
    await engineUp;
    starting = false;
    labStore.set({ message: null });
  }
  const s = labStore.get();
  if (s.phase === 'unavailable' || s.phase === 'training' || starting || !s.engine) return;
  const problems = labProblems(s.settings);
  if (problems.length) {
    labStore.set({ error: { text: t('lab.fixFirst', { problems: problems.map((p) => p.message).join(' ') }), details: null } });
    return;
  }
  // A text model trained on the reader's file is a new model once another file is picked.
  const otherFile = s.settings.task === 'text' && s.settings.corpus === 'file' && s.textFile !== modelFile;
  const change = s.model && !otherFile ? settingsChange(s.model.settings, s.settings) : 'model';
  starting = true;
  // A new model replaces the worker's: once asked for, the old one is gone even when the engine refuses the new one.
  let replaced = false;
  try {
    if (change === 'model' || s.phase === 'error') {
      // Train on text: the corpus's text (fetched once, with its progress) or the reader's file.
      const text = s.settings.task === 'text' ? await textSource(s.settings.corpus) : undefined;
      const transfer = text ? [text.bytes.buffer] : undefined;
      replaced = true;
      const r = await client().call('created', { kind: 'lab.create', settings: s.settings, sample: [], text }, transfer); // maps of the task's own example
      adopt(r.info, s.settings, { metrics: [], maps: null, mapsStep: 0, tryOutput: null, stepsPerSecond: 0, longRunChecked: false, sample: null });
      replaced = false;
      modelFile = text && s.settings.corpus === 'file' ? s.textFile : null;
    } else if (change === 'training' || s.phase === 'done') {
      // Same model, further training ("train 600 more", or with a new learning rate or batch).
      const r = await client().call('created', { kind: 'lab.continue', settings: s.settings });
      adopt(r.info, s.settings, { longRunChecked: false });
    }
    labStore.set({ phase: 'training', message: null, error: null, longRun: null, startedAt: performance.now() });
    await client().call('ok', { kind: 'lab.run', chunk: CHUNK, refreshEvery: REFRESH_EVERY });
  } catch (e) {
    const gone = replaced ? { model: null, maps: null, picture: null, sample: null, tryOutput: null } : {};
    labStore.set({ phase: 'error', error: { text: t('lab.refused'), details: (e as Error).message }, ...gone });
  } finally {
    starting = false;
  }
}

/**
 * Set when the reader confirms a long run while the pause the long-run check asked for is still
 * on its way: the worker's 'paused' then starts the run again instead of leaving it paused.
 */
let resumeWhenPaused = false;

/** Goes on with a run that was paused because it would take long. */
export async function confirmLongRun() {
  labStore.set({ longRunChecked: true, longRun: null });
  if (labStore.get().phase === 'training') {
    resumeWhenPaused = true;
    return;
  }
  await train();
}

export async function pause() {
  resumeWhenPaused = false;
  if (labStore.get().phase === 'training') await client().call('ok', { kind: 'lab.pause' });
}

/** Always a clean start: the model, its run and everything shown of it go. */
export async function reset() {
  const s = labStore.get();
  if (s.phase === 'unavailable') return;
  resumeWhenPaused = false;
  // The store forgets the run first, so its events still in flight are dropped.
  labStore.set({ phase: 'idle', model: null, runStart: 0, metrics: [], stepsPerSecond: 0, maps: null, mapsStep: 0, picture: null, tryOutput: null, sample: null, message: null, error: null, startedAt: null, longRun: null, longRunChecked: false });
  await client().call('ok', { kind: 'lab.dispose' });
}

/** The model's checkpoint bytes and a file name for them, or null (the banner says why). */
export async function save(): Promise<{ bytes: Uint8Array; filename: string } | null> {
  const m = labStore.get().model;
  if (!m) {
    labStore.set({ error: { text: t('lab.noModel'), details: null } });
    return null;
  }
  try {
    const r = await client().call('save', { kind: 'lab.save' });
    return { bytes: r.bytes, filename: `attnlab-${m.settings.task}-seed${m.settings.seed}.safetensors` };
  } catch (e) {
    labStore.set({ error: { text: t('lab.saveFailed'), details: (e as Error).message } });
    return null;
  }
}

/** Runs the model on the reader's text, checked first against the task's format. */
export async function tryModel(text: string, describe: (settings: LabSettings, r: TryResult) => string, maxNew: (settings: LabSettings) => number) {
  const m = labStore.get().model;
  if (!m) {
    labStore.set({ tryOutput: { text: t('lab.try.first'), error: true } });
    return;
  }
  const input = checkTryInput(text, m.settings, m.task);
  if ('error' in input) {
    labStore.set({ tryOutput: { text: input.error, error: true } });
    return;
  }
  try {
    const r = (await client().call('try', { kind: 'lab.try', text: input.text, maxNew: maxNew(m.settings) })).result;
    labStore.set({ tryOutput: { text: describe(m.settings, r), error: false } });
  } catch (e) {
    labStore.set({ tryOutput: { text: t('lab.try.failed', { message: (e as Error).message }), error: true } });
  }
}

/** A picked file the browser could not read (moved, deleted or unreadable after it was chosen). */
export function checkpointFileUnreadable(name: string, e: unknown) {
  const details = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  labStore.set({ error: { text: t('lab.ckpt.refused', { file: name, why: t('lab.ckpt.fileUnreadable') }), details } });
}

/** A picked text file the browser could not read. */
export function textFileUnreadable(name: string, e: unknown) {
  const details = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  labStore.set({ error: { text: t('lab.text.unreadable', { file: name }), details } });
}

/** Loads a checkpoint file; the settings follow it. Returns them, or null when the file was refused. */
export async function loadCheckpoint(name: string, bytes: Uint8Array): Promise<LabSettings | null> {
  try {
    const r = await client().call('loaded', { kind: 'lab.load', bytes, settings: labStore.get().settings }, [bytes.buffer]);
    history.replaceState(null, '', settingsToUrl(r.settings, new URL(location.href)));
    adopt(r.info, r.settings, {
      settings: r.settings,
      phase: 'ready',
      metrics: [],
      stepsPerSecond: 0,
      maps: r.maps,
      mapsStep: 0,
      tryOutput: null,
      error: null,
      longRun: null,
      longRunChecked: false,
      message: t('lab.loaded', { name, task: taskLabel(r.settings.task) }),
    });
    return r.settings;
  } catch (e) {
    labStore.set({ error: checkpointError(name, e as Error) });
    return null;
  }
}

// ---- compare runs ----

/** Keeps a finished run's settings and curves; the two newest runs are overlaid by default. */
function keepRun(s: LabState) {
  if (!s.model || !s.metrics.length) return;
  const id = (s.runs.length ? s.runs[s.runs.length - 1].id : 0) + 1;
  const runs = [...s.runs, { id, settings: s.model.settings, metrics: s.metrics }].slice(-MAX_RUNS);
  const kept = new Set(runs.map((r) => r.id));
  const compare = s.compare.filter((c) => kept.has(c));
  labStore.set({ runs, compare: compare.length >= 2 ? compare : runs.slice(-2).map((r) => r.id) });
}

/** Adds a finished run to the overlay, or takes it off. */
export function toggleCompare(id: number) {
  const c = labStore.get().compare;
  labStore.set({ compare: c.includes(id) ? c.filter((x) => x !== id) : [...c, id].sort((a, b) => a - b) });
}

/** Forgets every finished run. */
export const clearRuns = () => labStore.set({ runs: [], compare: [] });
