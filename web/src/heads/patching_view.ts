// The Heads tab's "Patching" section: a clean and a corrupted prompt of the same length (pairs
// suggested per model), a pair of answer tokens, and the engine's tables of the share of the logit
// difference each head's output (layers × heads) and each residual entry (layers × positions)
// restores when copied from the clean run into the corrupted one; a clicked cell shows its numbers.
// Reads patchingStore and walkStore; changes state only through patching.ts. Definitions:
// docs/interpretability.md (activation patching).
import { lang, onLang, t } from '../i18n';
import type { PatchPrompt, PatchResult } from '../engine/protocol/lens';
import { renderMatrix } from '../ui/matrix';
import { divergingScale, maxAbs } from '../util/color';
import { exactFloat32 } from '../util/format';
import { escapeHtml } from '../walkthrough/components/tokens_view';
import { walkStore, type WalkState } from '../walkthrough/state';
import { pickCell, patchingStore, runPatching, setPair, suggestionsFor, type PatchPair, type PatchingState } from './patching';
import { inputOf } from './view';
import './patching.css';

const CELL = 34;
/** The residual table has a column per token: a little narrower, still wide enough for its numbers. */
const RESIDUAL_CELL = 31;
/** Differences closer than this make every share a quotient by a small number: the section says so. */
const CLOSE_DIFFS = 0.1;
const FIELDS = ['clean', 'corrupted', 'answer', 'wrong'] as const;
/** The shipped models, small enough that their first pair is patched as soon as one is chosen. */
const AUTO_RUN = ['brown.safetensors', 'tang.safetensors'];

/** A token's text with its leading space shown (␣), as the walkthrough labels tokens. */
const shown = (s: string) => escapeHtml(s.replace(/^ /, '␣'));
const tokensHtml = (p: PatchPrompt) => p.labels.map((l) => `<span class="tok">${escapeHtml(l)}</span>`).join('');

/** The model the section reads, from the walkthrough: its source, a key that changes with it, and its weights' name. */
function modelOf(w: WalkState) {
  const { input, key } = inputOf(w);
  const name = w.settings.model === 'pretrained' ? (w.pretrained.info?.name ?? '') : '';
  return input ? { source: input.source, key, name } : null;
}

function formHtml(): string {
  const field = (f: (typeof FIELDS)[number], wide: boolean) =>
    `<label class="field${wide ? ' wide' : ''}"><span>${t(`heads.patch.${f}`)}</span><input name="patch-${f}" type="text" spellcheck="false" autocomplete="off"></label>`;
  return (
    `<h3>${t('heads.patch.title')}</h3><p class="muted small">${t('heads.patch.about')}</p>` +
    `<div class="patch-suggest"></div>` +
    `<form class="patch-form">${field('clean', true)}${field('corrupted', true)}${field('answer', false)}${field('wrong', false)}` +
    `<button type="submit" class="primary">${t('heads.patch.run')}</button></form>` +
    `<p class="patch-status" role="status"></p><div class="patch-result"></div>`
  );
}

/** What a result that is not a table says: the lengths differ, or an answer is not one token. */
function problemHtml(r: Exclude<PatchResult, { kind: 'table' }>): string {
  if (r.kind === 'lengths') {
    return (
      `<p class="patch-problem" data-problem="lengths">${t('heads.patch.lengths', { clean: r.clean.ids.length, corrupted: r.corrupted.ids.length })}</p>` +
      `<p class="patch-tokens"><span class="muted">${t('heads.patch.clean')}</span> ${tokensHtml(r.clean)}</p>` +
      `<p class="patch-tokens"><span class="muted">${t('heads.patch.corrupted')}</span> ${tokensHtml(r.corrupted)}</p>`
    );
  }
  return `<p class="patch-problem" data-problem="answer">${t('heads.patch.notOneToken', { which: t(`heads.patch.which.${r.which}`), text: shown(r.text), n: r.pieces.length, pieces: r.pieces.map(escapeHtml).join(' · ') })}</p>`;
}

