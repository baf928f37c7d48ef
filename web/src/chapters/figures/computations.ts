// The figures' computations, run in the engine worker: one entry per kind of figure request, each
// from its figure's <id>.compute.ts. The worker answers a request with its entry (computeFigure);
// the request and answer types of the protocol (FigureRequest, FigureData) are derived from this
// list, so a figure's page module (<id>.ts) can only ask for what is listed here.
import type { AttnLab } from '../../../attnlab';
import { chain } from './chain.compute';
import { check } from './check.compute';
import { context } from './context.compute';
import { checkpointing } from './checkpointing.compute';
import { crossmodal } from './crossmodal.compute';
import { dk } from './dk.compute';
import { encoderParts, encoderTrain } from './encoder.compute';
import { everyHead } from './every_head.compute';
import { flash } from './flash.compute';
import { forecast } from './forecast.compute';
import { fp16 } from './fp16.compute';
import { longrange } from './longrange.compute';
import { masks } from './masks.compute';
import { pe } from './pe.compute';
import { poemLinks } from './poem_links.compute';
import { permutation } from './permutation.compute';
import { reshape } from './reshape.compute';
import { rope } from './rope.compute';
import { sparse } from './sparse.compute';
import type { ShippedName, ShippedRef } from './shipped.compute';
import type { Progress } from './training.compute';
import { vision } from './vision.compute';

const COMPUTATIONS = { chain, dk, reshape, permutation, pe, rope, longrange, sparse, masks, fp16, flash, checkpointing, vision, crossmodal, forecast, check, encoderParts, encoderTrain, context, everyHead, poemLinks };

type Computations = typeof COMPUTATIONS;
/** The kinds of figure request the worker computes. */
export type FigureKind = keyof Computations;
/** What each figure asks of the engine. Inputs are seeded, so a request always gives the same numbers. */
export type FigureRequest = { [K in FigureKind]: Parameters<Computations[K]>[1] }[FigureKind];
/** The worker's answer to each request. */
export type FigureData = { [K in FigureKind]: ReturnType<Computations[K]> }[FigureKind];
/** A trained figure's training progress, posted after each chunk of steps. */
export interface FigureProgress { figure: FigureKind; step: number; total: number; loss: number; accuracy: number }

/** A shipped model's fetch while a figure waits for it (the worker opens it before computing). */
export interface FigureLoad { figure: FigureKind; model: ShippedName; loaded: number; total: number }

/** The shipped model a request reads (fetched and opened by the worker first), or null. */
export const shippedOf = (r: FigureRequest): ShippedRef | null => ('shipped' in r ? r.shipped : null);

/** Computes the figure `r` asks for; a trained figure reports its training through `progress`. */
export function computeFigure(lab: AttnLab, r: FigureRequest, progress: (p: FigureProgress) => void = () => {}): FigureData {
  const compute = COMPUTATIONS[r.figure] as (lab: AttnLab, r: FigureRequest, progress: Progress) => FigureData;
  return compute(lab, r, (step, total, loss, accuracy) => progress({ figure: r.figure, step, total, loss, accuracy }));
}
