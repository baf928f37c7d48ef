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

Training reference (train_gpt_adamw, train_gpt_adamw_learned; tests/train/test_train_reference.cpp):
  TinyGpt below is attnlab's DecoderLM in plain torch with the engine's state_dict names. From
  torch's seeded default init it trains with torch.optim.AdamW on reverse-task batches drawn with
  torch's RNG. Stored: "init.<name>" and "final.<name>" for every parameter, "tokens" and
  "targets" I32 (N, B, T) (-1 = ignored), "losses" F32 (N) (step i's loss before its update);
  metadata: the ModelConfig::to_metadata() strings, the optimiser as "optim.*", "steps" and
  "description". Float32 throughout, like the engine: agreement is to rounding (test: 1e-4).

A PyTorch user loads our weights (check_attnlab_checkpoint, run at the end of main): the engine
writes attnlab_decoder_checkpoint.safetensors (our CLI) and attnlab_decoder_logits.safetensors
(tokens and our logits for them); this script parses the checkpoint with json/struct only, builds
TinyGpt from its metadata, load_state_dict(strict=True) and asserts torch's logits equal ours.

Gradient cases (lstm_*: tests/nn/test_lstm.cpp and tests/wasm/lstm.test.mjs; mha_grad_*:
tests/wasm/mha_backward.test.mjs) store a random upstream gradient and the float64 autograd
gradients of every input and parameter as "grad.<name>". They alone are rewritten by

    /usr/bin/python3 tests/reference/make_fixtures.py gradients

Rerunning everything, from the repository root:

    cmake -S . -B build-ref -G Ninja && cmake --build build-ref -j2 --target attnlab_tests attnlab_cli
    # 1. only if the checkpoint format or the model code changed: a new engine checkpoint ...
    build-ref/attnlab train --task copy --length 4 --layers 1 --d-model 16 --heads 2 --kv-heads 1 \
        --pe rope --steps 200 --warmup 20 --batch 16 --seed 3 --quiet \
        --save tests/reference/fixtures/attnlab_decoder_checkpoint.safetensors
    # ... and the engine's logits for it
    ATTNLAB_WRITE_FIXTURES=1 build-ref/tests/attnlab_tests --gtest_filter='CheckpointReference.*'
    # 2. the torch fixtures, and the check that torch reproduces the engine's logits
    /usr/bin/python3 tests/reference/make_fixtures.py
    # 3. the C++ side
    ctest --test-dir build-ref --output-on-failure -R 'TrainReference|Checkpoint'

RoPE convention (gqa_rope, rope_mha): rotate-half, as in GPT-NeoX and HF LLaMA. For head dim D,
  inv_freq[i] = base^(-2i/D) for i < D/2, angle[pos, i] = pos * inv_freq[i] (pos = 0..T-1),
  cos = cat([cos(angle), cos(angle)]) and sin likewise over the D dims,
  x_rot = x * cos + rotate_half(x) * sin,  rotate_half(x) = cat([-x2, x1]),
  where x1 = x[..., :D/2] and x2 = x[..., D/2:]. Applied to q and k after the head split, before
  the scores; v is not rotated.
"""

import contextlib
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


# ---------------------------------------------------------------------------------------------
# A tiny GPT in plain PyTorch, equal to attnlab's DecoderLM, and 20 steps of AdamW with it.
#
# What the engine computes (src/model/token/decoder_lm.cpp, trunk.cpp, src/model/transformer_block.cpp; the
# names are its state_dict names):
#   x = tok_emb.weight[tokens]                         (B, T, C), no sqrt(C) scaling
#     + sinusoidal(T, C) or pos_emb.weight[:T]         (nothing for none and rope)
#   per block, pre-LN:  h = x + attn(ln1(x));  y = h + ffn(ln2(h))
#              post-LN: h = ln1(x + attn(x));  y = ln2(h + ffn(h))
#   attn: q/k/v/out_proj (bias per config.bias), heads split (B, H, T, D), RoPE rotate-half on q
#         and k when positional is rope, scores * 1/sqrt(D), causal -inf, softmax, merge heads
#   ffn: fc2(gelu_exact(fc1(x))) or relu; LayerNorm eps 1e-5 (torch's)
#   ln_f after the blocks for pre-LN only; logits = head(h) without bias, or h @ tok_emb.weight.T
#   when tie_weights (then there is no head.weight, as in our checkpoints)
# The config travels as ModelConfig::to_metadata() strings (src/model/config.cpp).

# ModelConfig::to_metadata() keys; checkpoint and fixture metadata may hold others
# ("format", "version", "task.*", "optim.*", "description") that are not part of the config.
MODEL_CONFIG_KEYS = (
    "kind", "vocab_size", "max_len", "d_model", "num_heads", "num_kv_heads", "num_layers", "ff_dim",
    "activation", "positional", "norm", "scale_attention", "attention_scale", "dropout", "tie_weights",
    "pooling", "num_classes", "bias", "gradient_checkpointing",
)


def model_metadata(**fields):
    """ModelConfig::to_metadata() of a decoder: the engine's defaults overridden by fields."""
    meta = {
        "kind": "decoder", "vocab_size": "0", "max_len": "64", "d_model": "32", "num_heads": "4",
        "num_kv_heads": "0", "num_layers": "2", "ff_dim": "128", "activation": "gelu",
        "positional": "sinusoidal", "norm": "pre", "scale_attention": "true", "attention_scale": "none",
        "dropout": "0", "tie_weights": "false", "pooling": "mean", "num_classes": "0", "bias": "true",
        "gradient_checkpointing": "false",
    }
    for key, value in fields.items():
        assert key in meta, key
        if isinstance(value, bool):
            value = "true" if value else "false"
        meta[key] = str(value)
    assert tuple(sorted(meta)) == tuple(sorted(MODEL_CONFIG_KEYS))
    return meta


class GptConfig:
    """The fields of attnlab's ModelConfig that a decoder uses, parsed from metadata strings."""

    def __init__(self, meta):
        cfg = {k: meta[k] for k in MODEL_CONFIG_KEYS}  # KeyError names a missing key
        assert cfg["kind"] == "decoder", "only decoders are mirrored here"
        flag = lambda k: {"true": True, "false": False}[cfg[k]]
        self.vocab_size, self.max_len, self.d_model = int(cfg["vocab_size"]), int(cfg["max_len"]), int(cfg["d_model"])
        self.num_heads, self.num_layers, self.ff_dim = int(cfg["num_heads"]), int(cfg["num_layers"]), int(cfg["ff_dim"])
        self.num_kv_heads = int(cfg["num_kv_heads"]) or self.num_heads  # 0 means num_heads
        self.activation, self.positional, self.norm = cfg["activation"], cfg["positional"], cfg["norm"]
        assert self.activation in ("gelu", "relu") and self.norm in ("pre", "post")
        assert self.positional in ("none", "sinusoidal", "learned", "rope")
        self.bias, self.tie_weights = flag("bias"), flag("tie_weights")
        self.head_dim = self.d_model // self.num_heads
        if not flag("scale_attention"):
            self.scale = 1.0
        elif cfg["attention_scale"] != "none":
            self.scale = float(cfg["attention_scale"])
        else:
            self.scale = 1.0 / math.sqrt(self.head_dim)
        assert float(cfg["dropout"]) == 0.0, "the mirror has no dropout (its masks could not match ours anyway)"


def rope_rotate(x, base=10000):
    """x (B, h, T, D) -> rotated, positions 0..T-1; tables in float64 rounded to x's dtype, as the engine does."""
    cos, sin = rope_tables(x.shape[-2], x.shape[-1], base)  # (T, D)
    return x * cos.to(x.dtype) + rotate_half(x) * sin.to(x.dtype)


class GptAttention(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        c, kv_width = cfg.d_model, cfg.num_kv_heads * cfg.head_dim
        self.q_proj = torch.nn.Linear(c, c, bias=cfg.bias)
        self.k_proj = torch.nn.Linear(c, kv_width, bias=cfg.bias)
        self.v_proj = torch.nn.Linear(c, kv_width, bias=cfg.bias)
        self.out_proj = torch.nn.Linear(c, c, bias=cfg.bias)

    def forward(self, x):
        cfg = self.cfg
        b, t, c = x.shape
        h, hkv, d = cfg.num_heads, cfg.num_kv_heads, cfg.head_dim
        q = self.q_proj(x).view(b, t, h, d).transpose(1, 2)  # (B, H, T, D)
        k = self.k_proj(x).view(b, t, hkv, d).transpose(1, 2)  # (B, Hkv, T, D)
        v = self.v_proj(x).view(b, t, hkv, d).transpose(1, 2)  # (B, Hkv, T, D)
        if cfg.positional == "rope":
            q, k = rope_rotate(q), rope_rotate(k)
        k = k.repeat_interleave(h // hkv, dim=1)  # (B, H, T, D): query head i reads kv head i // (H / Hkv)
        v = v.repeat_interleave(h // hkv, dim=1)  # (B, H, T, D)
        scores = (q @ k.transpose(-2, -1)) * cfg.scale  # (B, H, T, T)
        scores = scores.masked_fill(causal_mask(t), float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v  # (B, H, T, D)
        return self.out_proj(y.transpose(1, 2).reshape(b, t, c))  # (B, T, C)


class GptFeedForward(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc1 = torch.nn.Linear(cfg.d_model, cfg.ff_dim, bias=cfg.bias)
        self.fc2 = torch.nn.Linear(cfg.ff_dim, cfg.d_model, bias=cfg.bias)
        self.act = torch.nn.GELU(approximate="none") if cfg.activation == "gelu" else torch.nn.ReLU()

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))  # (B, T, C) -> (B, T, F) -> (B, T, C)


class GptBlock(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.pre = cfg.norm == "pre"
        self.ln1 = torch.nn.LayerNorm(cfg.d_model, eps=1e-5)
        self.attn = GptAttention(cfg)
        self.ln2 = torch.nn.LayerNorm(cfg.d_model, eps=1e-5)
        self.ffn = GptFeedForward(cfg)

    def forward(self, x):
        if self.pre:
            h = x + self.attn(self.ln1(x))
            return h + self.ffn(self.ln2(h))
        h = self.ln1(x + self.attn(x))
        return self.ln2(h + self.ffn(h))


class TinyGpt(torch.nn.Module):
    """attnlab's DecoderLM in plain PyTorch; state_dict() keys equal the engine's parameter names."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = torch.nn.Embedding(cfg.vocab_size, cfg.d_model)
        if cfg.positional == "learned":
            self.pos_emb = torch.nn.Embedding(cfg.max_len, cfg.d_model)
        self.blocks = torch.nn.ModuleList(GptBlock(cfg) for _ in range(cfg.num_layers))
        if cfg.norm == "pre":
            self.ln_f = torch.nn.LayerNorm(cfg.d_model, eps=1e-5)
        if not cfg.tie_weights:
            self.head = torch.nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)

    def forward(self, tokens):
        """tokens (B, T) int -> logits (B, T, V)."""
        cfg = self.cfg
        t = tokens.shape[1]
        x = self.tok_emb(tokens)  # (B, T, C)
        if cfg.positional == "sinusoidal":
            x = x + sinusoidal(t, cfg.d_model).to(x.dtype)  # (T, C), float64 table rounded once, as the engine
        elif cfg.positional == "learned":
            x = x + self.pos_emb.weight[:t]  # (T, C)
        for block in self.blocks:
            x = block(x)  # (B, T, C)
        if cfg.norm == "pre":
            x = self.ln_f(x)
        return x @ self.tok_emb.weight.T if cfg.tie_weights else self.head(x)  # (B, T, V)


def reverse_batches(steps, b, length, vocab):
    """The engine's reverse task layout (train/tasks.hpp), drawn with torch's RNG: example =
    a1..aL SEP aL..a1 with symbols 0..vocab-1 and SEP = vocab; tokens = example[:-1],
    targets = example[1:] with the prompt positions t < L ignored (-1). Returns (steps, B, 2L) twice."""
    a = torch.randint(0, vocab, (steps, b, length))  # (N, B, L)
    sep = torch.full((steps, b, 1), vocab)
    example = torch.cat([a, sep, a.flip(-1)], dim=-1)  # (N, B, 2L + 1)
    tokens, targets = example[..., :-1].clone(), example[..., 1:].clone()  # (N, B, T)
    targets[..., :length] = -1
    return tokens.to(torch.int32), targets.to(torch.int32)


ADAMW = {"lr": 3e-3, "betas": (0.9, 0.98), "eps": 1e-8, "weight_decay": 0.01}


def train_gpt_case(meta, steps, b, length, vocab, description):
    """Trains TinyGpt(meta) from torch's seeded default init for `steps` AdamW steps on stored
    reverse batches; returns the fixture (init.*, tokens, targets, losses, final.*) and its metadata."""
    cfg = GptConfig(meta)
    assert cfg.vocab_size == vocab + 1 and 2 * length <= cfg.max_len
    with torch.enable_grad():
        model = TinyGpt(cfg)
        init = {k: f32(v.detach().clone()) for k, v in model.state_dict().items()}
        tokens, targets = reverse_batches(steps, b, length, vocab)
        # nanoGPT's configure_optimizers = the engine's decay_matrices_only: decay rank >= 2 only.
        params = list(model.parameters())
        groups = [
            {"params": [p for p in params if p.dim() >= 2], "weight_decay": ADAMW["weight_decay"]},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
        ]
        opt = torch.optim.AdamW(groups, lr=ADAMW["lr"], betas=ADAMW["betas"], eps=ADAMW["eps"])
        losses = []
        for step in range(steps):
            opt.zero_grad()
            logits = model(tokens[step].long())  # (B, T, V)
            loss = torch.nn.functional.cross_entropy(
                logits.view(-1, cfg.vocab_size), targets[step].long().view(-1), ignore_index=-1
            )
            loss.backward()
            opt.step()
            losses.append(loss.item())
    final = {k: f32(v.detach().clone()) for k, v in model.state_dict().items()}
    assert losses[-1] < losses[0], losses  # it learns something, so the updates are not noise
    tensors = {"init." + k: v for k, v in init.items()}
    tensors.update({"final." + k: v for k, v in final.items()})
    tensors.update(tokens=tokens, targets=targets, losses=torch.tensor(losses, dtype=torch.float32))
    metadata = dict(meta)
    metadata.update({
        "optim.name": "adamw",
        "optim.lr": repr(ADAMW["lr"]),
        "optim.beta1": repr(ADAMW["betas"][0]),
        "optim.beta2": repr(ADAMW["betas"][1]),
        "optim.eps": repr(ADAMW["eps"]),
        "optim.weight_decay": repr(ADAMW["weight_decay"]),
        "optim.decay": "decay_matrices_only: weight_decay on parameters with dim >= 2, 0 on the others",
        "optim.schedule": "constant",
        "optim.clip": "none",
        "steps": str(steps),
        "description": description,
    })
    return tensors, metadata


def train_gpt_adamw():
    meta = model_metadata(vocab_size=11, max_len=16, d_model=32, num_heads=4, num_kv_heads=4, num_layers=2,
                          ff_dim=128, activation="gelu", positional="rope", norm="pre", tie_weights=False)
    return train_gpt_case(meta, steps=20, b=8, length=8, vocab=10, description=(
        "make_fixtures.TinyGpt (attnlab's DecoderLM in plain torch, float32): 2 pre-LN blocks, C=32, H=Hkv=4, "
        "F=128, exact GELU, RoPE, untied head, dropout 0, torch's seeded default init. 20 steps of "
        "torch.optim.AdamW(lr=3e-3, betas=(0.9, 0.98), eps=1e-8) with weight_decay 0.01 on dim >= 2 and 0 "
        "on the rest (two groups), constant lr, no clipping, on the stored reverse batches (B=8, T=16); "
        "loss = cross_entropy(logits.view(-1, V), targets.view(-1), ignore_index=-1). losses[i] is the "
        "loss of step i before its update; init.* and final.* are the parameters before and after."))


def train_gpt_adamw_learned():
    meta = model_metadata(vocab_size=7, max_len=12, d_model=16, num_heads=2, num_kv_heads=1, num_layers=1,
                          ff_dim=32, activation="relu", positional="learned", norm="post", tie_weights=True)
    return train_gpt_case(meta, steps=10, b=4, length=6, vocab=6, description=(
        "make_fixtures.TinyGpt: the other switches, cheaply: 1 post-LN block (no ln_f), C=16, H=2, Hkv=1 "
        "(MQA), F=32, ReLU, learned positions (pos_emb.weight), tied head (logits = h @ tok_emb.weight.T; "
        "no head.weight). 10 steps of the same AdamW as train_gpt_adamw on stored reverse batches "
        "(B=4, T=12)."))


TRAIN_CASES = [train_gpt_adamw, train_gpt_adamw_learned]


# ---------------------------------------------------------------------------------------------
# A PyTorch user loads an attnlab checkpoint. Both files are written by the engine, not here:
#   attnlab_decoder_checkpoint.safetensors  by the CLI (the command is in the file header above)
#   attnlab_decoder_logits.safetensors      by tests/io/test_checkpoint_reference.cpp with
#                                           ATTNLAB_WRITE_FIXTURES=1: "tokens" (1, T) I32 and the
#                                           engine's "logits" (1, T, V) for them
# This function uses nothing but json, struct and torch to read them.

CHECKPOINT = "attnlab_decoder_checkpoint.safetensors"
CHECKPOINT_LOGITS = "attnlab_decoder_logits.safetensors"


def load_attnlab_checkpoint(path):
    """An attnlab checkpoint as a TinyGpt: the header's __metadata__ holds format/version, the
    ModelConfig strings and free-form task.* notes; the tensors are the state_dict."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])  # u64 little-endian header length
    header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    meta = header.pop("__metadata__")
    assert meta["format"] == "attnlab" and meta["version"] == "1", meta
    data = raw[8 + n :]
    state = {}
    for name, entry in header.items():
        assert entry["dtype"] == "F32", (name, entry)
        begin, end = entry["data_offsets"]
        values = struct.unpack(f"<{(end - begin) // 4}f", data[begin:end])
        state[name] = torch.tensor(values, dtype=torch.float32).reshape(entry["shape"])
    model = TinyGpt(GptConfig(meta)).eval()
    model.load_state_dict(state, strict=True)  # every name, every shape, nothing extra
    return model, meta


def check_attnlab_checkpoint():
    """Torch reproduces the engine's logits from the engine's checkpoint. Returns the max difference."""
    path, logits_path = os.path.join(FIXTURE_DIR, CHECKPOINT), os.path.join(FIXTURE_DIR, CHECKPOINT_LOGITS)
    model, meta = load_attnlab_checkpoint(path)
    ours, _ = read_safetensors(logits_path)
    tokens, expected = ours["tokens"].long(), ours["logits"]  # (1, T), (1, T, V)
    with torch.no_grad():
        logits = model(tokens)  # (1, T, V) float32
        exact = TinyGpt(model.cfg).double()
        exact.load_state_dict({k: v.double() for k, v in model.state_dict().items()}, strict=True)
        logits64 = exact(tokens)
    diff = (logits - expected).abs().max().item()
    diff64 = (logits64 - expected.double()).abs().max().item()
    assert diff < 1e-5 and diff64 < 1e-5, (diff, diff64)
    task = ", ".join(f"{k}={v}" for k, v in sorted(meta.items()) if k.startswith("task."))
    print(f"{CHECKPOINT}: torch loads it (strict) and reproduces the engine's logits {tuple(expected.shape)}: "
          f"max |diff| {diff:.2e} in float32, {diff64:.2e} in float64 ({task})")
    return diff


# ---------------------------------------------------------------------------------------------
# LSTM (tests/nn/test_lstm.cpp). torch.nn.LSTM(I, H, num_layers, bias, batch_first=True) with
# torch's default init (U(-1/sqrt(H), 1/sqrt(H)), biases non-zero), run in float64 from the
# stored float32 values. The loss is sum(output*dout) + sum(h*dh) + sum(c*dc) with random
# weights, so "dout", "dh", "dc" are the upstream gradients and "grad.<name>" the gradients of
# x, h0, c0 (when given) and every parameter. Unbatched cases store x (T, I), h0/c0 (L, H) and
# output (T, H), as torch takes and returns them. Metadata: input_size, hidden_size,
# num_layers, bias, batched, with_state ("1"/"0"), description.


def case_lstm(i, h, layers, *, bias=True, b=None, t=5, with_state=False, description):
    lstm = torch.nn.LSTM(i, h, layers, bias=bias, batch_first=True)
    params = {n: p.detach().clone() for n, p in lstm.named_parameters()}
    x = torch.randn(t, i) if b is None else torch.randn(b, t, i)
    state_shape = (layers, h) if b is None else (layers, b, h)
    tensors = {"x": x, **params}
    inputs = {"x": x.double().requires_grad_()}
    if with_state:
        tensors["h0"], tensors["c0"] = torch.randn(state_shape), torch.randn(state_shape)
        inputs["h0"] = tensors["h0"].double().requires_grad_()
        inputs["c0"] = tensors["c0"].double().requires_grad_()
    lstm64 = lstm.double()
    state = (inputs["h0"], inputs["c0"]) if with_state else None
    out, (hn, cn) = lstm64(inputs["x"], state)
    dout, dh, dc = torch.randn(out.shape), torch.randn(hn.shape), torch.randn(cn.shape)
    loss = (out * dout.double()).sum() + (hn * dh.double()).sum() + (cn * dc.double()).sum()
    named = dict(lstm64.named_parameters())
    wrt = list(inputs.values()) + list(named.values())
    grads = torch.autograd.grad(loss, wrt)
    for name, g in zip(list(inputs) + list(named), grads):
        tensors["grad." + name] = f32(g)
    tensors.update(dout=dout, dh=dh, dc=dc, output=f32(out.detach()), h=f32(hn.detach()), c=f32(cn.detach()))
    metadata = {"input_size": str(i), "hidden_size": str(h), "num_layers": str(layers), "bias": "1" if bias else "0",
                "batched": "0" if b is None else "1", "with_state": "1" if with_state else "0",
                "description": description}
    return tensors, metadata


def lstm_basic():
    return case_lstm(3, 4, 1, b=2, t=5, description="nn.LSTM(3, 4, batch_first=True)(x), in float64.")


def lstm_two_layers_state():
    return case_lstm(5, 6, 2, b=3, t=4, with_state=True,
                     description="nn.LSTM(5, 6, num_layers=2, batch_first=True)(x, (h0, c0)), in float64.")


def lstm_unbatched_state():
    return case_lstm(3, 5, 2, t=6, with_state=True,
                     description="nn.LSTM(3, 5, num_layers=2, batch_first=True)(x (T, I), (h0, c0) (L, H)), in float64.")


def lstm_nobias():
    return case_lstm(4, 3, 2, bias=False, b=2, t=3,
                     description="nn.LSTM(4, 3, num_layers=2, bias=False, batch_first=True)(x), in float64.")


# MultiHeadAttention's gradients (tests/wasm/mha_backward.test.mjs, lab's backward):
# nn.MultiheadAttention in float64 from the stored float32 values, loss sum(output*dout) with
# random dout; "grad.x", "grad.memory" (cross-attention) and "grad.<name>" under the engine's
# split projection names. Metadata as the attention cases.


def case_mha_grad(c, h, b, t, *, causal=False, s=None, description):
    mha = make_mha(c, h)
    x = torch.randn(b, t, c)  # (B, T, C)
    tensors = {"x": x, **mha_params(mha)}
    inputs = {"x": x.double().requires_grad_()}
    if s is not None:
        tensors["memory"] = torch.randn(b, s, c)  # (B, S, C)
        inputs["memory"] = tensors["memory"].double().requires_grad_()
    kv = inputs.get("memory", inputs["x"])
    params = {n: v.double().requires_grad_() for n, v in mha_params(mha).items()}
    q = inputs["x"] @ params["q_proj.weight"].T + params["q_proj.bias"]
    k = kv @ params["k_proj.weight"].T + params["k_proj.bias"]
    v = kv @ params["v_proj.weight"].T + params["v_proj.bias"]
    split = lambda y: y.reshape(b, y.shape[1], h, c // h).transpose(1, 2)  # (B, H, T, D)
    scores = split(q) @ split(k).transpose(-1, -2) / math.sqrt(c // h)
    if causal:
        scores = scores.masked_fill(causal_mask(t, scores.shape[-1]), float("-inf"))
    context = (scores.softmax(-1) @ split(v)).transpose(1, 2).reshape(b, t, c)
    out = context @ params["out_proj.weight"].T + params["out_proj.bias"]
    reference, _ = run_mha(mha, x, tensors.get("memory"), causal_mask(t, scores.shape[-1]) if causal else None)
    assert (f32(out.detach()) - reference).abs().max() < 1e-6, "the explicit forward differs from nn.MultiheadAttention"
    dout = torch.randn(b, t, c)
    wrt = {**inputs, **params}
    grads = torch.autograd.grad((out * dout.double()).sum(), list(wrt.values()))
    tensors.update({"grad." + n: f32(g) for n, g in zip(wrt, grads)})
    tensors.update(dout=dout, output=f32(out.detach()))
    return tensors, meta(h, h, True, causal, "none", description)


def mha_grad_causal():
    return case_mha_grad(8, 2, 2, 5, causal=True, description="Gradients of sum(nn.MultiheadAttention(8, 2, "
                         "batch_first=True)(x, x, x, attn_mask=causal) * dout), in float64.")


def mha_grad_cross():
    return case_mha_grad(8, 2, 2, 4, s=6, description="Gradients of sum(nn.MultiheadAttention(8, 2, "
                         "batch_first=True)(x, memory, memory) * dout), in float64.")


# The CLIP-style contrastive loss (nn/contrastive_loss.hpp): symmetric InfoNCE of F.normalize'd
# text and image embeddings at temperature tau, in float64 from the stored float32 values;
# "loss" (1), "grad.text", "grad.image".


def contrastive_basic():
    n, e, tau = 5, 6, 0.2
    text, image = torch.randn(n, e), torch.randn(n, e)  # (N, E) each
    t, v = text.double().requires_grad_(), image.double().requires_grad_()
    normalize = torch.nn.functional.normalize
    logits = normalize(t, dim=-1) @ normalize(v, dim=-1).T / tau  # (N, N)
    target = torch.arange(n)
    ce = torch.nn.functional.cross_entropy
    loss = 0.5 * (ce(logits, target) + ce(logits.T, target))
    dt, dv = torch.autograd.grad(loss, [t, v])
    tensors = {"text": text, "image": image, "loss": f32(loss.detach().reshape(1)), "grad.text": f32(dt),
               "grad.image": f32(dv)}
    return tensors, {"temperature": str(tau), "description": "0.5 * (cross_entropy(L, arange(N)) + "
                     "cross_entropy(L.T, arange(N))), L = normalize(text) @ normalize(image).T / tau, in float64."}


GRADIENT_CASES = [lstm_basic, lstm_two_layers_state, lstm_unbatched_state, lstm_nobias, mha_grad_causal, mha_grad_cross,
                  contrastive_basic]


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


def write_cases(cases, *, no_grad):
    """Writes each case's file and checks it reads back equal; returns the bytes written."""
    total = 0
    for case in cases:
        torch.manual_seed(zlib.crc32(case.__name__.encode()))  # stable per case, independent of order
        with torch.no_grad() if no_grad else contextlib.nullcontext():
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
    return total


def main():
    torch.set_num_threads(1)
    os.makedirs(FIXTURE_DIR, exist_ok=True)
    assert sys.byteorder == "little"
    # `make_fixtures.py gradients` writes only the gradient cases of the LSTM and of attention (they
    # need no engine binaries).
    if sys.argv[1:] == ["gradients"]:
        write_cases(GRADIENT_CASES, no_grad=False)
        return
    check_gqa_equals_mha()
    total = write_cases(CASES, no_grad=True)
    print(f"total {total} bytes")
    # mha_large alone is ~136 KB at its prescribed size (C=64, T=33); keep the rest tiny.
    assert total < 200 * 1024, "fixtures should stay small"
    assert write_cases(GRADIENT_CASES, no_grad=False) < 48 * 1024, "gradient fixtures should stay small"
    for case in TRAIN_CASES:
        torch.manual_seed(zlib.crc32(case.__name__.encode()))
        tensors, metadata = case()
        path = os.path.join(FIXTURE_DIR, case.__name__ + ".safetensors")
        write_safetensors(path, tensors, metadata)
        back, back_meta = read_safetensors(path)
        assert back_meta == metadata and all(torch.equal(back[n], t) for n, t in tensors.items())
        losses = ", ".join(f"{x:.4f}" for x in tensors["losses"][[0, 1, -2, -1]].tolist())
        print(f"{case.__name__:24s} {os.path.getsize(path):7d} B  losses {losses} (first, second, last two)")
        # train_gpt_adamw is ~233 KB: its 26,176 parameters stored twice (init, final) are 209 KB.
        assert os.path.getsize(path) < 240 * 1024, "training fixtures should stay small"
    check_attnlab_checkpoint()


if __name__ == "__main__":
    main()
