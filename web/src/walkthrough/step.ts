// What every walkthrough step script provides. A step is narration (plain-English text) plus
// choreography (how many beats it animates, and what each beat highlights); the drawing is done
// by the step's stage component in components/.
import type { TraceResult } from '../engine/protocol/walk';
import type { Derived } from './derive';
import type { WalkInput, WalkSettings } from './inputs';
import type { WalkState } from './state';

export interface StepContext {
  settings: WalkSettings;
  input: WalkInput;
  trace: TraceResult;
  /** See WalkState.scaledOn: the engine's scaled stages with scaling on, when the trace has it off. */
  scaledOn: WalkState['scaledOn'];
  derived: Derived;
  head: number;
  beat: number;
  hover: [number, number] | null;
  /** Cell size in px chosen by the layout for this step. */
  cell: number;
  setHover(cell: [number, number] | null): void;
  /**
   * Draws `draw` in the next animation frame, unless the stage is drawn again before it (that
   * drawing draws everything itself). A step that draws more cells than one frame's work affords
   * draws its first rows at once and hands the rest here; until they are drawn the stage carries
   * data-drawing.
   */
  later(draw: () => void): void;
}

export interface Step {
  id: string;
  /** The step's name in the page's language. */
  title(): string;
  /** Does the step show one head at a time (so the head picker applies)? */
  perHead: boolean;
  /** Number of animation beats (>= 1). Beat 0 is the resting picture. */
  beats(ctx: StepContext): number;
  /** Plain-English explanation (HTML), may depend on the settings and data. */
  explain(ctx: StepContext): string;
  /** What the current beat is doing, in one line (or ''). */
  caption(ctx: StepContext): string;
  /** Draw into `host` (cleared by the player when the step, head or trace changes). */
  render(host: HTMLElement, ctx: StepContext): void;
  /** Widest matrix row, in cells, so the layout can pick a cell size. */
  columns(ctx: StepContext): number;
}
