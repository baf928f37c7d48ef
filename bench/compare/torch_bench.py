#!/usr/bin/python3
"""bench/compare/torch_bench.py: the PyTorch side of the comparison, and the shared inputs.

Run by run.sh with Debian's python3-torch (1.13); every subcommand prints JSON.

  prepare    --data DIR --sizes 256,1024,2048     Q, K, V (4, n, 32) from torch.manual_seed(n) and
                                                  the reference output in float64, one file per n;
                                                  DIR/attention.onnx via torch.onnx.export
  attention  --data DIR --sizes ... --threads 1,2 the private fused SDPA of 1.13 and the math path
  train      --threads 1,2                        steps/s of the tiny encoder (see encoder_step)
  train-tang --threads 1,2                        tokens/s of the shipped tang model's step (see TangLM)
  lstm       --sizes 64,128,256,512 --threads 1,2 torch.nn.LSTM(64, 64, batch_first=True) at B = 32,
                                                  T = each size: forward, and forward + backward

File DIR/attn_n<n>.bin: little-endian float32, q, k, v, reference, each (H, n, D) = (4, n, 32)
row-major, nothing else. Every bench reads it, so all systems see the same numbers and check
their output against the same reference (max |out - ref| <= 1e-4).
"""
import argparse
import json
import math
import os
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

H, D = 4, 32  # heads, head dim: Q/K/V are (H, n, D), batch 1
SCALE = 1.0 / math.sqrt(D)
TOLERANCE = 1e-4


def load(data_dir, n):
    raw = np.fromfile(os.path.join(data_dir, f"attn_n{n}.bin"), dtype="<f4")
    q, k, v, ref = (torch.from_numpy(a.copy()).reshape(H, n, D) for a in np.split(raw, 4))
    return q, k, v, ref


def attention_math(q, k, v):
    """softmax(Q·Kᵀ·scale)·V: the graph the ONNX model and TF.js run."""
    return torch.matmul(torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * SCALE, dim=-1), v)


class Attention(torch.nn.Module):
    def forward(self, q, k, v):  # (H, n, D) each -> (H, n, D)
        return attention_math(q, k, v)


def prepare(args):
    os.makedirs(args.data, exist_ok=True)
    for n in args.sizes:
        torch.manual_seed(n)
        q, k, v = (torch.randn(H, n, D) for _ in range(3))
        ref = attention_math(q.double(), k.double(), v.double()).float()
        np.concatenate([t.numpy().ravel() for t in (q, k, v, ref)]).astype("<f4").tofile(
            os.path.join(args.data, f"attn_n{n}.bin"))
    # torch 1.13's exporter serialises in C++: no onnx package needed. Opset 13: Softmax on the
    # last axis only (no 2-D coercion). n is a dynamic axis, so one model serves every size.
    x = torch.zeros(H, 8, D)
    torch.onnx.export(Attention(), (x, x, x), os.path.join(args.data, "attention.onnx"),
                      input_names=["q", "k", "v"], output_names=["out"], opset_version=13,
                      dynamic_axes={name: {1: "n"} for name in ("q", "k", "v", "out")})
    print(json.dumps({"prepared": args.sizes, "data": args.data, "seed": "torch.manual_seed(n)"}))


def time_calls(fn, target_seconds, min_repeats=5, max_repeats=200, warmup=2):
    """Median ms over repeats after warm-up; the repeat count fills about target_seconds."""
    start = time.perf_counter()
    for _ in range(warmup):
        fn()
    per_call = (time.perf_counter() - start) / warmup
    repeats = int(min(max_repeats, max(min_repeats, target_seconds / max(per_call, 1e-9))))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), repeats


def blas_library():
    """The BLAS shared library this process mapped (Debian's torch calls libblas.so.3, whatever
    update-alternatives points it to: the reference BLAS is ~20x slower than OpenBLAS)."""
    torch.matmul(torch.ones(8, 8), torch.ones(8, 8))
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "blas" in line.lower() and "/" in line}
    return ", ".join(sorted(os.path.realpath(p) for p in paths)) or "unknown"


