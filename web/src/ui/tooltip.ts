// One floating tooltip for the whole page (hover or keyboard focus shows exact values and
// dot-product terms). It belongs to the element it describes (its anchor): a press or a focus
// anywhere else hides it, so a tooltip opened by a tap does not outlive a tab switch.
let el: HTMLDivElement | null = null;
let anchor: Element | null = null;

/** A point on the screen (a MouseEvent is one). */
export interface ScreenPoint {
  clientX: number;
  clientY: number;
}

function ensure(): HTMLDivElement {
  if (!el) {
    el = document.createElement('div');
    el.className = 'tooltip';
    el.setAttribute('role', 'tooltip');
    el.id = 'attnlab-tooltip';
    document.body.appendChild(el);
    const away = (ev: Event) => {
      if (anchor && !(ev.target instanceof Node && anchor.contains(ev.target))) hideTooltip();
    };
    document.addEventListener('pointerdown', away, true);
    document.addEventListener('focusin', away, true);
    document.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape') hideTooltip();
    });
  }
  return el;
}

/** Shows `html` next to `at` for the element `owner` (hidden again when the reader presses or focuses elsewhere). */
export function showTooltip(html: string, at: ScreenPoint, owner: Element | null = null) {
  const t = ensure();
  anchor = owner;
  t.innerHTML = html;
  t.style.opacity = '1';
  moveTooltip(at);
}

/** Moves the open tooltip next to `at` (the pointer moving within its cell). */
export function moveTooltip(at: ScreenPoint) {
  const t = ensure();
  const pad = 14;
  const { innerWidth: W, innerHeight: H } = window;
  const r = t.getBoundingClientRect();
  let x = at.clientX + pad;
  let y = at.clientY + pad;
  if (x + r.width > W - 8) x = at.clientX - r.width - pad;
  if (y + r.height > H - 8) y = at.clientY - r.height - pad;
  t.style.transform = `translate(${Math.max(4, x)}px, ${Math.max(4, y)}px)`;
}

/** Shows `html` beside the element `owner` (keyboard focus: there is no pointer position). */
export function showTooltipFor(html: string, owner: Element) {
  const r = owner.getBoundingClientRect();
  showTooltip(html, { clientX: r.right, clientY: r.bottom }, owner);
}

export function hideTooltip() {
  anchor = null;
  if (el) {
    el.style.opacity = '0';
  }
}
