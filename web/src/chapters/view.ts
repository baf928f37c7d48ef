// The Chapters tab: a table of contents of the article's ten sections and one chapter at a time,
// read in order (previous / next). A chapter is its explanation (i18n ch.<n>.*), its live figures
// (figures/, run by live_figure.ts) and its experiments (ui/experiment_panel.ts), each experiment listed whether or not
// the engine build has it yet.
import { lang, onLang, t } from '../i18n';
import type { ExperimentInfo, ExperimentResult } from '../engine/protocol/chapters';
import { ExperimentPanel } from '../ui/experiment_panel';
import { CHAPTERS, LIVE_VIEWS, chapterKey, type Chapter } from './chapters';
import { EncoderBuilder } from './encoder_builder';
import type { ExperimentWorker } from './experiments';
import { LiveFigure, type FigureSource } from './live_figure';
import { experimentAnchor, experimentLink, figureAnchor, figureLink, forgetRunFlag, linkAsks, readChapter, readPanel, writeChapter, writePanel } from './url';

export interface ChaptersView {
  /** Shows the tab: the current chapter's figures are computed on first show. */
  show(): void;
  /**
   * For tests: the chapter shown, the state of its figures and experiments, and the result object
   * the experiments' worker returned for each experiment run so far (a figure's state: loading,
   * ready, error, or deferred: a shipped-model figure not yet scrolled into view). firstDrawnMs:
   * when the chapter first shown had every figure not deferred drawn from the engine's answer (ms
   * after navigation start, performance.now()); null until then.
   */
  state(): { chapter: number; lang: string; figures: Record<string, string>; experiments: Record<string, string>; results: Record<string, ExperimentResult>; firstDrawnMs: number | null };
}

