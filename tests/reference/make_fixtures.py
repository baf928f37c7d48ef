#!/usr/bin/python3
"""Generate the PyTorch golden fixtures in tests/reference/fixtures/*.safetensors.

Run from the repository root with the interpreter that has torch (Debian's python3-torch):

    /usr/bin/python3 tests/reference/make_fixtures.py

The output is committed. The C++ tests only read the .safetensors files (through
tests/support/fixtures.hpp); they never need Python or torch. The script is deterministic
(torch.manual_seed per case, hand-written safetensors with sorted keys), so rerunning it
reproduces the files byte for byte; `git diff --stat` after a rerun should be empty.

Conventions shared by every file (the names are the contract with the C++ tests):
  * Dimension letters: B batch, T query length, S key length, H heads, Hkv key/value heads,
    D head dim, C = H * D model width. Row-major, outermost first.
  * Inputs are drawn in float32 and stored exactly; the reference outputs are computed in
    float64 from exactly those float32 values and rounded once to float32, so the stored
    answer is as close to the true one as float32 allows and the engine gets the whole
    1e-5 tolerance.
  * Linear weights use PyTorch's layout (out_features, in_features): y = x @ W.T + b.
    nn.MultiheadAttention's in_proj_weight (3C, C) is split into q/k/v_proj.weight (C, C).
    PyTorch initialises the MHA biases to zero, which would let a missing bias go unnoticed,
    so every bias is re-drawn uniformly in [-0.5, 0.5].
  * Masks are U8 with 1 = masked out: "key_padding_mask" (B, S) marks padded keys,
    "attn_mask" (T, S) marks forbidden (query, key) pairs (stored only in mha_explicit_mask).
    Causal cases say causal="1" in the metadata and store no attn_mask.
  * "weights" are per-head attention probabilities (need_weights=True,
    average_attn_weights=False): (B, H, T, S), or (H, T, S) for the unbatched case.
  * Metadata values are strings: num_heads, num_kv_heads, bias ("1"/"0"), causal ("1"/"0"),
    positional ("none"/"rope"), rope_base (RoPE base; "10000", the conventional default, also
    where positional is "none" and it is unused), description (the torch call).

RoPE convention (gqa_rope, rope_mha): rotate-half, as in GPT-NeoX and HF LLaMA. For head dim D,
  inv_freq[i] = base^(-2i/D) for i < D/2, angle[pos, i] = pos * inv_freq[i] (pos = 0..T-1),
  cos = cat([cos(angle), cos(angle)]) and sin likewise over the D dims,
  x_rot = x * cos + rotate_half(x) * sin,  rotate_half(x) = cat([-x2, x1]),
  where x1 = x[..., :D/2] and x2 = x[..., D/2:]. Applied to q and k after the head split, before
  the scores; v is not rotated.
"""

import json
import math
import os
import struct
import sys
import zlib

import torch

FIXTURE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")

_DTYPES = {
    torch.float32: ("F32", 4),
    torch.int32: ("I32", 4),
    torch.int64: ("I64", 8),
    torch.uint8: ("U8", 1),
    torch.bool: ("BOOL", 1),
}


# ---------------------------------------------------------------------------------------------
# safetensors by hand: u64 LE header length, JSON header padded with spaces to a multiple of 8,
# then the tensors back to back in name order. Same canonical form as the C++ serializer
# (compact JSON, sorted keys, no __metadata__ when empty), so the bytes match it exactly.


def write_safetensors(path, tensors, metadata):
    """Write {name: torch.Tensor} and {str: str} metadata to path in safetensors format."""
    header = {}
    if metadata:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()), metadata
        header["__metadata__"] = dict(metadata)
    chunks = []
    offset = 0
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        dtype, size = _DTYPES[t.dtype]
        data = t.numpy().tobytes()  # native order, little-endian (asserted in main)
        assert len(data) == t.numel() * size
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for c in chunks:
            f.write(c)


