// The walkthrough's controls: the player (previous / play / next, speed, progress, the reading-time
// bar), the step list and the keyboard (← → space). Each is an action (actions.ts); what they show
// follows the store.
import { attr, span, t } from '../i18n';
import { option } from '../ui/markup';
import { gotoStep, next, prev, setSpeed, togglePlay } from './actions';
import { SPEEDS, walkStore, type WalkState } from './state';
import { FIRST_BACKWARD_STEP, FIRST_GENERATION_STEP, STEPS } from './steps';

export const playerHtml = () => `
      <div class="player" role="toolbar" ${attr('aria-label', 'walk.aria.player')}>
        <button type="button" data-act="prev" ${attr('title', 'walk.prev.title')}>◀◀</button>
        <button type="button" data-act="play" class="play" ${attr('title', 'walk.play.title')}>${t('walk.play')}</button>
        <button type="button" data-act="next" ${attr('title', 'walk.next.title')}>▶▶</button>
        <label class="speed">${span('walk.speed')} <select name="speed">${SPEEDS.map((s) => option(s, `${s}×`)).join('')}</select></label>
        <div class="progress"><div class="bar"></div></div>
        <span class="kbd-hint" data-i18n="walk.kbdHint">${t('walk.kbdHint')}</span>
        <div class="rest" ${attr('title', 'walk.rest.title')}><div class="rest-bar"></div></div>
      </div>`;

/** The heading of the step list's part that starts at step i (the backward pass, generation), or ''. */
const part = (i: number) =>
  (i === FIRST_BACKWARD_STEP ? `<li class="steps-part" aria-hidden="true" data-i18n="walk.steps.backward">${t('walk.steps.backward')}</li>` : '') +
  (i === FIRST_GENERATION_STEP ? `<li class="steps-part" aria-hidden="true" data-i18n="walk.steps.generation">${t('walk.steps.generation')}</li>` : '');

export const stepsHtml = () => `
      <nav class="steps" ${attr('aria-label', 'walk.aria.steps')}>
        <ol>${STEPS.map((_, i) => `${part(i)}<li${i >= FIRST_BACKWARD_STEP && i < FIRST_GENERATION_STEP ? ' class="backward"' : ''}><button type="button" data-step="${i}"><span class="n">${i + 1}</span><span class="t"></span></button></li>`).join('')}</ol>
      </nav>`;

export interface WalkControls {
  /** The step titles in the page's language. */
  relabel(): void;
  render(s: WalkState): void;
}

export function mountControls(root: HTMLElement): WalkControls {
  const el = <T extends Element>(sel: string) => root.querySelector<T>(sel)!;
  el<HTMLElement>('nav.steps').addEventListener('click', (ev) => {
    const b = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-step]');
    if (b) gotoStep(Number(b.dataset.step));
  });
  el<HTMLElement>('.player').addEventListener('click', (ev) => {
    const act = (ev.target as HTMLElement).closest<HTMLButtonElement>('button[data-act]')?.dataset.act;
    if (act === 'prev') prev();
    else if (act === 'next') next();
    else if (act === 'play') togglePlay();
  });
  el<HTMLSelectElement>('select[name="speed"]').addEventListener('change', (ev) => setSpeed(Number((ev.target as HTMLSelectElement).value)));
  window.addEventListener('keydown', (ev) => {
    if (root.hidden || ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    // Keys typed into a control, and Space on a focused button, tab, link or cell, belong to it.
    const target = ev.target as HTMLElement;
    if (target.closest('input, select, textarea, [contenteditable="true"]')) return;
    if (ev.key === ' ' && target.closest('button, a[href], [role="tab"], summary, [tabindex]')) return;
    if (ev.key === 'ArrowRight') next();
    else if (ev.key === 'ArrowLeft') prev();
    else if (ev.key === ' ') togglePlay();
    else return;
    ev.preventDefault();
  });
  el<HTMLSelectElement>('select[name="speed"]').value = String(walkStore.get().speed);

  // The player sticks below the page header while that header sticks (wide screens), else at the top.
  const pageHeader = document.querySelector<HTMLElement>('header.top');
  const placePlayer = () => {
    const h = pageHeader && getComputedStyle(pageHeader).position === 'sticky' ? pageHeader.offsetHeight : 0;
    root.style.setProperty('--player-top', `${h}px`);
  };
  if (pageHeader) new ResizeObserver(placePlayer).observe(pageHeader);
  window.addEventListener('resize', placePlayer);
  placePlayer();

  /** The reading-time bar: empties over the time playback rests on this picture. */
  let restKey = '';
  function showRest(s: WalkState) {
    const bar = el<HTMLElement>('.rest-bar');
    const key = s.playing && s.restMs > 0 ? `${s.step}|${s.version}|${s.restMs}` : '';
    if (key === restKey) return;
    restKey = key;
    el<HTMLElement>('.rest').classList.toggle('on', key !== '');
    bar.style.animation = 'none';
    void bar.offsetWidth; // restart the animation
    bar.style.animation = key ? `rest-drain ${s.restMs}ms linear forwards` : '';
  }

  return {
    relabel() {
      root.querySelectorAll<HTMLElement>('nav.steps button .t').forEach((e, i) => (e.textContent = STEPS[i].title()));
    },
    render(s) {
      root.querySelectorAll<HTMLButtonElement>('nav.steps button').forEach((b, i) => {
        b.classList.toggle('current', i === s.step);
        b.classList.toggle('done', i < s.step);
        b.setAttribute('aria-current', i === s.step ? 'step' : 'false');
      });
      el<HTMLButtonElement>('button.play').textContent = s.playing ? t('walk.pause') : t('walk.play');
      el<HTMLElement>('.progress .bar').style.width = `${((s.step + 1) / STEPS.length) * 100}%`;
      showRest(s);
    },
  };
}
