// The page: one engine worker shared by the walkthrough and the training lab, two views (tabs).
import './styles.css';
// d3's transitions patch selection.prototype as a side effect; keep the bundler from dropping it.
import 'd3-transition';
import { isChapterKey } from './chapters/url';
import { mountChapters } from './chapters/view';
import { ExperimentWorker } from './chapters/experiments';
import './chapters/chapters.css';
import './chapters/hands_on.css';
import './chapters/text_figures.css';
import { EngineClient } from './engine/client/client';
import { LANGS, lang, onLang, setLang, t, translate, type Lang } from './i18n';
import type { EngineInfo } from './engine/protocol/messages';
import { attachEngine as attachLab, engineFailed as labEngineFailed, engineLost as labEngineLost, engineReady as labEngineReady } from './lab/actions';
import { attachEngine as attachHeads } from './heads/actions';
import { headsStore } from './heads/state';
import { attachPatchingEngine } from './heads/patching';
import { mountPatching } from './heads/patching_view';
import { mountHeads } from './heads/view';
import { labStore } from './lab/state';
import { mountLab } from './lab/view';
import { attachEngine, compute as walkCompute, pretrainedLost } from './walkthrough/actions';
import { attachLensEngine } from './walkthrough/lens';
import { walkStore } from './walkthrough/state';
import { mountWalkthrough } from './walkthrough/view';

declare global {
  interface Window {
    /** Test and debugging hook: read-only access to what the page shows. */
    __attnlab?: {
      ready: Promise<EngineInfo>;
      info: EngineInfo | null;
      walk: () => ReturnType<typeof walkStore.get>;
      lab: () => ReturnType<typeof labStore.get>;
      chapters: () => ReturnType<ReturnType<typeof mountChapters>['state']>;
      heads: () => ReturnType<typeof headsStore.get>;
    };
  }
}

// The static texts of index.html, <html lang> and the switch follow the language from the start.
translate(document);
const showLang = () => {
  document.title = t('page.title');
  document.documentElement.lang = lang() === 'zh' ? 'zh-CN' : 'en';
  document.querySelectorAll<HTMLButtonElement>('.lang-switch button').forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.lang === lang())));
};
showLang();
document.querySelector('.lang-switch')!.addEventListener('click', (ev) => {
  const l = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-lang]')?.dataset.lang as Lang | undefined;
  if (l && LANGS.includes(l)) setLang(l);
});
onLang(() => {
  translate(document.querySelector('header.top')!);
  translate(document.querySelector('footer.foot')!);
  showLang();
  if (badgeState) badge.textContent = t(badgeState);
  else if (badgeInfo) showBadge(badgeInfo);
});

const engine = new EngineClient();
attachEngine(engine);
attachLab(engine);
attachLensEngine(engine);
attachHeads(engine);
attachPatchingEngine(engine);
const walk = mountWalkthrough(document.getElementById('view-walk')!);
mountLab(document.getElementById('view-lab')!);
const heads = mountHeads(document.getElementById('view-heads')!, {
  openHead: (layer, head) => {
    showView('walk');
    void walk.openHead(layer, head);
  },
  openShipped: (name) => walk.openShipped(name),
});
mountPatching(heads.sections);
// The chapters' figures ask the shared engine worker once it has loaded the engine; their
// experiments run in a worker of their own.
let engineLoaded: () => void = () => {};
const engineUp = new Promise<void>((resolve) => (engineLoaded = resolve));
const chapters = mountChapters(
  document.getElementById('view-chapters')!,
  async (request, onProgress, onLoad) => {
    await engineUp;
    const model = 'shipped' in request ? request.shipped.name : null;
    const off = engine.onChapterEvent((e) => {
      if (e.event === 'figure.progress' && e.progress.figure === request.figure) onProgress?.(e.progress);
      if (e.event === 'figure.load' && e.load.figure === request.figure && e.load.model === model) onLoad?.(e.load);
    });
    try {
      return (await engine.call('figure', { kind: 'figure', request })).data;
    } finally {
      off();
    }
  },
  new ExperimentWorker(),
  (view) => showView(view),
);

// The walkthrough computes and draws its stages when it is first shown: a page opened on the lab
// should not spend its main thread drawing a hidden walkthrough while training starts.
let engineInfo: EngineInfo | null = null;
let walkStarted = false;
function startWalkthrough() {
  if (walkStarted || !engineInfo || document.getElementById('view-walk')!.hidden) return;
  walkStarted = true;
  walkStore.set({ status: 'computing' });
  void walk.start();
}