def read_safetensors(path):
    """Minimal reader, used only to check what write_safetensors produced."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    buf = raw[8 + n :]
    metadata = header.pop("__metadata__", {})
    by_name = {name: dt for dt, (name, _) in _DTYPES.items()}
    tensors = {}
    for name, d in header.items():
        b, e = d["data_offsets"]
        t = torch.frombuffer(bytearray(buf[b:e]), dtype=by_name[d["dtype"]]) if e > b else torch.empty(0, dtype=by_name[d["dtype"]])
        tensors[name] = t.reshape(d["shape"])
    return tensors, metadata


# ---------------------------------------------------------------------------------------------
# Helpers shared by the cases.


def f32(t):
    return t.to(torch.float32)


def u8(mask):
    return mask.to(torch.uint8)


def causal_mask(t, s=None):
    """(T, S) bool, True above the diagonal = key in the future = masked."""
    return torch.triu(torch.ones(t, t if s is None else s, dtype=torch.bool), diagonal=1)


def padding_mask(lengths, s):
    """(B, S) bool, True at padded keys (index >= length)."""
    return torch.arange(s)[None, :] >= torch.tensor(lengths)[:, None]


def uniform_(t, bound=0.5):
    with torch.no_grad():
        t.uniform_(-bound, bound)


def make_mha(c, h, bias=True):
    mha = torch.nn.MultiheadAttention(c, h, bias=bias, batch_first=True)
    if bias:
        uniform_(mha.in_proj_bias)
        uniform_(mha.out_proj.bias)
    return mha.eval()


def mha_params(mha):
    """Split torch's packed in_proj into the names the engine's checkpoints use."""
    c = mha.embed_dim
    w = mha.in_proj_weight.detach()
    p = {
        "q_proj.weight": w[:c],  # (C, C)
        "k_proj.weight": w[c : 2 * c],  # (C, C)
        "v_proj.weight": w[2 * c :],  # (C, C)
        "out_proj.weight": mha.out_proj.weight.detach(),  # (C, C)
    }
    if mha.in_proj_bias is not None:
        b = mha.in_proj_bias.detach()
        p.update({"q_proj.bias": b[:c], "k_proj.bias": b[c : 2 * c], "v_proj.bias": b[2 * c :]})
        p["out_proj.bias"] = mha.out_proj.bias.detach()
    return {k: f32(v.clone()) for k, v in p.items()}


def run_mha(mha, x, memory=None, attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention in float64 on the float32 inputs; returns float32 (output, weights)."""
    ref = torch.nn.MultiheadAttention(
        mha.embed_dim, mha.num_heads, bias=mha.in_proj_bias is not None, batch_first=True
    ).double().eval()
    ref.load_state_dict({k: v.double() for k, v in mha.state_dict().items()})
    kv = x if memory is None else memory
    with torch.no_grad():
        out, weights = ref(
            x.double(),
            kv.double(),
            kv.double(),
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=True,
            average_attn_weights=False,
        )
    return f32(out), f32(weights)


def meta(num_heads, num_kv_heads, bias, causal, positional, description, rope_base=10000):
    return {
        "num_heads": str(num_heads),
        "num_kv_heads": str(num_kv_heads),
        "bias": "1" if bias else "0",
        "causal": "1" if causal else "0",
        "positional": positional,
        "rope_base": str(rope_base),
        "description": description,
    }


def check_weights(weights, allowed):
    """Rows sum to 1 and masked (not allowed) positions get exactly zero weight."""
    sums = weights.double().sum(-1)
    assert torch.allclose(sums, torch.ones_like(sums), atol=1e-6), sums
    assert torch.all(weights[~allowed.expand_as(weights)] == 0)
    assert torch.all(torch.isfinite(weights))


# ---------------------------------------------------------------------------------------------
# Plain grouped-query attention (no nn.MultiheadAttention) for GQA / MQA / RoPE cases.


