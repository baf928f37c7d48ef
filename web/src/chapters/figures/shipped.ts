// The page side of the shipped models a figure reads: where the page serves them (copied into
// web/dist/models by scripts/build_web.sh), as the request carries it to the engine worker.
import { shippedFile, type ShippedName, type ShippedRef } from '../../engine/protocol/shipped';

export const shippedRef = (name: ShippedName): ShippedRef => ({ name, url: new URL(`models/${shippedFile(name)}`, document.baseURI).href });

/** The layers and heads of both shipped models (their config, models/*.safetensors): the figures' layer and head choices. The engine refuses any other by name. */
export const SHIPPED_LAYERS = [0, 1, 2, 3] as const;
export const SHIPPED_HEADS = [0, 1, 2, 3] as const;
