// Stage: under the output step, the logit lens of the walkthrough's decoder: at the chosen position,
// each block's residual stream read out as a next-token distribution (its top tokens and the
// attributed token's probability), then the direct logit attribution of that token to every head.
// Reads the lens store (walkthrough/lens.ts); every number is the engine's.
import { lang, t as tr } from '../../i18n';
import type { LensResult } from '../../engine/protocol/lens';
import type { LensState } from '../lens';
import { renderMatrix } from '../../ui/matrix';
import { divergingScale, maxAbs, sequentialScale } from '../../util/color';
import { exactFloat32 } from '../../util/format';
import { section } from './common';
import './lens.css';

export interface LensProps {
  state: LensState;
  /** The trace's tokens as the walkthrough labels them (the position picker's). */
  labels: string[];
  /** Cell size for the attribution's heat-map. */
  cell: number;
  onPosition(position: number): void;
  onToken(token: number): void;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
/** A probability as the table prints it: three significant digits. */
const prob = (p: number) => (p >= 0.001 ? p.toFixed(3) : p.toExponential(1));

function rowName(l: number, layers: number): string {
  if (l === 0) return tr('walk.lens.row.embed');
  return tr(l === layers ? 'walk.lens.row.output' : 'walk.lens.row.block', { l: l - 1 });
}

/** The lens table: one row per residual stream, its top tokens (buttons that pick the token attributed), the token's probability. */
function tableHtml(r: LensResult): string {
  const scale = sequentialScale(1);
  const cell = (id: number, text: string, p: number) =>
    `<td><button type="button" class="lens-token${id === r.token ? ' on' : ''}" data-id="${id}" data-p="${exactFloat32(p)}" ` +
    `style="background:${scale.color(p)};color:${scale.ink(p)}" title="${esc(tr('walk.lens.pick', { token: text, id }))}">` +
    `<span class="tok">${esc(text)}</span> <span class="p">${prob(p)}</span></button></td>`;
  const k = r.rows[0]?.top.length ?? 0;
  const head = Array.from({ length: k }, (_, i) => `<th scope="col">${tr('walk.lens.col.rank', { n: i + 1 })}</th>`).join('');
  const body = r.rows
    .map(
      (row, l) =>
        `<tr data-layer="${row.layer}"><th scope="row">${rowName(l, r.layers)}</th>${row.top.map((x) => cell(x.id, x.text, x.p)).join('')}` +
        `<td class="lens-p" data-p="${exactFloat32(r.tokenP[l])}">${prob(r.tokenP[l])}</td></tr>`,
    )
    .join('');
  return (
    `<div class="lens-scroll"><table class="lens-table" data-position="${r.position}"><thead><tr><th scope="col">${tr('walk.lens.col.stream')}</th>${head}` +
    `<th scope="col">${tr('walk.lens.col.token', { token: esc(r.tokenText) })}</th></tr></thead><tbody>${body}</tbody></table></div>`
  );
}

/** The attribution's parts outside the heads, and the engine's logit they sum to. */
function partsHtml(a: NonNullable<LensResult['attribution']>): string {
  return `<p class="lens-parts" data-logit="${exactFloat32(a.logit)}" data-embed="${exactFloat32(a.embed)}" data-ln-bias="${exactFloat32(a.lnBias)}">${tr('walk.lens.dla.parts', {
    embed: a.embed.toFixed(3),
    lnBias: a.lnBias.toFixed(3),
    logit: a.logit.toFixed(3),
  })}</p>`;
}

/** (L, H + 2): each head's contribution, then the layer's b_O and MLP. */
function attributionMatrix(r: LensResult) {
  const a = r.attribution!;
  const H = r.heads;
  const K = H + 2;
  const data = new Float32Array(r.layers * K);
  for (let l = 0; l < r.layers; l++) {
    data.set(a.heads.data.subarray(l * H, (l + 1) * H), l * K);
    data[l * K + H] = a.attnBias[l];
    data[l * K + H + 1] = a.mlp[l];
  }
  const cols = [...Array.from({ length: H }, (_, h) => tr('walk.lens.dla.head', { h })), tr('walk.lens.dla.bias'), tr('walk.lens.dla.mlp')];
  return { data: { shape: [r.layers, K], data }, cols };
}

export function renderLens(host: HTMLElement, p: LensProps) {
  const s = p.state;
  const key = `${s.key}|${s.status}|${lang()}|${p.cell}`;
  if (host.dataset.key === key) return;
  host.dataset.key = key;
  host.dataset.status = s.status;
  // While a new position or token computes, the previous result stays (dimmed by the section's data-status).
  const r = s.status === 'error' ? null : s.result;
  const position = r?.position ?? s.position ?? p.labels.length - 1;
  const options = p.labels.map((l, i) => `<option value="${i}"${i === position ? ' selected' : ''}>${i} ${esc(l)}</option>`).join('');
  const status = s.status === 'computing' ? tr('walk.lens.computing') : s.status === 'error' ? esc(s.error ?? '') : '';
  host.innerHTML =
    `<h3>${tr('walk.lens.title')}</h3><p class="muted">${tr('walk.lens.explain')}</p>` +
    `<label class="lens-position">${tr('walk.lens.position')} <select name="lensPosition">${options}</select></label>` +
    `<p class="lens-status${s.status === 'error' ? ' error' : ''}" role="status">${status}</p>` +
    (r ? tableHtml(r) : '') +
    (r ? `<h4>${tr('walk.lens.dla.title', { token: esc(r.tokenText) })}</h4>` : '') +
    (r && r.attribution ? `<p class="muted">${tr('walk.lens.dla.explain')}</p><div class="lens-dla"></div>${partsHtml(r.attribution)}` : '') +
    (r && !r.attribution ? `<p class="note">${tr('walk.lens.dla.post')}</p>` : '');
  host.querySelector<HTMLSelectElement>('select[name="lensPosition"]')!.addEventListener('change', (ev) => p.onPosition(Number((ev.target as HTMLSelectElement).value)));
  host.querySelectorAll<HTMLButtonElement>('button.lens-token').forEach((b) => b.addEventListener('click', () => p.onToken(Number(b.dataset.id))));
  if (!r?.attribution) return;
  const m = attributionMatrix(r);
  renderMatrix(host.querySelector<HTMLElement>('.lens-dla')!, {
    name: 'lens-dla',
    title: tr('walk.lens.dla.matrix', { token: esc(r.tokenText) }),
    caption: `(L, H + 2) = (${r.layers}, ${r.heads + 2})`,
    data: m.data,
    scale: divergingScale(maxAbs(m.data.data)),
    cell: p.cell,
    rowLabels: Array.from({ length: r.layers }, (_, l) => tr('walk.lens.dla.layer', { l })),
    colLabels: m.cols,
  });
}

/** The lens's place under the output step: the lens when the step shows a trained decoder, else a line saying what it needs. */
export function lensSection(host: HTMLElement, p: LensProps | null) {
  const el = section(host, 'lens', 'lens');
  if (p) return renderLens(el, p);
  const key = `none|${lang()}`;
  if (el.dataset.key === key) return;
  el.dataset.key = key;
  el.innerHTML = `<p class="note">${tr('walk.lens.needsModel')}</p>`;
}
