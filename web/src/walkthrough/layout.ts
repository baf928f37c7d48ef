// Geometry: cell sizes from the available width, and histogram bins (layout layer).
import * as d3 from 'd3';

/** Below this stage width the matrices of a step wrap onto lines of their own (a phone). */
const NARROW_STAGE = 600;

/**
 * A cell size so that `columns` cells (plus labels and operators) fit in `width`; on a narrow
 * stage, where each matrix takes its own line, so that the widest matrix (`widest` columns) fits.
 */
export function cellSize(width: number, columns: number, widest = columns, min = 20, max = 44): number {
  const fit = (usable: number, n: number) => Math.max(min, Math.min(max, Math.floor(usable / Math.max(1, n))));
  const oneLine = fit(width - 160, columns);
  return width < NARROW_STAGE ? Math.max(oneLine, fit(width - 80, widest)) : oneLine;
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
