// Small helpers shared by the stage components (render layer).
export function section(host: HTMLElement, name: string, className = 'eqn'): HTMLElement {
  let el = host.querySelector<HTMLElement>(`:scope > [data-section="${name}"]`);
  if (!el) {
    el = document.createElement('div');
    el.className = className;
    el.dataset.section = name;
    host.appendChild(el);
  }
  return el;
}

export function note(host: HTMLElement, name: string, html: string) {
  const el = section(host, name, 'note');
  el.innerHTML = html;
}

export const idx = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
export const shape = (...dims: (string | number)[]) => `(${dims.join(', ')})`;
