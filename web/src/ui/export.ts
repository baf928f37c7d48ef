// Saving what a figure or an experiment shows: an SVG as a file, the same SVG rendered to a PNG,
// and tables as CSV. Render-layer helpers: they read the DOM and compute nothing.

function save(blob: Blob, file: string) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = file;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

/** The SVG's markup with the page's computed colours and font inlined (a file has no stylesheet). */
export function svgMarkup(svg: SVGSVGElement): string {
  const copy = svg.cloneNode(true) as SVGSVGElement;
  copy.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  const style = getComputedStyle(svg);
  copy.setAttribute('style', `font-family:${style.fontFamily};font-size:${style.fontSize};background:${getComputedStyle(document.body).backgroundColor}`);
  const src = svg.querySelectorAll<SVGElement>('text, path, line, rect, circle');
  const dst = copy.querySelectorAll<SVGElement>('text, path, line, rect, circle');
  src.forEach((e, i) => {
    const s = getComputedStyle(e);
    dst[i].setAttribute('fill', dst[i].getAttribute('fill') ?? s.fill);
    if (s.stroke && s.stroke !== 'none') dst[i].setAttribute('stroke', dst[i].getAttribute('stroke') ?? s.stroke);
  });
  return new XMLSerializer().serializeToString(copy);
}

const escapeXml = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** A key of the figure's legend: its label and how its line or swatch is drawn. */
interface FigureKey {
  label: string;
  color: string;
  dash: string | null;
}

/** The keys a figure shows beside its SVG (line charts' and curves' legends), in order. */
function figureKeys(fig: Element): FigureKey[] {
  return Array.from(fig.querySelectorAll<HTMLElement>('.hist-keys > span, .curve-keys > .key')).map((k) => {
    const swatch = k.querySelector<HTMLElement>('i');
    const color = swatch?.dataset.color ?? (swatch ? getComputedStyle(swatch).backgroundColor : 'currentColor');
    return { label: (k.textContent ?? '').trim(), color, dash: swatch?.dataset.dash ?? null };
  });
}

/**
 * The figure an SVG is drawn in, as one standalone SVG: its title (the figure's caption) above,
 * the drawing with its axis labels, and its legend's keys below, wrapped to the drawing's width.
 * A file carries what the page shows around the drawing, not only the drawing.
 */
export function figureMarkup(svg: SVGSVGElement): { markup: string; width: number; height: number } {
  const w = svg.width.baseVal.value || svg.getBoundingClientRect().width;
  const h = svg.height.baseVal.value || svg.getBoundingClientRect().height;
  const fig = svg.closest('figure');
  const caption = fig?.querySelector('figcaption');
  const title = ((caption?.querySelector('.t') ?? caption)?.textContent ?? '').trim();
  const keys = fig ? figureKeys(fig) : [];
  const style = getComputedStyle(svg);
  const font = style.fontFamily;
  const ink = getComputedStyle(document.body).color;
  const measure = document.createElement('canvas').getContext('2d');
  const textWidth = (text: string, px: number) => {
    if (!measure) return text.length * px * 0.6;
    measure.font = `${px}px ${font}`;
    return measure.measureText(text).width;
  };
  const titleHeight = title ? 22 : 0;
  // Keys flow left to right and wrap at the drawing's width (at least 260 px).
  const width = Math.max(w, 260, title ? textWidth(title, 13) + 12 : 0);
  const placed: { key: FigureKey; x: number; y: number }[] = [];
  let x = 6;
  let y = titleHeight + h + 14;
  for (const key of keys) {
    const kw = 24 + textWidth(key.label, 12) + 14;
    if (x > 6 && x + kw > width) {
      x = 6;
      y += 16;
    }
    placed.push({ key, x, y });
    x += kw;
  }
  const height = titleHeight + h + (keys.length ? y - (titleHeight + h) + 8 : 0);
  const keyMarkup = placed
    .map(({ key, x, y }) => `<line x1="${x}" y1="${y - 4}" x2="${x + 18}" y2="${y - 4}" stroke="${key.color}" stroke-width="2.4"${key.dash ? ` stroke-dasharray="${key.dash}"` : ''}/><text x="${x + 24}" y="${y}" font-size="12" fill="${ink}">${escapeXml(key.label)}</text>`)
    .join('');
  const markup =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" style="font-family:${escapeXml(font)};font-size:${style.fontSize}">` +
    `<rect width="100%" height="100%" fill="${getComputedStyle(document.body).backgroundColor}"/>` +
    (title ? `<text x="6" y="15" font-size="13" font-weight="600" fill="${ink}">${escapeXml(title)}</text>` : '') +
    `<g transform="translate(0,${titleHeight})">${svgMarkup(svg)}</g>${keyMarkup}</svg>`;
  return { markup, width, height };
}

export function saveSvg(svg: SVGSVGElement, name: string) {
  save(new Blob([figureMarkup(svg).markup], { type: 'image/svg+xml' }), `${name}.svg`);
}

/** Draws the figure (figureMarkup) onto a canvas at twice its size and saves it as a PNG. */
export async function pngBlob(svg: SVGSVGElement): Promise<Blob> {
  const { markup, width, height } = figureMarkup(svg);
  const img = new Image();
  img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(markup)}`;
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = Math.ceil(width * 2);
  canvas.height = Math.ceil(height * 2);
  const ctx = canvas.getContext('2d')!;
  ctx.fillStyle = getComputedStyle(document.body).backgroundColor;
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG encoding failed'))), 'image/png'));
}

export async function savePng(svg: SVGSVGElement, name: string) {
  save(await pngBlob(svg), `${name}.png`);
}

const csvCell = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** Rows (the first is the header) as RFC 4180 CSV. */
export function toCsv(rows: (string | number | null)[][]): string {
  return rows.map((r) => r.map((c) => csvCell(c === null ? '' : String(c))).join(',')).join('\n') + '\n';
}

export function saveCsv(rows: (string | number | null)[][], name: string) {
  save(new Blob([toCsv(rows)], { type: 'text/csv' }), `${name}.csv`);
}

/** SVG and PNG buttons for every svg in `figure` (the first one, named `name`). */
export function exportButtons(host: HTMLElement, svg: () => SVGSVGElement | null, name: string, labels: { svg: string; png: string }) {
  let bar = host.querySelector<HTMLElement>(':scope > .export-bar');
  if (!bar) {
    bar = document.createElement('div');
    bar.className = 'export-bar';
    bar.innerHTML = `<button type="button" data-export="svg"></button><button type="button" data-export="png"></button>`;
    host.appendChild(bar);
    bar.addEventListener('click', (ev) => {
      const kind = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-export]')?.dataset.export;
      const s = svg();
      if (!s || !kind) return;
      if (kind === 'svg') saveSvg(s, name);
      else void savePng(s, name);
    });
  }
  bar.querySelector('[data-export="svg"]')!.textContent = labels.svg;
  bar.querySelector('[data-export="png"]')!.textContent = labels.png;
}