export function mountChapters(host: HTMLElement, figures: FigureSource, experiments: ExperimentWorker, open: (view: 'walk' | 'lab') => void): ChaptersView {
  let current = readChapter(new URL(location.href));
  let shown = false;
  let list: ExperimentInfo[] | null | undefined;
  const panels = new Map<string, ExperimentPanel>();
  let liveFigures: LiveFigure[] = [];
  let firstDrawnMs: number | null = null;
  /** §10's builder, made on first show and kept (its runs survive a language switch or a visit elsewhere). */
  let builder: EncoderBuilder | null = null;

  host.innerHTML = `<div class="chapters"><nav class="toc"><h2></h2><p class="muted small"></p><ol></ol></nav><article class="chapter"></article></div>`;
  const toc = host.querySelector<HTMLElement>('nav.toc')!;
  const article = host.querySelector<HTMLElement>('article.chapter')!;

  /** The link the page was opened with: what it asks of experiments is read once. */
  const opened = new URL(location.href);
  const chapterOf = (name: string) => CHAPTERS.find((c) => c.experiments.includes(name))?.n ?? current;
  const panel = (name: string) => {
    let p = panels.get(name);
    if (!p) {
      p = new ExperimentPanel(name, readPanel(new URL(location.href), name), () => experiments, (s) => writePanel(name, s), (s, run) => experimentLink(chapterOf(name), name, s, run), () => forgetRunFlag(name));
      p.el.id = experimentAnchor(name);
      const live = LIVE_VIEWS[name];
      if (live) p.setLiveView(live());
      const asks = linkAsks(opened, name);
      if (asks !== 'none') p.askedByLink(asks);
      if (list !== undefined) p.setInfo(list?.find((e) => e.name === name) ?? null);
      panels.set(name, p);
    }
    return p;
  };

  /**
   * Scrolls to the experiment or figure the opening link's anchor names: again as the figures above
   * it are drawn and the experiments listed (each moves it), and no more after that (`last`).
   */
  let anchorPending = opened.hash.length > 1;
  const scrollToAnchor = (last = false) => {
    if (!anchorPending) return;
    const el = document.getElementById(decodeURIComponent(opened.hash.slice(1)));
    if (!el || !article.contains(el)) return;
    if (last) anchorPending = false;
    el.scrollIntoView({ block: 'start' });
  };

  function renderToc() {
    toc.setAttribute('aria-label', t('ch.toc.aria'));
    toc.querySelector('h2')!.textContent = t('ch.toc.title');
    toc.querySelector('p')!.textContent = t('ch.toc.intro');
    toc.querySelector('ol')!.innerHTML = CHAPTERS.map(
      (c) => `<li><button type="button" data-chapter="${c.n}" ${c.n === current ? 'aria-current="page"' : ''}><span class="num">§${c.n}</span> <span class="t">${t(chapterKey(c.n, 'title'))}</span></button></li>`,
    ).join('');
  }

  function renderChapter(c: Chapter) {
    const prev = CHAPTERS.find((k) => k.n === c.n - 1);
    const next = CHAPTERS.find((k) => k.n === c.n + 1);
    const lead = c.leadsTo ? `<p><button type="button" class="link" data-open="${c.leadsTo}">${t(c.leadsTo === 'walk' ? 'ch.toWalk' : 'ch.toLab')}</button></p>` : '';
    article.dataset.chapter = String(c.n);
    article.innerHTML = `
      <p class="counter muted small">${t('ch.counter', { n: c.n, total: CHAPTERS.length })} · ${t('ch.cite', { s: c.sections })}</p>
      <h2>${c.n}. ${t(chapterKey(c.n, 'title'))}</h2>
      <p class="lead">${t(chapterKey(c.n, 'lead'))}</p>
      <p>${t(chapterKey(c.n, 'body'))}</p>
      ${lead}
      ${c.figures.length ? `<h3>${t('ch.figures')}</h3><div class="figures"></div>` : ''}
      ${c.builder ? '<div class="builder"></div>' : ''}
      ${c.experiments.length ? `<h3>${t('ch.experiments')}</h3><div class="experiments"></div>` : ''}
      <nav class="prevnext">
        ${prev ? `<button type="button" data-chapter="${prev.n}" class="prev">${t('ch.prev', { title: t(chapterKey(prev.n, 'title')) })}</button>` : '<span></span>'}
        ${next ? `<button type="button" data-chapter="${next.n}" class="next">${t('ch.next', { title: t(chapterKey(next.n, 'title')) })}</button>` : '<span></span>'}
      </nav>`;
    const figs = article.querySelector<HTMLElement>('.figures');
    liveFigures = c.figures.map((f) => new LiveFigure(f, figures, () => figureLink(c.n, f.id)));
    for (const f of liveFigures) {
      f.el.id = figureAnchor(f.id);
      figs!.appendChild(f.el);
    }
    const drawn = Promise.all(liveFigures.map((f) => f.draw()));
    const shown = liveFigures;
    void drawn.then(() => {
      figuresDrawn = true;
      if (readerMoved) shown.forEach((f) => f.watch());
    });
    if (c.builder) {
      builder ??= new EncoderBuilder(figures);
      article.querySelector('.builder')!.appendChild(builder.el);
      void builder.show();
    }
    const exps = article.querySelector<HTMLElement>('.experiments');
    for (const name of c.experiments) {
      const p = panel(name);
      p.render();
      exps!.appendChild(p.el);
    }
    scrollToAnchor();
    void drawn.then(() => scrollToAnchor(list !== undefined || !c.experiments.length));
    return drawn;
  }

  /**
   * The experiments' own engine starts when a chapter that has experiments has drawn its figures
   * (not competing with them), and not for a chapter without any: each engine is a worker with its
   * pthread pool, and a page left while they still load has them cut off mid-start.
   */
  let listed = false;
  function listExperiments() {
    if (listed) return;
    listed = true;
    experiments.list().then(
      (l) => {
        list = l;
        for (const [name, p] of panels) p.setInfo(l.find((e) => e.name === name) ?? null);
        scrollToAnchor(true);
      },
      () => {
        list = null;
        for (const p of panels.values()) p.setInfo(null);
        scrollToAnchor(true);
      },
    );
  }

  /**
   * Deferred figures (a shipped model to fetch) start watching for the viewport once the reader
   * has moved (a scroll, a chapter opened from the page), never on the page's first load alone.
   */
  let readerMoved = false;
  let figuresDrawn = false;
  const moved = () => {
    if (readerMoved) return;
    readerMoved = true;
    if (figuresDrawn) liveFigures.forEach((f) => f.watch());
  };
  window.addEventListener('scroll', moved, { once: true, passive: true });

  function go(n: number, focus = false): Promise<unknown> {
    if (focus) moved();
    figuresDrawn = false;
    current = n;
    writeChapter(n);
    renderToc();
    const chapter = CHAPTERS.find((c) => c.n === n)!;
    const drawn = renderChapter(chapter);
    if (chapter.experiments.length) void drawn.finally(listExperiments);
    if (focus) {
      article.querySelector<HTMLElement>('h2')?.setAttribute('tabindex', '-1');
      article.querySelector<HTMLElement>('h2')?.focus();
      article.scrollIntoView({ block: 'start' });
    }
    return drawn;
  }

  host.addEventListener('click', (ev) => {
    const el = ev.target as HTMLElement;
    const b = el.closest<HTMLButtonElement>('button[data-chapter]');
    if (b) return void go(Number(b.dataset.chapter), true);
    const o = el.closest<HTMLButtonElement>('button[data-open]');
    if (o) open(o.dataset.open as 'walk' | 'lab');
  });

  onLang(() => {
    if (!shown) return;
    renderToc();
    renderChapter(CHAPTERS.find((c) => c.n === current)!);
  });

  return {
    show() {
      writeChapter(current);
      if (shown) return;
      shown = true;
      void go(current).finally(() => {
        if (liveFigures.every((f) => f.el.dataset.state === 'ready' || f.el.dataset.state === 'deferred')) firstDrawnMs = performance.now();
      });
    },
    state: () => ({
      chapter: current,
      lang: lang(),
      figures: Object.fromEntries(liveFigures.map((f) => [f.id, f.el.dataset.state ?? ''])),
      experiments: Object.fromEntries([...panels].map(([n, p]) => [n, p.el.dataset.phase ?? p.el.dataset.available ?? ''])),
      results: Object.fromEntries([...panels].flatMap(([n, p]) => (p.lastResult ? [[n, p.lastResult]] : []))),
      firstDrawnMs,
    }),
  };
}
