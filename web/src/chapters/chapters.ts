// The ten chapters, one per section of the article: which live figures and which experiments each
// shows, and where it leads (the walkthrough, the lab). Texts live in i18n (ch.<n>.*); each figure
// is its own module in figures/.
import type { Key } from '../i18n';
import { chainFigure } from './figures/chain';
import { checkFigure } from './figures/check';
import { checkpointingFigure } from './figures/checkpointing';
import { connectivityFigure } from './figures/connectivity';
import { contextBrownFigure, contextTangFigure } from './figures/context';
import { crossmodalFigure } from './figures/crossmodal';
import { dkFigure } from './figures/dk';
import { everyHeadFigure } from './figures/every_head';
import type { AnyFigure } from './figures/figure';
import { flashFigure } from './figures/flash';
import { forecastFigure } from './figures/forecast';
import { fp16Figure } from './figures/fp16';
import { longrangeFigure } from './figures/longrange';
import { masksFigure } from './figures/masks';
import { peFigure } from './figures/pe';
import { permutationFigure } from './figures/permutation';
import { poemLinksFigure } from './figures/poem_links';
import { reshapeFigure } from './figures/reshape';
import { ropeFigure } from './figures/rope';
import { sparseFigure } from './figures/sparse';
import { visionFigure } from './figures/vision';
import type { LiveView } from '../ui/experiment_panel';
import { InductionLive } from './induction_live';

export interface Chapter {
  n: number;
  /** The article's sections it covers, as cited ("2.1–2.3"). */
  sections: string;
  figures: AnyFigure[];
  /** Experiment names (lab.experiments()); one missing from the engine build shows a plain line. */
  experiments: string[];
  leadsTo?: 'walk' | 'lab';
  /** A hands-on part after the figures: §10's encoder built and trained step by step (encoder_builder.ts). */
  builder?: 'encoder';
}

export const CHAPTERS: Chapter[] = [
  { n: 1, sections: '1.1–1.3', figures: [chainFigure, contextBrownFigure, contextTangFigure], experiments: ['lstm'] },
  { n: 2, sections: '2.1–2.3', figures: [dkFigure], experiments: ['scaling', 'tie-qk'], leadsTo: 'walk' },
  { n: 3, sections: '3.1–3.3', figures: [reshapeFigure, everyHeadFigure], experiments: ['heads', 'cost', 'kv-heads', 'heads-real'] },
  { n: 4, sections: '4.1–4.3', figures: [permutationFigure, peFigure, ropeFigure], experiments: ['positional', 'permutation'] },
  { n: 5, sections: '5.1–5.3', figures: [longrangeFigure, poemLinksFigure, sparseFigure], experiments: ['variants', 'induction'] },
  { n: 6, sections: '6.1–6.4', figures: [masksFigure, fp16Figure, flashFigure, checkpointingFigure], experiments: ['mask', 'fp16'] },
  { n: 7, sections: '7.1–7.3', figures: [visionFigure, crossmodalFigure, forecastFigure], experiments: ['series'] },
  { n: 8, sections: '8', figures: [checkFigure], experiments: [] },
  { n: 9, sections: '9.1–9.4', figures: [connectivityFigure], experiments: ['normalizer', 'importance', 'norm'] },
  { n: 10, sections: '10', figures: [], experiments: [], builder: 'encoder', leadsTo: 'lab' },
];

/** Experiments drawn live by a view of their own (their progress points carry measurements). */
export const LIVE_VIEWS: Record<string, () => LiveView> = { induction: () => new InductionLive() };

export const chapterKey = (n: number, part: 'title' | 'lead' | 'body') => `ch.${n}.${part}` as Key;