def attention(args):
    sdpa = getattr(torch, "_scaled_dot_product_attention", None)
    sdpa_name = "torch._scaled_dot_product_attention"
    if sdpa is None:
        sdpa, sdpa_name = getattr(F, "_scaled_dot_product_attention", None), "F._scaled_dot_product_attention"
    variants = [("math", "matmul/softmax/matmul", attention_math)]
    if sdpa is not None:
        # 1.13's private SDPA returns (output, weights); scale is always 1/sqrt(D).
        variants.insert(0, ("sdpa", sdpa_name,
                            lambda q, k, v: sdpa(q, k, v, None, 0.0, False, False)[0]))
    results = []
    with torch.inference_mode():
        for n in args.sizes:
            q, k, v, ref = load(args.data, n)
            for threads in args.threads:
                torch.set_num_threads(threads)
                for key, label, fn in variants:
                    err = (fn(q, k, v) - ref).abs().max().item()
                    ms, repeats = time_calls(lambda: fn(q, k, v), args.seconds)
                    results.append({"system": f"pytorch-{key}", "variant": label, "threads": threads, "n": n,
                                    "ms": ms, "repeats": repeats, "max_abs_err": err, "ok": err <= TOLERANCE})
    print(json.dumps({"system": "pytorch", "version": torch.__version__, "blas": blas_library(), "results": results}))


