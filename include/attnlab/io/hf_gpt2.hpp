// attnlab/io/hf_gpt2.hpp: GPT-2 checkpoints in the Hugging Face format, in and out.
//
// What it is for: opening a pretrained GPT-2-family model (gpt2, distilgpt2, gpt2-medium, a
// fine-tune) as an attnlab DecoderLM, so every stage, trace and tool of the engine works on it,
// and writing an attnlab decoder back out in the same format. Two layouts are read:
//   huggingface   the `model.safetensors` of the Hugging Face hub: wte.weight, wpe.weight,
//                 h.<i>.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}.{weight,bias},
//                 ln_f.{weight,bias}, and h.<i>.attn.{bias,masked_bias} mask buffers (ignored)
//   state_dict    GPT2LMHeadModel.state_dict(): the same under "transformer.", and lm_head.weight
// Dtypes F32, F16 and BF16 (converted to float32 exactly).
// Not for: other architectures (GPT-J, LLaMA, BERT: refused by model_type or by their keys), nor
// cross-attention or per-layer-scaled GPT-2 variants (refused by name).
//
// The mapping onto the engine's own layers (DecoderLM; names in model/token/trunk.hpp):
//   | Hugging Face (Conv1D stores (in, out))  | engine (PyTorch Linear: (out, in))               |
//   |-----------------------------------------|--------------------------------------------------|
//   | wte.weight (V, C), wpe.weight (P, C)    | tok_emb.weight, pos_emb.weight                   |
//   | h.i.ln_1 / ln_2 (C)                     | blocks.i.ln1 / ln2                               |
//   | h.i.attn.c_attn.weight (C, 3C) = q|k|v  | blocks.i.attn.{q,k,v}_proj.weight, each (C, C)ᵀ  |
//   | h.i.attn.c_attn.bias (3C)               | blocks.i.attn.{q,k,v}_proj.bias (C)              |
//   | h.i.attn.c_proj (C, C), (C)             | blocks.i.attn.out_proj (W_O)                     |
//   | h.i.mlp.c_fc (C, F), (F)                | blocks.i.ffn.fc1 (F, C)                          |
//   | h.i.mlp.c_proj (F, C), (C)              | blocks.i.ffn.fc2 (C, F)                          |
//   | ln_f (C)                                | ln_f                                             |
//   | lm_head.weight (V, C), absent or = wte  | tied (tie_weights), else head.weight             |
// and the config: learned positions (max_len = n_positions), pre-LN blocks, causal, scores /
// sqrt(head_dim), biases, GELU's tanh form for gelu_new, LayerNorm eps = layer_norm_epsilon.
//
// config.json is optional. Without it every size comes from the shapes and n_head = n_embd / 64
// (true for the whole GPT-2 family); notes() says so. With it, its sizes must agree with the
// shapes (ConfigError naming both), model_type must be "gpt2" and activation_function one the
// engine computes (gelu_new, gelu_pytorch_tanh, gelu, relu).
//
// Loading in three steps, so a caller that streams the file (the browser) never holds it whole:
//   attnlab::io::SafeTensorsHeader header = attnlab::io::parse_safetensors_header(head, n, file_size);
//   attnlab::io::Gpt2Loader loader(header, &config_json);          // every check without the data
//   for (std::size_t i = 0; i < loader.reads().size(); ++i)        // bytes [begin, end) of the data buffer
//       loader.feed(i, bytes_of(loader.reads()[i]), size);
//   attnlab::DecoderLM gpt = loader.finish();
// or at once: attnlab::DecoderLM gpt = attnlab::io::load_hf_gpt2(file_bytes, &config_json);
// Every refusal is an IoError (a FileError for the file itself: truncated, bad header, a key
// missing or mis-shaped, naming the key and both shapes) or a ConfigError (config.json).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attnlab/io/safetensors.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/model/token/decoder_lm.hpp"
#include "attnlab/nn/parameter.hpp"

namespace attnlab::io {

enum class Gpt2Layout { huggingface, state_dict };
// "huggingface", "state_dict"
const char* gpt2_layout_name(Gpt2Layout layout);

// Whether a parsed header looks like a GPT-2 checkpoint (wte.weight or transformer.wte.weight,
// and no attnlab "format" metadata): the CLI's choice between the two loaders.
bool is_hf_gpt2(const SafeTensorsHeader& header);

class Gpt2Loader {
public:
    // header: the file's, from parse_safetensors_header; config_json: the text of config.json,
    // or null. max_parameter_bytes: refuse a model whose float32 parameters need more (0 = no
    // limit; the WebAssembly build passes what its heap can hold), naming the size and the limit.
    Gpt2Loader(const SafeTensorsHeader& header, const std::string* config_json,
               std::uint64_t max_parameter_bytes = 0);

    const ModelConfig& config() const { return config_; }
    Gpt2Layout layout() const { return layout_; }
    // What was inferred rather than read: "no config.json: n_head = n_embd / 64 = 12 ...".
    const std::vector<std::string>& notes() const { return notes_; }
    // The tensors to read (the mask buffers are not among them), each once, in the order feed()
    // takes them: wte and lm_head first when both are there (they decide the tying), then data order.
    const std::vector<SafeTensorsEntry>& reads() const { return reads_; }
    // The bytes [begin, end) of reads()[i] within the data buffer. IoError for an index out of
    // range, one fed twice or out of order, or a size other than end - begin.
    void feed(std::size_t i, const std::uint8_t* data, std::size_t size);
    // Whether the head is tied to wte (known once wte and lm_head were fed, or at once without lm_head).
    std::optional<bool> tied() const;
    // The model, once every read was fed (IoError naming the first one that was not). The loader
    // is spent afterwards.
    DecoderLM finish();

private:
    struct Route;
    void build_model(bool tie);
    void scatter(const SafeTensorsEntry& e, const float* values);
    // The parameter e is copied into unchanged, or null when it is rearranged (Conv1D, q|k|v).
    ParameterView* direct_target(const SafeTensorsEntry& e);

    ModelConfig config_;
    Gpt2Layout layout_ = Gpt2Layout::huggingface;
    std::string prefix_;
    std::vector<std::string> notes_;
    std::vector<SafeTensorsEntry> reads_;
    std::size_t next_ = 0;
    bool has_lm_head_ = false;
    std::optional<bool> tied_;
    std::optional<bool> config_ties_;  // config.json's tie_word_embeddings, when it says
    std::vector<float> wte_;           // (V, C) held until the tying is known
    std::optional<DecoderLM> model_;
    std::vector<ParameterView> params_;  // model_'s, once it is built
};

// The whole file in memory: header, loader, every tensor fed.
DecoderLM load_hf_gpt2(const std::vector<std::uint8_t>& bytes, const std::string* config_json,
                       std::vector<std::string>* notes = nullptr);

// Why GPT-2 cannot express a model of this config (each names the setting and its value), or
// nothing when it can: a transformer decoder with learned positions, pre-LN blocks, biases,
// full causal softmax attention scaled by 1/sqrt(D) with as many key/value heads as heads, and
// GELU (either form) or ReLU.
std::vector<std::string> hf_gpt2_blockers(const ModelConfig& config);

struct HfGpt2Export {
    std::vector<std::uint8_t> safetensors;  // model.safetensors, the huggingface layout, F32
    std::string config_json;                // config.json of GPT2LMHeadModel
};
// ConfigError listing hf_gpt2_blockers() when there are any.
HfGpt2Export export_hf_gpt2(const DecoderLM& model);

}  // namespace attnlab::io