/** The numbers of the clicked cell: its share, the two differences it is a share of. */
function pickedHtml(r: Extract<PatchResult, { kind: 'table' }>, p: NonNullable<PatchingState['picked']>): string {
  const table = p.table === 'heads' ? r.heads : r.residual;
  const share = table.data[p.i * table.shape[1] + p.j];
  const what = p.table === 'heads' ? t('heads.patch.cell.head', { l: p.i, h: p.j }) : t('heads.patch.cell.residual', { l: p.i, t: p.j, token: escapeHtml(r.corrupted.labels[p.j] ?? '') });
  return (
    `<div class="patch-picked" data-table="${p.table}" data-i="${p.i}" data-j="${p.j}" data-share="${exactFloat32(share)}">` +
    `<p><strong>${what}</strong></p><p>${t('heads.patch.cell.share', { share: exactFloat32(share) })}</p>` +
    `<p class="muted">${t('heads.patch.cell.formula', { clean: exactFloat32(r.cleanDiff), corrupted: exactFloat32(r.corruptedDiff) })}</p></div>`
  );
}

function renderTable(host: HTMLElement, r: Extract<PatchResult, { kind: 'table' }>, picked: PatchingState['picked']) {
  const scale = divergingScale(Math.max(1, maxAbs(r.heads.data, r.residual.data)));
  host.innerHTML =
    `<p class="patch-diffs" data-clean="${exactFloat32(r.cleanDiff)}" data-corrupted="${exactFloat32(r.corruptedDiff)}">` +
    `${t('heads.patch.diffs', { answer: shown(r.answer.text), wrong: shown(r.wrong.text), clean: r.cleanDiff.toFixed(3), corrupted: r.corruptedDiff.toFixed(3) })}</p>` +
    (Math.abs(r.cleanDiff - r.corruptedDiff) < CLOSE_DIFFS ? `<p class="note patch-close">${t('heads.patch.close', { d: CLOSE_DIFFS })}</p>` : '') +
    `<div class="patch-maps"><div class="patch-heads"></div><div class="patch-residual"></div></div><div class="patch-cell"></div>`;
  const [L, H] = r.heads.shape;
  const T = r.residual.shape[1];
  const layers = Array.from({ length: L }, (_, l) => t('heads.patch.layer', { l }));
  const highlight = (table: 'heads' | 'residual'): [number, number][] => (picked?.table === table ? [[picked.i, picked.j]] : []);
  renderMatrix(host.querySelector<HTMLElement>('.patch-heads')!, {
    name: 'patch-heads',
    title: t('heads.patch.map.heads'),
    caption: `(L, H) = (${L}, ${H})`,
    data: r.heads,
    scale,
    cell: CELL,
    rowLabels: layers,
    colLabels: Array.from({ length: H }, (_, h) => t('heads.patch.head', { h })),
    highlightCells: highlight('heads'),
  });
  renderMatrix(host.querySelector<HTMLElement>('.patch-residual')!, {
    name: 'patch-residual',
    title: t('heads.patch.map.residual'),
    caption: `(L, T) = (${L}, ${T})`,
    data: r.residual,
    scale,
    cell: RESIDUAL_CELL,
    rowLabels: layers,
    colLabels: r.corrupted.labels.map((l, i) => `${i} ${l}`),
    highlightCells: highlight('residual'),
  });
  if (picked) host.querySelector<HTMLElement>('.patch-cell')!.innerHTML = pickedHtml(r, picked);
}

