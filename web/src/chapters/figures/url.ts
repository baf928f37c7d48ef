// A figure's controls in the URL: f.<figure>.<control>=<value>, so a link reopens the figure as the
// reader set it.
export function readFigure(url: URL, figure: string, control: string, fallback: number): number {
  const v = url.searchParams.get(`f.${figure}.${control}`);
  return v !== null && Number.isFinite(Number(v)) ? Number(v) : fallback;
}

export const readFigureText = (url: URL, figure: string, control: string, fallback: string): string => url.searchParams.get(`f.${figure}.${control}`) ?? fallback;

function edit(fn: (u: URL) => void) {
  const url = new URL(location.href);
  fn(url);
  history.replaceState(history.state, '', url);
}

export const writeFigure = (figure: string, control: string, v: number) => edit((u) => u.searchParams.set(`f.${figure}.${control}`, String(v)));
export const writeFigureText = (figure: string, control: string, v: string) => edit((u) => u.searchParams.set(`f.${figure}.${control}`, v));
