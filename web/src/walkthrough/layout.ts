// Geometry: cell sizes from the available width, and histogram bins (layout layer).
import * as d3 from 'd3';

/** A cell size so that `columns` cells (plus labels and operators) fit in `width`. */
export function cellSize(width: number, columns: number, min = 20, max = 44): number {
  const usable = width - 160;
  return Math.max(min, Math.min(max, Math.floor(usable / Math.max(1, columns))));
}

export function bins(values: number[], domain: [number, number], count = 24) {
  const b = d3.bin().domain(domain).thresholds(d3.range(count).map((k) => domain[0] + ((domain[1] - domain[0]) * k) / count))(values);
  return b.map((x) => ({ x0: x.x0 ?? domain[0], x1: x.x1 ?? domain[1], count: x.length }));
}

export function symmetricDomain(...lists: number[][]): [number, number] {
  let m = 0;
  for (const l of lists) for (const v of l) m = Math.max(m, Math.abs(v));
  m = m || 1;
  return [-m, m];
}