/** Mounts the section at the end of the Heads tab's sections container. */
export function mountPatching(sections: HTMLElement) {
  const root = document.createElement('section');
  root.className = 'heads-panel heads-patching';
  root.dataset.section = 'patching';
  sections.appendChild(root);
  let drawnLang = '';
  let suggestKey = '';
  let resultKey = '';
  let modelKey = '';

  const read = (): PatchPair => {
    const v = (f: string) => root.querySelector<HTMLInputElement>(`input[name="patch-${f}"]`)!.value;
    return { clean: v('clean'), corrupted: v('corrupted'), answer: v('answer'), wrong: v('wrong') };
  };
  const write = (p: PatchPair) => FIELDS.forEach((f) => (root.querySelector<HTMLInputElement>(`input[name="patch-${f}"]`)!.value = p[f]));
  const run = () => {
    const m = modelOf(walkStore.get());
    if (m) void runPatching(m.source, m.key, read());
  };

  root.addEventListener('submit', (ev) => {
    ev.preventDefault();
    run();
  });
  root.addEventListener('click', (ev) => {
    const target = ev.target as Element;
    const s = target.closest<HTMLButtonElement>('button[data-pair]');
    if (s) {
      const pair = suggestionsFor(modelOf(walkStore.get())?.name ?? '')[Number(s.dataset.pair)];
      if (pair) {
        write(pair);
        setPair(pair);
        run();
      }
      return;
    }
    const cell = target.closest<SVGGElement>('g.cell');
    const fig = target.closest<HTMLElement>('figure[data-matrix^="patch-"]');
    if (cell && fig) pickCell({ table: fig.dataset.matrix === 'patch-heads' ? 'heads' : 'residual', i: Number(cell.dataset.i), j: Number(cell.dataset.j) });
  });
  root.addEventListener('keydown', (ev) => {
    const cell = (ev.target as Element).closest<SVGGElement>('g.cell');
    const fig = (ev.target as Element).closest<HTMLElement>('figure[data-matrix^="patch-"]');
    if (cell && fig && (ev.key === 'Enter' || ev.key === ' ')) {
      ev.preventDefault();
      pickCell({ table: fig.dataset.matrix === 'patch-heads' ? 'heads' : 'residual', i: Number(cell.dataset.i), j: Number(cell.dataset.j) });
    }
  });

  const render = () => {
    const s = patchingStore.get();
    const m = modelOf(walkStore.get());
    root.hidden = !m;
    if (drawnLang !== lang()) {
      const pair = drawnLang ? read() : s.pair;
      root.innerHTML = formHtml();
      write(pair);
      drawnLang = lang();
      suggestKey = resultKey = '';
    }
    if (!m) return;
    const pairs = suggestionsFor(m.name);
    // A newly chosen shipped model starts on its first pair (small models: it patches at once).
    if (m.key !== modelKey) {
      modelKey = m.key;
      if (pairs.length && AUTO_RUN.includes(m.name)) {
        write(pairs[0]);
        setPair(pairs[0]);
        void runPatching(m.source, m.key, pairs[0]);
      }
    }
    const sk = `${m.name}|${lang()}`;
    if (sk !== suggestKey) {
      suggestKey = sk;
      root.querySelector<HTMLElement>('.patch-suggest')!.innerHTML = pairs.length
        ? `<span class="muted small">${t('heads.patch.suggested')}</span> ` +
          pairs.map((p, i) => `<button type="button" data-pair="${i}" title="${escapeHtml(`${p.clean} → ${p.answer} / ${p.wrong}`)}">${escapeHtml(t('heads.patch.pair', { n: i + 1 }))}</button>`).join(' ')
        : `<span class="muted small">${t('heads.patch.noSuggestion')}</span>`;
    }
    const status = root.querySelector<HTMLElement>('.patch-status')!;
    root.dataset.status = s.status;
    const r = s.result;
    status.textContent =
      s.status === 'computing' ? t('heads.patch.computing') : s.status === 'error' ? (s.error ?? '') : r?.kind === 'table' ? t('heads.patch.computed', { n: r.heads.data.length + r.residual.data.length, ms: Math.round(r.elapsedMs) }) : '';
    const rk = `${s.key}|${s.status}|${JSON.stringify(s.picked)}|${lang()}`;
    if (rk === resultKey) return;
    resultKey = rk;
    const host = root.querySelector<HTMLElement>('.patch-result')!;
    if (!r || s.status === 'error') host.innerHTML = '';
    else if (r.kind === 'table') renderTable(host, r, s.picked);
    else host.innerHTML = problemHtml(r);
  };
  patchingStore.subscribe(render);
  walkStore.subscribe(render);
  onLang(render);
  render();
}
