// A chapter figure on the page: its controls (kept in the URL as f.<id>.<control>), the request
// it sends the engine worker for the controls' values, and how it draws the answer. Its worker
// side is a computation of chapters/figures/computations.ts (usually the figure's own
// <id>.compute.ts), which types the request and the answer. LiveFigure (../live_figure.ts) runs a
// figure: controls, loading, training progress, errors; the figure only draws.
import type { Key } from '../../i18n';
import type { FigureData, FigureKind, FigureRequest } from './computations';
import type { ShippedName } from '../../engine/protocol/shipped';

/** A select of the figure's bar. */
export interface Control {
  name: string;
  label: Key;
  values: readonly (number | string)[];
  /** The default; a link's f.<id>.<name> overrides it. */
  value: number | string;
  /** Words for some values (both languages); the others show as they are. */
  labels?: Record<string, Key>;
  /** A text field instead of a select (values is then empty): a line, a short word, or an area of lines. */
  input?: 'text' | 'word' | 'area';
  /** A text field left empty reads as this (e.g. the chosen model's own default sentence). */
  fallback?: (v: Values) => string;
}

/** The current value of each control, by name. */
export type Values = (name: string) => number | string;

export type RequestOf<K extends FigureKind> = Extract<FigureRequest, { figure: K }>;
export type DataOf<K extends FigureKind> = Extract<FigureData, { figure: K }>;

export interface Figure<K extends FigureKind = FigureKind> {
  /** The figure's name in the page (data-figure, the URL's f.<id>.*, the chapters' state). */
  id: string;
  controls: readonly Control[];
  /** The worker trains a model first: the figure shows its progress until it answers. */
  trained?: boolean;
  /**
   * The shipped model the figure reads (models/<name>.safetensors): the figure waits until it is
   * scrolled into view, then the worker fetches the model (once) and the figure shows its progress.
   */
  shipped?: (v: Values) => ShippedName;
  request(v: Values): RequestOf<K>;
  draw(host: HTMLElement, data: DataOf<K>, v: Values): void;
}

/** A figure whose request and drawing agree on the computation K (inferred from `request`). */
export const defineFigure = <K extends FigureKind>(f: Figure<K>): Figure<K> => f;

/** Any one figure (what a chapter lists). */
export type AnyFigure = { [K in FigureKind]: Figure<K> }[FigureKind];