type View = 'chapters' | 'walk' | 'lab' | 'heads';
/** The URL keys of the views not shown: the chapters', and the walkthrough's and lab's. */
const urlGroup = (v: View) => (v === 'chapters' ? 'chapters' : 'other');
const aside: Record<'chapters' | 'other', [string, string][]> = { chapters: [], other: [] };
let asideHash = '';
function showView(view: View) {
  // A tablist is one Tab stop (the selected tab); the arrow keys move between its tabs.
  document.querySelectorAll<HTMLButtonElement>('nav.tabs button').forEach((b) => {
    b.setAttribute('aria-selected', String(b.dataset.view === view));
    b.tabIndex = b.dataset.view === view ? 0 : -1;
  });
  document.getElementById('view-walk')!.hidden = view !== 'walk';
  document.getElementById('view-lab')!.hidden = view !== 'lab';
  document.getElementById('view-chapters')!.hidden = view !== 'chapters';
  document.getElementById('view-heads')!.hidden = view !== 'heads';
  if (view !== 'walk') walk.pause();
  // The chapters are the page's start (no view in the URL); the other tabs name themselves. A
  // view's link holds its own keys only: the chapters' (chapter, x.*, f.*, an anchor) or the
  // walkthrough's and the lab's; the keys of the views left are kept aside and come back with them.
  const url = new URL(location.href);
  const mine = urlGroup(view);
  const away = [...url.searchParams].filter(([k]) => k !== 'view' && k !== 'lang' && (isChapterKey(k) ? 'chapters' : 'other') !== mine);
  if (away.length) aside[mine === 'chapters' ? 'other' : 'chapters'] = away;
  for (const [k] of away) url.searchParams.delete(k);
  for (const [k, v] of aside[mine]) if (!url.searchParams.has(k)) url.searchParams.append(k, v);
  aside[mine] = [];
  if (mine !== 'chapters') {
    if (url.hash) asideHash = url.hash;
    url.hash = '';
  } else if (asideHash) {
    if (!url.hash) url.hash = asideHash;
    asideHash = '';
  }
  if (view === 'chapters') url.searchParams.delete('view');
  else url.searchParams.set('view', view);
  history.replaceState(null, '', url);
  startWalkthrough();
  if (view === 'chapters') chapters.show();
  if (view === 'heads') heads.show();
  else heads.hide();
}
document.querySelector('nav.tabs')!.addEventListener('click', (ev) => {
  const b = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-view]');
  if (b) showView(b.dataset.view as View);
});
// A tab focused by a click (not reached with the keyboard) leaves the arrow keys to the view it
// opened: after clicking the Walkthrough tab, → is the walkthrough's next step, not the next tab.
let tabClicked = false;
const tabList = document.querySelector<HTMLElement>('nav.tabs')!;
tabList.addEventListener('pointerdown', () => (tabClicked = true));
tabList.addEventListener('focusout', () => (tabClicked = false));
tabList.addEventListener('keydown', (ev: KeyboardEvent) => {
  const keys: Record<string, number> = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
  const tabs = [...document.querySelectorAll<HTMLButtonElement>('nav.tabs button[data-view]')];
  const at = tabs.indexOf(document.activeElement as HTMLButtonElement);
  if (at < 0 || tabClicked) return;
  let next: number;
  if (ev.key in keys) next = (at + keys[ev.key] + tabs.length) % tabs.length;
  else if (ev.key === 'Home') next = 0;
  else if (ev.key === 'End') next = tabs.length - 1;
  else return;
  ev.preventDefault();
  tabs[next].focus();
  showView(tabs[next].dataset.view as View);
});
/** ?view=walk (or walkthrough), ?view=lab and ?view=heads open those tabs; anything else opens the chapters. */
function viewOf(asked: string | null): View {
  if (asked === 'walk' || asked === 'walkthrough') return 'walk';
  return asked === 'lab' || asked === 'heads' ? asked : 'chapters';
}
showView(viewOf(new URL(location.href).searchParams.get('view')));

const badge = document.querySelector<HTMLElement>('[data-engine-badge]')!;
const ready = engine.init();
window.__attnlab = { ready, info: null, walk: () => walkStore.get(), lab: () => labStore.get(), chapters: () => chapters.state(), heads: () => headsStore.get() };

function showBadge(info: EngineInfo) {
  badge.dataset.flavour = info.flavour;
  badge.dataset.threads = String(info.threads);
  // The badge stays one short line; the why is on hover.
  badgeState = null;
  badgeInfo = info;
  badge.textContent = t('page.badge.engine', {
    build: info.flavour === 'threads' ? t('page.badge.threads', { n: info.threads }) : t('page.badge.single'),
    simd: info.simd ? 'SIMD' : t('page.badge.simdOff'),
    version: info.version,
  });
  badge.title = info.flavour === 'threads' ? t('page.badge.threadsWhy') : t('page.badge.singleWhy');
}
/** The badge's text while no engine runs (failed, restarting), so a language switch can say it again. */
let badgeInfo: EngineInfo | null = null;
let badgeState: 'page.badge.failedLoad' | 'page.badge.restarting' | 'page.badge.failed' | null = null;
const badgeSays = (k: NonNullable<typeof badgeState>) => {
  badgeState = k;
  badge.textContent = t(k);
};

ready.then(
  (info) => {
    window.__attnlab!.info = info;
    showBadge(info);
    engineInfo = info;
    engineLoaded();
    startWalkthrough();
    labEngineReady(info);
  },
  (e: Error) => {
    badgeSays('page.badge.failedLoad');
    badge.dataset.flavour = 'none';
    walkStore.set({ status: 'error', error: t('page.engineLoadFailed', { message: e.message }) });
    labEngineFailed(e.message);
  },
);

// The engine worker ended (a trap, out of memory, the browser ended it): the client has started a
// new one. Each view keeps what it shows; a walkthrough trace that the ending interrupted is
// computed again.
let lostReason = '';
engine.onLife((e) => {
  if (e.kind === 'lost') {
    lostReason = e.reason;
    badgeSays('page.badge.restarting');
    badge.dataset.flavour = 'restarting';
    labEngineLost(e.reason, null);
  } else if (e.kind === 'restarted') {
    window.__attnlab!.info = e.info;
    engineInfo = e.info;
    showBadge(e.info);
    labEngineLost(lostReason, e.info);
    pretrainedLost(lostReason);
    if (walkStarted && walkStore.get().status !== 'ready') void walkCompute(walkStore.get().settings);
    else startWalkthrough();
  } else {
    badgeSays('page.badge.failed');
    badge.dataset.flavour = 'none';
    walkStore.set({ status: 'error', error: t('page.engineRestartFailed', { reason: e.reason }) });
    labEngineFailed(e.reason);
  }
});
