// The models attnlab trained on real text and ships with the page (models/tang, models/brown, copied
// into web/dist/models by scripts/build_web.sh), as the page and the engine worker name them.

export type ShippedName = 'tang' | 'brown';
/** What a figure request that reads a shipped model carries: the model's name and where the page serves it. */
export interface ShippedRef { name: ShippedName; url: string }

/** A shipped model's file name in the page (models/<name>.safetensors). */
export const shippedFile = (name: ShippedName) => `${name}.safetensors`;
