// Lab actions: the only code that calls the engine for the lab and changes labStore (the view
// reads the store and calls these). Engine work runs in the engine worker (engine/worker.ts).
import type { EngineClient } from '../engine/client';
import type { EngineInfo, LabSettings, TryResult, WorkerEvent } from '../engine/protocol';
import { labProblems, settingsToUrl } from './settings';
import { labStore } from './state';

const CHUNK = 1; // trainer steps per engine call: keeps pause responsive and curves smooth
const REFRESH_EVERY = 25; // steps between attention-map refreshes

let engine: EngineClient | null = null;

/** Connects the lab to the engine worker and follows its training events. */
export function attachEngine(client: EngineClient) {
  engine = client;
  // Metrics arrive in batches; the store coalesces updates into one render per frame.
  client.onEvent((ev: WorkerEvent) => {
    const s = labStore.get();
    if (ev.event === 'lab.metrics') labStore.set({ metrics: s.metrics.concat(ev.metrics), stepsPerSecond: ev.stepsPerSecond });
    else if (ev.event === 'lab.maps') labStore.set({ maps: ev.maps, mapsStep: ev.step });
    else if (ev.event === 'lab.stopped')
      labStore.set({ phase: ev.reason === 'done' ? 'done' : ev.reason === 'paused' ? 'paused' : 'error', message: ev.message ?? s.message });
  });
}

function client(): EngineClient {
  if (!engine) throw new Error('the lab is not attached to an engine');
  return engine;
}

export const engineReady = (info: EngineInfo) => labStore.set({ engine: info, phase: info.training ? 'idle' : 'unavailable' });
export const engineFailed = (message: string) => labStore.set({ engineError: message, phase: 'unavailable' });

/** Takes the settings a link describes (before the engine is ready). */
export const restore = (settings: LabSettings) => labStore.set({ settings });

/** The reader changed a setting: the URL follows, and any previous run no longer matches them. */
export async function changeSettings(settings: LabSettings) {
  history.replaceState(null, '', settingsToUrl(settings, new URL(location.href)));
  if (labStore.get().phase !== 'unavailable') await resetRun(settings);
  else labStore.set({ settings });
}

async function resetRun(settings: LabSettings) {
  labStore.set({ settings, phase: labStore.get().phase === 'unavailable' ? 'unavailable' : 'idle', metrics: [], stepsPerSecond: 0, maps: null, tryOutput: null, message: null, startedAt: null });
  if (labStore.get().engine?.training) await client().call('ok', { kind: 'lab.dispose' }).catch(() => undefined);
}

export async function train() {
  const s = labStore.get();
  if (s.phase === 'unavailable' || s.phase === 'training') return;
  const problems = labProblems(s.settings);
  if (problems.length) {
    labStore.set({ message: problems.join(' ') });
    return;
  }
  try {
    if (s.phase === 'idle' || s.phase === 'done' || s.phase === 'error') {
      await client().call('ok', { kind: 'lab.create', settings: s.settings, sample: [] }); // maps of the task's own example
      labStore.set({ metrics: [], maps: null });
    }
    labStore.set({ phase: 'training', message: null, startedAt: performance.now() });
    await client().call('ok', { kind: 'lab.run', chunk: CHUNK, refreshEvery: REFRESH_EVERY });
  } catch (e) {
    labStore.set({ phase: 'error', message: (e as Error).message });
  }
}

export async function pause() {
  if (labStore.get().phase === 'training') await client().call('ok', { kind: 'lab.pause' });
}

export async function reset() {
  const s = labStore.get();
  if (s.phase === 'training') await client().call('ok', { kind: 'lab.pause' });
  await resetRun(s.settings);
}

/** The model's checkpoint bytes and a file name for them, or null (the banner says why). */
export async function save(): Promise<{ bytes: Uint8Array; filename: string } | null> {
  const s = labStore.get().settings;
  try {
    const r = await client().call('save', { kind: 'lab.save' });
    return { bytes: r.bytes, filename: `attnlab-${s.task}-seed${s.seed}.safetensors` };
  } catch (e) {
    labStore.set({ message: `Could not save: ${(e as Error).message}` });
    return null;
  }
}

export async function tryModel(text: string, maxNew: number, describe: (r: TryResult) => string) {
  const s = labStore.get();
  if (s.phase === 'idle' || s.phase === 'unavailable') {
    labStore.set({ tryOutput: 'Train a model (or load a checkpoint) first.' });
    return;
  }
  try {
    const r = (await client().call('try', { kind: 'lab.try', text, maxNew })).result;
    labStore.set({ tryOutput: describe(r) });
  } catch (e) {
    labStore.set({ tryOutput: `The engine could not read that: ${(e as Error).message}` });
  }
}

/** Loads a checkpoint file; the settings follow it. Returns them, or null when the file was refused. */
export async function loadCheckpoint(name: string, bytes: Uint8Array): Promise<LabSettings | null> {
  try {
    const r = await client().call('loaded', { kind: 'lab.load', bytes, settings: labStore.get().settings }, [bytes.buffer]);
    history.replaceState(null, '', settingsToUrl(r.settings, new URL(location.href)));
    labStore.set({ settings: r.settings, phase: 'ready', metrics: [], stepsPerSecond: 0, maps: r.maps, mapsStep: 0, tryOutput: null, message: `Loaded ${name} (${r.settings.task}): try it below, or train it further.` });
    return r.settings;
  } catch (e) {
    labStore.set({ message: `“${name}” is not a checkpoint this lab can load: ${(e as Error).message}` });
    return null;
  }
}
