// One chapter figure as the reader sees it: its controls (kept in the URL), a loading or training
// state while the engine worker computes, an error in words when it cannot, then the figure's
// drawing of the worker's answer (figures/figure.ts). A figure that reads a shipped model waits
// ('deferred') until the reader scrolls it into view or asks for it, so that opening the page
// fetches no model.
import { t } from '../i18n';
import type { FigureData, FigureLoad, FigureProgress, FigureRequest } from '../engine/protocol/chapters';
import { drawAll } from './figures/draw';
import type { AnyFigure, Control } from './figures/figure';
import { shippedFile } from '../engine/protocol/shipped';
import { readFigure, readFigureText, writeFigure, writeFigureText } from './figures/url';

/** Computes a figure in the engine worker; trained figures report their training progress, shipped-model ones the model's fetch. */
export type FigureSource = (r: FigureRequest, onProgress?: (p: FigureProgress) => void, onLoad?: (l: FigureLoad) => void) => Promise<FigureData>;

const MB = (bytes: number) => (bytes / 1048576).toFixed(1);

export class LiveFigure {
  readonly el: HTMLElement;
  private controls: Control[];
  private version = 0;
  /** A shipped-model figure has been in view (until then it is not computed). */
  private seen = false;
  private watching: IntersectionObserver | null = null;

  constructor(
    private readonly figure: AnyFigure,
    private readonly source: FigureSource,
    /** A link to this figure as the reader set it (chapters/url.ts figureLink). */
    private readonly link: () => string = () => location.href,
  ) {
    const id = figure.id;
    this.el = document.createElement('div');
    this.el.className = 'fig-block';
    this.el.dataset.figure = id;
    const url = new URL(location.href);
    this.controls = figure.controls.map((c) => ({ ...c, value: typeof c.value === 'number' ? readFigure(url, id, c.name, c.value) : readFigureText(url, id, c.name, c.value) }));
    this.el.addEventListener('click', (ev) => {
      if ((ev.target as HTMLElement).closest('button[data-act="fig-compute"]')) return this.release();
      if (!(ev.target as HTMLElement).closest('button[data-act="fig-link"]')) return;
      const href = this.link();
      let share = this.el.querySelector<HTMLElement>('.fig-share');
      if (!share) {
        share = document.createElement('label');
        share.className = 'fig-share small';
        this.el.querySelector('.fig-controls')!.appendChild(share);
      }
      share.innerHTML = `${t('ch.fig.linkTo')} <input type="text" readonly data-link="figure">`;
      const input = share.querySelector('input')!;
      input.value = href;
      input.select();
      void navigator.clipboard?.writeText(href).catch(() => {});
    });
    this.el.addEventListener('change', (ev) => {
      const s = ev.target as HTMLSelectElement | HTMLInputElement | HTMLTextAreaElement;
      const c = this.controls.find((k) => k.name === s.dataset.control);
      if (!c) return;
      c.value = typeof c.values[0] === 'number' ? Number(s.value) : s.value;
      if (typeof c.value === 'number') writeFigure(id, c.name, c.value);
      else writeFigureText(id, c.name, c.value);
      void this.draw();
    });
  }

  get id(): string {
    return this.figure.id;
  }

  private value = (name: string): number | string => {
    const c = this.controls.find((k) => k.name === name)!;
    return c.value === '' && c.fallback ? c.fallback(this.value) : c.value;
  };

  private controlHtml(c: Control): string {
    const label = `<span>${t(c.label)}</span>`;
    if (c.input) {
      const v = String(this.value(c.name)).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
      const field = c.input === 'area' ? `<textarea rows="2" spellcheck="false" data-control="${c.name}">${v}</textarea>` : `<input type="text" spellcheck="false" data-control="${c.name}" value="${v}">`;
      return `<label class="field inline fig-${c.input}">${label}${field}</label>`;
    }
    return `<label class="field inline">${label}<select data-control="${c.name}">${c.values.map((x) => `<option value="${x}"${x === c.value ? ' selected' : ''}>${c.labels?.[String(x)] ? t(c.labels[String(x)]) : x}</option>`).join('')}</select></label>`;
  }

  /** A shipped-model figure not yet seen: says what it will fetch, and waits for watch(). */
  private defer(): boolean {
    if (!this.figure.shipped || this.seen) return false;
    this.el.dataset.state = 'deferred';
    const file = shippedFile(this.figure.shipped(this.value));
    this.el.innerHTML = `<p class="small muted fig-deferred">${t('ch.fig.shipped.deferred', { file })} <button type="button" class="link" data-act="fig-compute">${t('ch.fig.shipped.now', { file })}</button></p>`;
    return true;
  }

  /** Draws a deferred figure now (its button, or the chapter once it is in view). */
  private release() {
    this.watching?.disconnect();
    this.watching = null;
    if (this.seen) return;
    this.seen = true;
    void this.draw();
  }

  /**
   * A deferred figure draws once it is in view. The chapter calls this when its other figures are
   * drawn (before that the figures above are still small and everything would look in view) and
   * the reader has moved: scrolled, or opened the chapter from the page. A page just opened on a
   * chapter shows its deferred figures' buttons and fetches nothing until then.
   */
  watch() {
    if (this.el.dataset.state !== 'deferred' || this.watching || typeof IntersectionObserver === 'undefined') return;
    this.watching = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) this.release();
    });
    this.watching.observe(this.el);
  }

  async draw() {
    const v = ++this.version;
    if (this.defer()) return;
    const bar = this.controls.map((c) => this.controlHtml(c)).join('');
    this.el.dataset.state = 'loading';
    const request = this.figure.request(this.value);
    const shipped = this.figure.shipped?.(this.value);
    if (this.figure.trained || shipped) {
      const start = shipped ? t('ch.fig.shipped.start', { file: shippedFile(shipped) }) : t('ch.fig.training.start');
      this.el.innerHTML = `<div class="fig-training"><p class="small" role="status">${start}</p><progress max="1" value="0"></progress></div>`;
    }
    const show = (text: string, share: number) => {
      if (v !== this.version) return;
      const status = this.el.querySelector<HTMLElement>('.fig-training p');
      if (status) status.textContent = text;
      const progress = this.el.querySelector<HTMLProgressElement>('.fig-training progress');
      if (progress) progress.value = share;
    };
    let data: FigureData;
    try {
      data = await this.source(
        request,
        (p) => show(t('ch.fig.training.progress', { step: p.step, total: p.total, loss: p.loss.toFixed(3) }), p.step / p.total),
        (l) => show(t('ch.fig.shipped.progress', { file: shippedFile(l.model), loaded: MB(l.loaded), total: MB(l.total) }), l.total ? l.loaded / l.total : 0),
      );
    } catch (e) {
      if (v !== this.version) return;
      this.el.innerHTML = `<p class="fig-error">${t('ch.figError', { message: e instanceof Error ? e.message : String(e) })}</p>`;
      this.el.dataset.state = 'error';
      return;
    }
    if (v !== this.version) return;
    this.el.innerHTML = `<div class="fig-controls">${bar}<button type="button" class="link fig-link" data-act="fig-link">${t('ch.fig.link')}</button></div>`;
    const body = document.createElement('div');
    body.className = 'fig-body';
    this.el.appendChild(body);
    await drawAll(() => this.figure.draw(body, data as never, this.value));
    if (v !== this.version) return;
    this.el.dataset.state = 'ready';
  }
}
