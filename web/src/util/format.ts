// Number formatting shared by every view. Cells show `fixed` digits; hover shows the exact float32.

/** The shortest decimal that reads back as the same float32 (the exact value the engine stored). */
export function exactFloat32(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+∞';
  if (v === -Infinity) return '−∞';
  if (Object.is(v, -0)) return '-0';
  const f = Math.fround(v);
  for (let p = 1; p <= 9; p++) {
    const s = f.toPrecision(p);
    if (Math.fround(Number(s)) === f) return String(Number(s));
  }
  return String(f);
}

export const CELL_DIGITS = 2;

/** What a matrix cell displays: `digits` decimals, −∞ for masked scores, a true minus sign. */
export function cellText(v: number, digits = CELL_DIGITS): string {
  if (v === -Infinity) return '−∞';
  if (v === Infinity) return '+∞';
  if (Number.isNaN(v)) return 'NaN';
  const s = v.toFixed(digits);
  return (/^-0\.?0*$/.test(s) ? s.slice(1) : s).replace('-', '−');
}

/** Inverse of cellText for tests and tooltips. */
export function parseCellText(s: string): number {
  if (s === '−∞') return -Infinity;
  if (s === '+∞') return Infinity;
  return Number(s.replace('−', '-'));
}

export const fmt = (v: number, digits = 3) => cellText(v, digits);
