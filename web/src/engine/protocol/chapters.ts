// The chapters' messages to the engine worker: one figure request per live figure (the requests
// and answers are the figures' own, chapters/figures/computations.ts) and the experiments of the
// article (lab.experiments, lab.runExperiment). Plain data only; Float32Arrays are transferred.
import type { ExperimentInfo, ExperimentMessage, ExperimentOptions, ExperimentParameter, ExperimentProgress, ExperimentResult } from '../../../attnlab';
import type { FigureData, FigureLoad, FigureProgress, FigureRequest } from '../../chapters/figures/computations';

export type { ExperimentInfo, ExperimentMessage, ExperimentOptions, ExperimentParameter, ExperimentProgress, ExperimentResult };
export type { FigureData, FigureLoad, FigureProgress, FigureRequest };

export type ChapterRequest =
  | { kind: 'figure'; request: FigureRequest }
  | { kind: 'experiments.list' }
  // base: the page's URL, under which the files an experiment reads are served (experiment_inputs.ts).
  | { kind: 'experiment.run'; name: string; options: ExperimentOptions; base: string };

export type ChapterReply =
  | { kind: 'figure'; data: FigureData }
  | { kind: 'experiments'; list: ExperimentInfo[] }
  | { kind: 'experiment'; result: ExperimentResult };

/** Progress of a running experiment, batched: the worker posts at most every PROGRESS_EVERY_MS. */
export const PROGRESS_EVERY_MS = 100;
export type ChapterEvent =
  | { event: 'experiment.progress'; points: ExperimentProgress[] }
  | { event: 'figure.progress'; progress: FigureProgress }
  | { event: 'figure.load'; load: FigureLoad };
