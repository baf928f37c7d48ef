// The logit lens under the walkthrough's output step: its store and the only code that changes it.
// When the output step shows a layer of a trained decoder (the lab's, a shipped or an opened one),
// the engine worker reads that decoder's stream at the chosen position (protocol/lens.ts); the
// position and the token attributed are the reader's choices, the last position and the output's
// top token until then.
import { t } from '../i18n';
import type { EngineClient } from '../engine/client/client';
import type { InterpSource, LensResult } from '../engine/protocol/lens';
import type { WalkState } from './state';
import { Store } from '../util/store';

/** Tokens each row of the lens lists. */
export const LENS_TOP = 5;

export interface LensState {
  status: 'idle' | 'computing' | 'ready' | 'error';
  /** The walkthrough trace (WalkState.version) the choices and the result belong to. */
  version: number;
  /** The position read; null = the last. */
  position: number | null;
  /** The token attributed; null = the output's top token. */
  token: number | null;
  /** What the shown result (or the request under way) was asked for: version|position|token. */
  key: string;
  result: LensResult | null;
  error: string | null;
}

export const lensStore = new Store<LensState>({ status: 'idle', version: -1, position: null, token: null, key: '', result: null, error: null });

let engine: EngineClient | null = null;
export function attachLensEngine(client: EngineClient) {
  engine = client;
}

/** The model the lens reads for this walkthrough state, or null when it shows no trained decoder. */
export function lensSource(s: Pick<WalkState, 'trace' | 'traced' | 'settings'>): InterpSource | null {
  const model = s.trace?.model;
  const which = (s.traced ?? s.settings).model;
  if (!model || model.kind !== 'decoder' || which === 'random') return null;
  return which;
}

/** Asks the worker for the lens when the output step shows a trained decoder and the shown lens is not for it. */
export function followLens(s: WalkState, stepId: string) {
  const source = lensSource(s);
  if (!engine || s.status !== 'ready' || stepId !== 'output' || !source || !s.trace?.model) return;
  let l = lensStore.get();
  if (l.version !== s.version) {
    lensStore.set({ version: s.version, position: null, token: null, result: null });
    l = lensStore.get();
  }
  const tokens = s.trace.model.tokens;
  const position = l.position ?? tokens.length - 1;
  const key = `${s.version}|${position}|${l.token}`;
  if (key === l.key) return;
  lensStore.set({ key, status: 'computing', error: null });
  engine
    .call('lens', { kind: 'lens', source, tokens, position, top: LENS_TOP, token: l.token })
    .then((r) => {
      if (lensStore.get().key === key) lensStore.set({ status: 'ready', result: r.result });
    })
    .catch((e: unknown) => {
      if (lensStore.get().key === key) lensStore.set({ status: 'error', result: null, error: t('walk.lens.error', { message: e instanceof Error ? e.message : String(e) }) });
    });
}

/** The reader chose the position read (the attributed token returns to the output's top one there). */
export const setLensPosition = (position: number) => lensStore.set({ position, token: null });
/** The reader chose the token whose logit is attributed. */
export const setLensToken = (token: number) => lensStore.set({ token });