def rope_tables(t, d, base):
    """cos, sin of shape (T, D), rotate-half layout: cat([f, f]) over the D dims."""
    inv_freq = base ** (-torch.arange(0, d // 2, dtype=torch.float64) * 2 / d)  # (D/2)
    angle = torch.arange(t, dtype=torch.float64)[:, None] * inv_freq[None, :]  # (T, D/2)
    emb = torch.cat([angle, angle], dim=-1)  # (T, D)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat([-x2, x1], dim=-1)


def apply_rope(x, base):
    """x (B, h, T, D) -> rotated (B, h, T, D), positions 0..T-1."""
    cos, sin = rope_tables(x.shape[-2], x.shape[-1], base)
    return x * cos + rotate_half(x) * sin


def gqa_forward(x, p, h, hkv, causal, rope_base=None):
    """Grouped-query attention in float64. x (B, T, C); query head i uses kv head i // (H / Hkv)."""
    x = x.double()
    p = {k: v.double() for k, v in p.items()}
    b, t, c = x.shape
    d = c // h

    def lin(name, inp):
        return inp @ p[name + ".weight"].T + p[name + ".bias"]

    q = lin("q_proj", x).view(b, t, h, d).transpose(1, 2)  # (B, H, T, D)
    k = lin("k_proj", x).view(b, t, hkv, d).transpose(1, 2)  # (B, Hkv, T, D)
    v = lin("v_proj", x).view(b, t, hkv, d).transpose(1, 2)  # (B, Hkv, T, D)
    if rope_base is not None:
        q = apply_rope(q, rope_base)
        k = apply_rope(k, rope_base)
    rep = h // hkv
    k_h = k.repeat_interleave(rep, dim=1)  # (B, H, T, D)
    v_h = v.repeat_interleave(rep, dim=1)  # (B, H, T, D)
    scores = q @ k_h.transpose(-2, -1) / math.sqrt(d)  # (B, H, T, S)
    if causal:
        scores = scores.masked_fill(causal_mask(t), float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # (B, H, T, S)
    y = (weights @ v_h).transpose(1, 2).reshape(b, t, c)  # (B, T, C)
    out = lin("out_proj", y)
    return f32(out), f32(weights), f32(q), f32(k)


def gqa_params(c, h, hkv):
    d = c // h

    def linear(out_f, in_f):
        lin = torch.nn.Linear(in_f, out_f)  # PyTorch default init, (out_features, in_features)
        uniform_(lin.bias)
        return f32(lin.weight.detach().clone()), f32(lin.bias.detach().clone())

    p = {}
    for name, out_f in (("q_proj", c), ("k_proj", hkv * d), ("v_proj", hkv * d), ("out_proj", c)):
        p[name + ".weight"], p[name + ".bias"] = linear(out_f, c)
    return p


def check_gqa_equals_mha():
    """With Hkv == H the plain reimplementation must equal nn.MultiheadAttention."""
    torch.manual_seed(1234)
    c, h, b, t = 16, 4, 2, 6
    mha = make_mha(c, h)
    x = torch.randn(b, t, c)
    for causal in (False, True):
        out_ref, w_ref = run_mha(mha, x, attn_mask=causal_mask(t) if causal else None)
        out, w, _, _ = gqa_forward(x, mha_params(mha), h, h, causal)
        assert torch.allclose(out, out_ref, atol=1e-6), (out - out_ref).abs().max()
        assert torch.allclose(w, w_ref, atol=1e-6), (w - w_ref).abs().max()


def check_rope(q, q_rot, base):
    """RoPE is a rotation (norms kept), position 0 is unchanged, and q_m . k_n depends only on m - n."""
    assert torch.allclose(q.norm(dim=-1), q_rot.norm(dim=-1), atol=1e-5)
    assert torch.allclose(q[..., 0, :], q_rot[..., 0, :])
    d = q.shape[-1]
    u, w = torch.randn(d, dtype=torch.float64), torch.randn(d, dtype=torch.float64)
    cos, sin = rope_tables(8, d, base)
    rot = lambda vec, pos: vec * cos[pos] + rotate_half(vec) * sin[pos]
    assert abs(rot(u, 5) @ rot(w, 3) - rot(u, 2) @ rot(w, 0)) < 1e-9


# ---------------------------------------------------------------------------------------------
# The cases. Each returns (tensors, metadata).


def case_mha(c, h, b, t, *, bias=True, causal=False, lengths=None, explicit_mask=False, s=None, description):
    mha = make_mha(c, h, bias)
    x = torch.randn(b, t, c)  # (B, T, C)
    tensors = {"x": x, **mha_params(mha)}
    memory = None
    if s is not None:
        memory = torch.randn(b, s, c)  # (B, S, C)
        tensors["memory"] = memory
    s = t if s is None else s
    allowed = torch.ones(b, 1, t, s, dtype=torch.bool)  # (B, 1, T, S)
    attn_mask = None
    if causal:
        attn_mask = causal_mask(t, s)
    if explicit_mask:
        attn_mask = torch.rand(t, s) < 0.4  # (T, S)
        keep = min(lengths) if lengths else s
        for row in range(t):  # every row keeps a key that is not padded in any batch
            if attn_mask[row, :keep].all():
                attn_mask[row, torch.randint(keep, ())] = False
        tensors["attn_mask"] = u8(attn_mask)
    if attn_mask is not None:
        allowed &= ~attn_mask
    kpm = None
    if lengths is not None:
        kpm = padding_mask(lengths, s)  # (B, S)
        tensors["key_padding_mask"] = u8(kpm)
        allowed &= ~kpm[:, None, None, :]
    assert allowed.any(-1).all(), "a query row would have no key left"
    out, weights = run_mha(mha, x, memory, attn_mask, kpm)
    check_weights(weights, allowed)
    tensors.update(output=out, weights=weights)
    return tensors, meta(h, h, bias, causal, "none", description)


def mha_basic():
    return case_mha(8, 2, 2, 5, description="nn.MultiheadAttention(8, 2, batch_first=True)(x, x, x, "
                    "need_weights=True, average_attn_weights=False), in float64.")


def mha_odd_width():
    return case_mha(10, 2, 2, 7, causal=True, description="nn.MultiheadAttention(10, 2, batch_first=True)(x, x, x, "
                    "attn_mask=bool upper-triangular causal (T, T), need_weights=True, average_attn_weights=False).")


def mha_padding_causal():
    return case_mha(16, 4, 3, 7, causal=True, lengths=[7, 5, 3], description="nn.MultiheadAttention(16, 4, "
                    "batch_first=True)(x, x, x, key_padding_mask=lengths [7, 5, 3], attn_mask=bool causal (T, T), "
                    "need_weights=True, average_attn_weights=False).")


def mha_explicit_mask():
    return case_mha(12, 3, 2, 6, explicit_mask=True, lengths=[6, 4], description="nn.MultiheadAttention(12, 3, "
                    "batch_first=True)(x, x, x, attn_mask=stored random bool (T, T), key_padding_mask=lengths [6, 4], "
                    "need_weights=True, average_attn_weights=False).")


def mha_cross():
    return case_mha(12, 3, 2, 4, s=9, lengths=[9, 6], description="nn.MultiheadAttention(12, 3, batch_first=True)"
                    "(x, memory, memory, key_padding_mask=memory lengths [9, 6], need_weights=True, "
                    "average_attn_weights=False): cross attention.")


def mha_nobias():
    return case_mha(6, 3, 1, 3, bias=False, description="nn.MultiheadAttention(6, 3, bias=False, batch_first=True)"
                    "(x, x, x, need_weights=True, average_attn_weights=False).")


def mha_large():
    return case_mha(64, 4, 2, 33, causal=True, description="nn.MultiheadAttention(64, 4, batch_first=True)(x, x, x, "
                    "attn_mask=bool causal (T, T), need_weights=True, average_attn_weights=False).")


def mha_unbatched():
    c, h, t = 8, 4, 5
    mha = make_mha(c, h)
    x = torch.randn(t, c)  # (T, C)
    out, weights = run_mha(mha, x, attn_mask=causal_mask(t))
    assert out.shape == (t, c) and weights.shape == (h, t, t), (out.shape, weights.shape)
    check_weights(weights, ~causal_mask(t))
    tensors = {"x": x, **mha_params(mha), "output": out, "weights": weights}
    return tensors, meta(h, h, True, True, "none", "nn.MultiheadAttention(8, 4, batch_first=True)(x, x, x) on "
                         "unbatched x (T, C), attn_mask=bool causal (T, T), need_weights=True, "
                         "average_attn_weights=False.")


def case_gqa(c, h, hkv, b, t, rope, description):
    p = gqa_params(c, h, hkv)
    x = torch.randn(b, t, c)  # (B, T, C)
    base = 10000
    out, weights, q_rot, k_rot = gqa_forward(x, p, h, hkv, causal=True, rope_base=base if rope else None)
    check_weights(weights, ~causal_mask(t))
    tensors = {"x": x, **p, "output": out, "weights": weights}
    if rope:
        _, _, q, _ = gqa_forward(x, p, h, hkv, causal=True)
        check_rope(q.double(), q_rot.double(), base)
        tensors.update(q_rot=q_rot, k_rot=k_rot)  # (B, H, T, D), (B, Hkv, T, D)
    return tensors, meta(h, hkv, True, True, "rope" if rope else "none", description, base)


def gqa_h4_kv2():
    return case_gqa(16, 4, 2, 2, 6, False, "Plain torch grouped-query attention (make_fixtures.gqa_forward): "
                    "C=16, H=4, Hkv=2, query head h uses kv head h // 2, causal, with biases.")


def mqa_h4_kv1():
    return case_gqa(16, 4, 1, 2, 6, False, "Plain torch multi-query attention (make_fixtures.gqa_forward): "
                    "C=16, H=4, Hkv=1, every query head uses the single kv head, causal, with biases.")


def gqa_rope():
    return case_gqa(16, 4, 2, 2, 6, True, "Plain torch grouped-query attention (make_fixtures.gqa_forward): "
                    "C=16, H=4, Hkv=2, causal, RoPE rotate-half (GPT-NeoX / HF LLaMA) base 10000 on q and k after "
                    "the head split; q_rot (B, H, T, D) and k_rot (B, Hkv, T, D) are the rotated heads.")


def rope_mha():
    return case_gqa(16, 2, 2, 1, 8, True, "Plain torch multi-head attention (make_fixtures.gqa_forward with "
                    "Hkv = H = 2): C=16, causal, RoPE rotate-half (GPT-NeoX / HF LLaMA) base 10000 on q and k; "
                    "q_rot and k_rot are the rotated heads (B, H, T, D).")


def sinusoidal(t, c, base=10000.0):
    """PE[pos, 2i] = sin(pos / base^(2i/C)), PE[pos, 2i+1] = cos(same), float64 then float32."""
    pe = torch.zeros(t, c, dtype=torch.float64)
    pos = torch.arange(t, dtype=torch.float64)[:, None]  # (T, 1)
    two_i = torch.arange(0, c, 2, dtype=torch.float64)  # (ceil(C/2))
    angle = pos / base ** (two_i / c)  # (T, ceil(C/2))
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : c // 2])
    return f32(pe)


def sinusoidal_pe():
    pe, pe_odd = sinusoidal(12, 16), sinusoidal(12, 7)
    assert torch.allclose(pe_odd[:, 6], f32(torch.sin(torch.arange(12.0, dtype=torch.float64) / 10000 ** (6 / 7))))
    assert torch.all(pe[0, 0::2] == 0) and torch.all(pe[0, 1::2] == 1)
    return {"pe": pe, "pe_odd": pe_odd}, {
        "base": "10000",
        "description": "Sinusoidal positional encoding of Vaswani et al. 2017 (section 3.5): "
        "PE[pos, 2i] = sin(pos / 10000^(2i/C)), PE[pos, 2i+1] = cos(pos / 10000^(2i/C)), "
        "computed in float64 and cast to float32; pe is (T=12, C=16), pe_odd is (T=12, C=7).",
        "odd_convention": "For odd C the last column C-1 is even and holds only the sin term "
        "sin(pos / 10000^((C-1)/C)); it has no cos partner.",
    }


CASES = [
    mha_basic,
    mha_odd_width,
    mha_padding_causal,
    mha_explicit_mask,
    mha_cross,
    mha_nobias,
    mha_unbatched,
    mha_large,
    gqa_h4_kv2,
    mqa_h4_kv1,
    gqa_rope,
    rope_mha,
    sinusoidal_pe,
]


def main():
    torch.set_num_threads(1)
    check_gqa_equals_mha()
    os.makedirs(FIXTURE_DIR, exist_ok=True)
    total = 0
    assert sys.byteorder == "little"
    for case in CASES:
        torch.manual_seed(zlib.crc32(case.__name__.encode()))  # stable per case, independent of order
        with torch.no_grad():
            tensors, metadata = case()
        path = os.path.join(FIXTURE_DIR, case.__name__ + ".safetensors")
        write_safetensors(path, tensors, metadata)
        back, back_meta = read_safetensors(path)
        assert back_meta == metadata and back.keys() == tensors.keys()
        for name, t in tensors.items():
            assert back[name].dtype == t.dtype and torch.equal(back[name], t), name
        size = os.path.getsize(path)
        total += size
        shapes = ", ".join(f"{n} {tuple(t.shape)}" for n, t in sorted(tensors.items()))
        print(f"{case.__name__:20s} {size:7d} B  {shapes}")
    print(f"total {total} bytes")
    # mha_large alone is ~136 KB at its prescribed size (C=64, T=33); keep the rest tiny.
    assert total < 200 * 1024, "fixtures should stay small"


if __name__ == "__main__":
    main()
