// The ten chapters, one per section of the article: which live figures and which experiments each
// shows, and where it leads (the walkthrough, the lab). Texts live in i18n (ch.<n>.*).
import type { Key } from '../i18n';

export type FigureId = 'chain' | 'dk' | 'reshape' | 'permutation' | 'pe' | 'rope' | 'sparse' | 'masks' | 'fp16' | 'flash' | 'check' | 'connectivity' | 'vision' | 'crossmodal' | 'longrange' | 'checkpointing' | 'forecast';

export interface Chapter {
  n: number;
  /** The article's sections it covers, as cited ("2.1–2.3"). */
  sections: string;
  figures: FigureId[];
  /** Experiment names (lab.experiments()); one missing from the engine build shows a plain line. */
  experiments: string[];
  leadsTo?: 'walk' | 'lab';
}

export const CHAPTERS: Chapter[] = [
  { n: 1, sections: '1.1–1.3', figures: ['chain'], experiments: ['lstm'] },
  { n: 2, sections: '2.1–2.3', figures: ['dk'], experiments: ['scaling', 'tie-qk'], leadsTo: 'walk' },
  { n: 3, sections: '3.1–3.3', figures: ['reshape'], experiments: ['heads', 'cost', 'kv-heads'] },
  { n: 4, sections: '4.1–4.3', figures: ['permutation', 'pe', 'rope'], experiments: ['positional', 'permutation'] },
  { n: 5, sections: '5.1–5.3', figures: ['longrange', 'sparse'], experiments: ['variants'] },
  { n: 6, sections: '6.1–6.4', figures: ['masks', 'fp16', 'flash', 'checkpointing'], experiments: ['mask', 'fp16'] },
  { n: 7, sections: '7.1–7.3', figures: ['vision', 'crossmodal', 'forecast'], experiments: ['series'] },
  { n: 8, sections: '8', figures: ['check'], experiments: [] },
  { n: 9, sections: '9.1–9.4', figures: ['connectivity'], experiments: ['normalizer', 'importance', 'norm'] },
  { n: 10, sections: '10', figures: [], experiments: [], leadsTo: 'lab' },
];

export const chapterKey = (n: number, part: 'title' | 'lead' | 'body' | 'sec') => `ch.${n}.${part}` as Key;
