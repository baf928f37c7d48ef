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

export function saveSvg(svg: SVGSVGElement, name: string) {
  save(new Blob([svgMarkup(svg)], { type: 'image/svg+xml' }), `${name}.svg`);
}

/** Draws the SVG onto a canvas at twice its size and saves it as a PNG. */
export async function pngBlob(svg: SVGSVGElement): Promise<Blob> {
  const w = svg.width.baseVal.value || svg.getBoundingClientRect().width;
  const h = svg.height.baseVal.value || svg.getBoundingClientRect().height;
  const img = new Image();
  img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svgMarkup(svg))}`;
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = Math.ceil(w * 2);
  canvas.height = Math.ceil(h * 2);
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