def sinusoidal(T, C):
    """(T, C) table of Vaswani et al. §3.5, as attnlab's PositionalKind::sinusoidal adds it."""
    pos = torch.arange(T, dtype=torch.float32)[:, None]
    div = torch.exp(torch.arange(0, C, 2, dtype=torch.float32) * (-math.log(10000.0) / C))
    table = torch.zeros(T, C)
    table[:, 0::2], table[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
    return table


class Encoder(torch.nn.Module):
    """The same model as compare_native.cpp's encoder: token embedding + sinusoidal positions,
    2 post-LN blocks (nn.TransformerEncoderLayer defaults: ReLU, norm_first=False), dropout 0,
    mean pooling, a linear head to 2 classes."""

    def __init__(self, vocab, T, C, heads, ff, layers, classes):
        super().__init__()
        self.tok_emb = torch.nn.Embedding(vocab, C)
        self.register_buffer("pos", sinusoidal(T, C))
        layer = torch.nn.TransformerEncoderLayer(C, heads, ff, dropout=0.0, batch_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, layers)
        self.head = torch.nn.Linear(C, classes)

    def forward(self, tokens):  # (B, T) -> (B, K)
        x = self.tok_emb(tokens) + self.pos  # (B, T, C)
        return self.head(self.blocks(x).mean(dim=1))


def train(args):
    B, T, C, heads, ff, layers, vocab, classes = 32, 64, 64, 4, 256, 2, 16, 2
    torch.manual_seed(0)
    # One fixed batch with a label mean pooling can learn (are most tokens in the upper half of
    # the vocabulary?): the loss must fall over the timed steps, or the run is marked not ok.
    tokens = torch.randint(0, vocab, (B, T))
    labels = ((tokens >= vocab // 2).sum(dim=1) > T // 2).long()
    results = []
    for threads in args.threads:
        torch.set_num_threads(threads)
        torch.manual_seed(1)
        model = Encoder(vocab, T, C, heads, ff, layers, classes)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
        losses = []

        def step():
            opt.zero_grad()
            loss = F.cross_entropy(model(tokens), labels)
            loss.backward()
            opt.step()
            losses.append(loss.item())

        ms, repeats = time_calls(step, args.seconds, min_repeats=10, warmup=3)
        ok = all(math.isfinite(l) for l in losses) and losses[-1] < losses[0]
        results.append({"system": "pytorch-train", "variant": "nn.TransformerEncoder + AdamW",
                        "threads": threads, "ms_per_step": ms, "steps_per_s": 1e3 / ms, "repeats": repeats,
                        "first_loss": losses[0], "last_loss": losses[-1], "ok": ok,
                        "parameters": sum(p.numel() for p in model.parameters())})
    print(json.dumps({"system": "pytorch", "version": torch.__version__, "results": results}))


def rope_tables(T, D, base=10000.0):
    """(T, D/2) cos and sin of attnlab's RoPE (posenc/rope.hpp): theta_p = base^(-2p/D), angle = pos * theta_p."""
    theta = base ** (-torch.arange(0, D // 2, dtype=torch.float64) * 2.0 / D)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * theta
    return torch.cos(angle).float(), torch.sin(angle).float()


def rotate_half(x, cos, sin):  # x: (B, H, T, D) -> (B, H, T, D); pairs p and p + D/2, as attnlab
    h = x.shape[-1] // 2
    a, b = x[..., :h], x[..., h:]
    return torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)


class TangBlock(torch.nn.Module):
    """attnlab's pre-LN block: x + attn(ln1(x)), then + ff(ln2(x)); Q, K, V, O Linear with bias,
    RoPE on Q and K, causal softmax(QK^T / sqrt(D)) V, feed-forward Linear-GELU-Linear."""

    def __init__(self, C, H, F_):
        super().__init__()
        self.H = H
        self.ln1, self.ln2 = torch.nn.LayerNorm(C), torch.nn.LayerNorm(C)
        self.q, self.k, self.v, self.o = (torch.nn.Linear(C, C) for _ in range(4))
        self.ff1, self.ff2 = torch.nn.Linear(C, F_), torch.nn.Linear(F_, C)

    def forward(self, x, cos, sin, mask):  # x: (B, T, C) -> (B, T, C)
        B, T, C = x.shape
        h = self.ln1(x)
        split = lambda y: y.view(B, T, self.H, C // self.H).transpose(1, 2)  # (B, H, T, D)
        q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
        q, k = rotate_half(q, cos, sin), rotate_half(k, cos, sin)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(C // self.H) + mask  # (B, H, T, T)
        att = torch.softmax(scores, dim=-1) @ v  # (B, H, T, D)
        x = x + self.o(att.transpose(1, 2).reshape(B, T, C))
        return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))


class TangLM(torch.nn.Module):
    """The same model as attnlab_compare's train-tang (the shipped tang model's architecture):
    token embedding, 4 pre-LN blocks with RoPE, final LayerNorm, logits = h @ tok_emb^T (tied)."""

    def __init__(self, V, T, C, H, F_, L):
        super().__init__()
        self.tok_emb = torch.nn.Embedding(V, C)
        torch.nn.init.normal_(self.tok_emb.weight, std=0.02)  # attnlab's Embedding init (tied: also the head)
        self.blocks = torch.nn.ModuleList(TangBlock(C, H, F_) for _ in range(L))
        self.ln_f = torch.nn.LayerNorm(C)
        cos, sin = rope_tables(T, C // H)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)
        self.register_buffer("mask", torch.full((T, T), float("-inf")).triu(1))

    def forward(self, tokens):  # (B, T) -> (B, T, V)
        x = self.tok_emb(tokens)
        for b in self.blocks:
            x = b(x, self.cos, self.sin, self.mask)
        return self.ln_f(x) @ self.tok_emb.weight.t()


def train_tang(args):
    B, T, C, H, F_, L, V = 32, 72, 128, 4, 512, 4, 4003
    torch.manual_seed(0)
    stream = torch.randint(0, V, (B, T + 1))
    tokens, targets = stream[:, :T].contiguous(), stream[:, 1:].contiguous()
    results = []
    for threads in args.threads:
        torch.set_num_threads(threads)
        torch.manual_seed(1)
        model = TangLM(V, T, C, H, F_, L)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
        losses = []

        def step():
            opt.zero_grad()
            loss = F.cross_entropy(model(tokens).view(B * T, V), targets.view(B * T))
            loss.backward()
            opt.step()
            losses.append(loss.item())

        ms, repeats = time_calls(step, args.seconds, min_repeats=5, warmup=2)
        ok = all(math.isfinite(l) for l in losses) and losses[-1] < losses[0]
        results.append({"system": "pytorch-train-tang", "variant": "TangLM (RoPE, pre-LN, tied) + AdamW",
                        "threads": threads, "ms_per_step": ms, "steps_per_s": 1e3 / ms,
                        "tokens_per_s": 1e3 * B * T / ms, "repeats": repeats,
                        "first_loss": losses[0], "last_loss": losses[-1], "ok": ok,
                        "parameters": sum(p.numel() for p in model.parameters())})
    print(json.dumps({"system": "pytorch", "version": torch.__version__, "results": results}))


def matmul(args):
    """torch.mm of two (n, n) fp32 matrices: OpenBLAS sgemm (see blas_library()), the reference
    the native matmul is measured against."""
    results = []
    torch.manual_seed(7)
    with torch.inference_mode():
        for n in args.sizes:
            a, b = torch.randn(n, n), torch.randn(n, n)
            for threads in args.threads:
                torch.set_num_threads(threads)
                ms, repeats = time_calls(lambda: torch.mm(a, b), args.seconds)
                results.append({"system": "pytorch-matmul", "variant": "torch.mm (BLAS sgemm)", "threads": threads,
                                "n": n, "ms": ms, "gflops": 2.0 * n ** 3 / ms / 1e6, "repeats": repeats, "ok": True})
    print(json.dumps({"system": "pytorch", "version": torch.__version__, "blas": blas_library(), "results": results}))


def median_cpu_ms(fn, calls=5):
    """Median process CPU time of a few calls (all threads): attnlab_compare's cpu_ms."""
    times = []
    for _ in range(calls):
        start = time.process_time()
        fn()
        times.append((time.process_time() - start) * 1e3)
    return statistics.median(times)


def lstm(args):
    """torch.nn.LSTM(64, 64, batch_first=True) on x (32, T, 64): the forward without autograd
    (inference, torch's fastest), and forward + backward of sum(output * dout) with x requiring
    grad, so the backward computes dx and every parameter's gradient, as attnlab's does."""
    B, I, H = 32, 64, 64
    results = []
    for T in args.sizes:
        torch.manual_seed(T)
        layer = torch.nn.LSTM(I, H, batch_first=True)
        x = torch.randn(B, T, I).requires_grad_()
        dout = torch.randn(B, T, H)
        for threads in args.threads:
            torch.set_num_threads(threads)

            def forward():
                with torch.no_grad():
                    return layer(x)[0]

            def forward_backward():
                layer.zero_grad(set_to_none=True)
                x.grad = None
                out, _ = layer(x)
                out.backward(dout)
                return out

            for key, fn in (("forward", forward), ("forward+backward", forward_backward)):
                ok = bool(torch.isfinite(fn()).all())
                ms, repeats = time_calls(fn, args.seconds)
                results.append({"system": "pytorch-lstm", "variant": f"nn.LSTM {key}", "pass": key,
                                "threads": threads, "T": T, "ms": ms, "cpu_ms": median_cpu_ms(fn), "repeats": repeats,
                                "ok": ok})
    print(json.dumps({"system": "pytorch", "version": torch.__version__, "blas": blas_library(), "results": results}))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["prepare", "attention", "train", "train-tang", "matmul", "lstm"])
    p.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "data"))
    p.add_argument("--sizes", default="256,1024,2048", type=lambda s: [int(x) for x in s.split(",")])
    p.add_argument("--threads", default="1,2", type=lambda s: [int(x) for x in s.split(",")])
    p.add_argument("--seconds", default=2.0, type=float, help="measuring time per configuration")
    args = p.parse_args()
    {"prepare": prepare, "attention": attention, "train": train, "train-tang": train_tang, "matmul": matmul,
     "lstm": lstm}[args.command](args)


if __name__ == "__main__":
    main()
