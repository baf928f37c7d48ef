// tests/package/consumer/node.mjs: what a Node user of the installed package writes. Prints the
// trace as one line of JSON.
import { loadAttnLab, unloadAttnLab } from 'attnlab';
import { attentionTrace } from './trace.mjs';

const lab = await loadAttnLab();
console.log(JSON.stringify(attentionTrace(lab)));
unloadAttnLab(lab);
