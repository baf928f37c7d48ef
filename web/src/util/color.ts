// Colour maps: perceptually uniform and colour-blind safe. Sequential values (attention
// weights, probabilities) use viridis; signed values (embeddings, scores, projections) use
// the diverging PuOr map, centred on 0 with a symmetric domain.
import * as d3 from 'd3';

export type ColorKind = 'diverging' | 'sequential';

export interface ColorScale {
  kind: ColorKind;
  domain: [number, number];
  color(v: number): string;
  /** Readable text colour over color(v). */
  ink(v: number): string;
}

const MASKED = '#e9e6e1';

function luminance(css: string): number {
  const c = d3.rgb(css);
  const lin = (x: number) => {
    const s = x / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
}

export function divergingScale(maxAbs: number): ColorScale {
  const m = maxAbs > 0 && Number.isFinite(maxAbs) ? maxAbs : 1;
  // PuOr runs orange (low) to purple (high); flip so positive is orange-warm? Keep purple = positive.
  const s = d3.scaleDiverging(d3.interpolatePuOr).domain([m, 0, -m]);
  const color = (v: number) => (Number.isFinite(v) ? s(v) : MASKED);
  return { kind: 'diverging', domain: [-m, m], color, ink: (v) => (luminance(color(v)) > 0.33 ? '#1d1b19' : '#fbfaf8') };
}

export function sequentialScale(max = 1, min = 0): ColorScale {
  const s = d3.scaleSequential(d3.interpolateViridis).domain([min, max]);
  const color = (v: number) => (Number.isFinite(v) ? s(v) : MASKED);
  return { kind: 'sequential', domain: [min, max], color, ink: (v) => (luminance(color(v)) > 0.3 ? '#1d1b19' : '#fbfaf8') };
}

export function maxAbs(...arrays: ArrayLike<number>[]): number {
  let m = 0;
  for (const a of arrays) for (let i = 0; i < a.length; i++) if (Number.isFinite(a[i])) m = Math.max(m, Math.abs(a[i]));
  return m;
}

export const HEAD_COLORS = ['#4269d0', '#efb118', '#ff725c', '#6cc5b0', '#a463f2', '#ff8ab7', '#97bbf5', '#9c6b4e'];
export const maskedFill = MASKED;
