// §10's encoder as both sides name it: its pieces in the order the chapter adds them (the worker
// sorts the engine's parameters into them, the page lists them) and the attention choices.
export const PIECES = ['embedding', 'attention', 'ffn', 'residual', 'layernorm'] as const;
export type Piece = (typeof PIECES)[number];
/** The attention the reader picks: the variant, with full attention restricted to a window. */
export type AttentionChoice = 'full' | 'window' | 'linear';
