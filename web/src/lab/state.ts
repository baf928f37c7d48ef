// The training lab's store.
import type { AttentionMaps, LabPicture, LabSettings, StepMetrics, TaskInfo } from '../engine/protocol/lab';
import type { EngineInfo } from '../engine/protocol/messages';
import { Store } from '../util/store';
import { DEFAULT_LAB } from './settings';

/** The model the engine worker holds. */
export interface LabModel {
  /** The settings it was built and last trained with (the form may differ: see settingsChange). */
  settings: LabSettings;
  /** Tags its training events; events of any other run are stale. */
  run: number;
  task: TaskInfo;
  /** Its parameter count (the engine's Model.numParameters). */
  parameters: number;
}

/** A run that trained to its end, kept for comparison (its settings and curves). */
export interface FinishedRun {
  /** 1, 2, ... in the order the runs finished. */
  id: number;
  settings: LabSettings;
  metrics: StepMetrics[];
}

/** A message about a failed action: one sentence, and the engine's own text one click away. */
export interface LabError {
  text: string;
  details: string | null;
}

export interface LabState {
  /** What the form shows. */
  settings: LabSettings;
  engine: EngineInfo | null;
  engineError: string | null;
  /** idle: no model; ready: model loaded, not trained here; training; paused; done; error */
  phase: 'unavailable' | 'idle' | 'ready' | 'training' | 'paused' | 'done' | 'error';
  model: LabModel | null;
  /** The model's step count when its current run began (the run ends at runStart + its steps). */
  runStart: number;
  message: string | null;
  error: LabError | null;
  metrics: StepMetrics[];
  stepsPerSecond: number;
  startedAt: number | null;
  /** A run that would take long, paused after its speed was measured until the reader confirms. */
  longRun: { seconds: number; stepsPerSecond: number } | null;
  /** The reader confirmed this model's long run (or it was measured short enough). */
  longRunChecked: boolean;
  maps: AttentionMaps | null;
  mapsStep: number;
  /** The series model's forecast or the shapes model's images, as the engine last computed them. */
  picture: LabPicture | null;
  tryOutput: { text: string; error: boolean } | null;
  /** The engine's parameter count of the model the form describes (null until counted, or when the form is invalid). */
  formParameters: { architecture: LabSettings['architecture']; count: number } | null;
  /** A text model's latest sample: its continuation of the corpus's prompt at `step` (the engine's). */
  sample: { step: number; prompt: string; text: string } | null;
  /** A corpus's training text being fetched (bytes so far, of total; 0 = unknown). */
  textLoad: { name: string; loaded: number; total: number } | null;
  /** The name of the reader's own text file, once picked. */
  textFile: string | null;
  /** Finished runs, oldest first (at most MAX_RUNS), and the ids the comparison overlays. */
  runs: FinishedRun[];
  compare: number[];
}

/** Finished runs kept for comparison; the oldest goes first. */
export const MAX_RUNS = 8;

export const labStore = new Store<LabState>({
  settings: DEFAULT_LAB,
  engine: null,
  engineError: null,
  phase: 'idle',
  model: null,
  runStart: 0,
  message: null,
  error: null,
  metrics: [],
  stepsPerSecond: 0,
  startedAt: null,
  longRun: null,
  longRunChecked: false,
  maps: null,
  mapsStep: 0,
  picture: null,
  tryOutput: null,
  formParameters: null,
  sample: null,
  textLoad: null,
  textFile: null,
  runs: [],
  compare: [],
});
