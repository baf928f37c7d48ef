// node swap_tokenizer.mjs TARGET SOURCE OUT: writes TARGET's tensors with SOURCE's tokenizer in the
// metadata (a safetensors file: 8-byte little-endian header length, the JSON header, the data),
// so a test can hand the CLI a checkpoint whose tokenizer does not fit its embedding.
import { readFileSync, writeFileSync } from 'node:fs';

const [target, source, out] = process.argv.slice(2);
const read = (path) => {
  const bytes = readFileSync(path);
  const n = Number(bytes.readBigUInt64LE(0));
  return { header: JSON.parse(bytes.subarray(8, 8 + n).toString('utf8')), data: bytes.subarray(8 + n) };
};
const t = read(target);
const s = read(source);
const key = Object.keys(s.header.__metadata__ ?? {}).find((k) => k.includes('tokenizer'));
if (!key) throw new Error(`${source} carries no tokenizer`);
t.header.__metadata__ = { ...(t.header.__metadata__ ?? {}), [key]: s.header.__metadata__[key] };
let json = Buffer.from(JSON.stringify(t.header), 'utf8');
const padded = Buffer.alloc(Math.ceil(json.length / 8) * 8, 0x20);
json.copy(padded);
json = padded;
const len = Buffer.alloc(8);
len.writeBigUInt64LE(BigInt(json.length));
writeFileSync(out, Buffer.concat([len, json, t.data]));
