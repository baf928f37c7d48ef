// A minimal observable store: components subscribe and re-render from state; only actions set state.
export class Store<S extends object> {
  private state: S;
  private readonly subs = new Set<(s: S, prev: S) => void>();
  private scheduled = false;
  private prevForNotify: S;

  constructor(initial: S) {
    this.state = initial;
    this.prevForNotify = initial;
  }

  get(): Readonly<S> {
    return this.state;
  }

  /** Shallow-merges `patch`; subscribers run once per animation frame at most. */
  set(patch: Partial<S>) {
    this.state = { ...this.state, ...patch };
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      const prev = this.prevForNotify;
      this.prevForNotify = this.state;
      for (const s of this.subs) s(this.state, prev);
    });
  }

  subscribe(fn: (s: S, prev: S) => void): () => void {
    this.subs.add(fn);
    return () => this.subs.delete(fn);
  }
}
