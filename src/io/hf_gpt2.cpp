#include "attnlab/io/hf_gpt2.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "attnlab/core/random.hpp"
#include "attnlab/io/checkpoint.hpp"

namespace attnlab::io {

namespace {
constexpr const char* kWhere = "GPT-2 checkpoint";
constexpr std::size_t kGpt2HeadDim = 64;  // n_embd / n_head across gpt2, distilgpt2, -medium, -large, -xl

using Shape = std::vector<std::size_t>;

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
bool starts_with(const std::string& s, const std::string& head) { return s.rfind(head, 0) == 0; }

// The mask buffers older transformers versions save with every attention layer.
bool is_mask_buffer(const std::string& key) { return ends_with(key, ".attn.bias") || ends_with(key, ".attn.masked_bias"); }

// How one Hugging Face tensor becomes engine parameters:
//   copy     same shape, same layout
//   conv1d   a Conv1D weight (in, parts·out): part j, transposed, is target j's (out, in)
//   split    a Conv1D bias (parts·out): part j is target j's (out)
enum class Transform { copy, conv1d, split };

struct Target {
    std::string hf;                   // key without the layout's prefix
    Shape shape;                      // its expected shape
    Transform transform;
    std::vector<std::string> engine;  // the parameters it fills, in part order
};

std::vector<Target> targets_of(const ModelConfig& c, bool with_lm_head) {
    const std::size_t C = c.d_model, F = c.ff_dim, V = c.vocab_size, P = c.max_len;
    std::vector<Target> t;
    t.push_back({"wte.weight", {V, C}, Transform::copy, {"tok_emb.weight"}});
    t.push_back({"wpe.weight", {P, C}, Transform::copy, {"pos_emb.weight"}});
    for (std::size_t l = 0; l < c.num_layers; ++l) {
        const std::string h = "h." + std::to_string(l) + ".", b = "blocks." + std::to_string(l) + ".";
        t.push_back({h + "ln_1.weight", {C}, Transform::copy, {b + "ln1.weight"}});
        t.push_back({h + "ln_1.bias", {C}, Transform::copy, {b + "ln1.bias"}});
        t.push_back({h + "attn.c_attn.weight", {C, 3 * C}, Transform::conv1d,
                     {b + "attn.q_proj.weight", b + "attn.k_proj.weight", b + "attn.v_proj.weight"}});
        t.push_back({h + "attn.c_attn.bias", {3 * C}, Transform::split,
                     {b + "attn.q_proj.bias", b + "attn.k_proj.bias", b + "attn.v_proj.bias"}});
        t.push_back({h + "attn.c_proj.weight", {C, C}, Transform::conv1d, {b + "attn.out_proj.weight"}});
        t.push_back({h + "attn.c_proj.bias", {C}, Transform::copy, {b + "attn.out_proj.bias"}});
        t.push_back({h + "ln_2.weight", {C}, Transform::copy, {b + "ln2.weight"}});
        t.push_back({h + "ln_2.bias", {C}, Transform::copy, {b + "ln2.bias"}});
        t.push_back({h + "mlp.c_fc.weight", {C, F}, Transform::conv1d, {b + "ffn.fc1.weight"}});
        t.push_back({h + "mlp.c_fc.bias", {F}, Transform::copy, {b + "ffn.fc1.bias"}});
        t.push_back({h + "mlp.c_proj.weight", {F, C}, Transform::conv1d, {b + "ffn.fc2.weight"}});
        t.push_back({h + "mlp.c_proj.bias", {C}, Transform::copy, {b + "ffn.fc2.bias"}});
    }
    t.push_back({"ln_f.weight", {C}, Transform::copy, {"ln_f.weight"}});
    t.push_back({"ln_f.bias", {C}, Transform::copy, {"ln_f.bias"}});
    if (with_lm_head) t.push_back({"lm_head.weight", {V, C}, Transform::copy, {"head.weight"}});
    return t;
}

std::size_t numel(const Shape& s) {
    std::size_t n = 1;
    for (std::size_t d : s) n *= d;
    return n;
}

// A size from config.json: a non-negative integer, or ConfigError naming the key.
std::optional<std::size_t> config_size(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_number_integer() || it->get<long long>() < 0) {
        fail<ConfigError>("config.json: \"", key, "\" must be a non-negative integer, got ", it->dump());
    }
    return static_cast<std::size_t>(it->get<unsigned long long>());
}

// A config.json size that the shapes also fix: equal, or ConfigError naming both.
void agree(const nlohmann::json& j, const char* key, std::size_t from_shapes, const char* shape_of) {
    const std::optional<std::size_t> v = config_size(j, key);
    if (v && *v != from_shapes) {
        fail<ConfigError>("config.json: \"", key, "\" is ", *v, " but ", shape_of, " says ", from_shapes);
    }
}

bool config_flag(const nlohmann::json& j, const char* key, bool fallback) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) fail<ConfigError>("config.json: \"", key, "\" must be true or false, got ", it->dump());
    return it->get<bool>();
}

Activation activation_of(const std::string& name) {
    if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::gelu_tanh;
    if (name == "gelu") return Activation::gelu;
    if (name == "relu") return Activation::relu;
    fail<ConfigError>("config.json: unsupported activation_function \"", name,
                      "\" (the engine computes gelu_new, gelu_pytorch_tanh, gelu and relu)");
}

const char* hf_activation_name(Activation a) {
    switch (a) {
        case Activation::gelu_tanh: return "gelu_new";
        case Activation::gelu: return "gelu";
        case Activation::relu: return "relu";
    }
    return "gelu_new";
}

// The first few items of a list for a message, and how many there are in all.
class Listing {
public:
    explicit Listing(const char* separator) : separator_(separator) {}
    void add(const std::string& item) {
        if (count_++ < kShown) text_ += (text_.empty() ? "" : separator_) + item;
    }
    bool empty() const { return count_ == 0; }
    std::string text() const {
        return count_ <= kShown ? text_ : text_ + separator_ + "... (" + std::to_string(count_) + " in all)";
    }

private:
    static constexpr std::size_t kShown = 8;
    std::string separator_, text_;
    std::size_t count_ = 0;
};

std::string gib(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", bytes / double(1ull << 30));
    return text;
}
}  // namespace

const char* gpt2_layout_name(Gpt2Layout layout) {
    return layout == Gpt2Layout::state_dict ? "state_dict" : "huggingface";
}

bool is_hf_gpt2(const SafeTensorsHeader& header) {
    if (header.metadata.count("format") && header.metadata.at("format") == kCheckpointFormat) return false;
    for (const auto& e : header.entries) {
        if (e.name == "wte.weight" || e.name == "transformer.wte.weight") return true;
    }
    return false;
}

Gpt2Loader::Gpt2Loader(const SafeTensorsHeader& header, const std::string* config_json,
                       std::uint64_t max_parameter_bytes) {
    std::map<std::string, const SafeTensorsEntry*> by_name;
    for (const auto& e : header.entries) by_name[e.name] = &e;
    if (by_name.count("transformer.wte.weight")) {
        layout_ = Gpt2Layout::state_dict;
        prefix_ = "transformer.";
    } else if (!by_name.count("wte.weight")) {
        std::string some;
        std::size_t n = 0;
        for (const auto& [name, e] : by_name) {
            if (n++ == 4) break;
            some += (some.empty() ? "" : ", ") + name;
        }
        fail_file(FileProblem::bad_header, kWhere, ": neither wte.weight nor transformer.wte.weight is in the file, so it "
                  "is not a GPT-2 checkpoint (its tensors: ", some.empty() ? "none" : some, n > 4 ? ", ..." : "", ")");
    }
    // The key of a Hugging Face name in this file ("lm_head.weight" has no prefix in either layout).
    const auto key = [&](const std::string& hf) { return hf == "lm_head.weight" ? hf : prefix_ + hf; };
    const auto rank2 = [&](const std::string& hf) -> Shape {
        const auto it = by_name.find(key(hf));
        if (it == by_name.end()) fail_file(FileProblem::mismatch, kWhere, ": missing tensor ", key(hf));
        if (it->second->shape.size() != 2) {
            fail_file(FileProblem::mismatch, kWhere, ": ", key(hf), " must have rank 2, got ",
                      shape_string(it->second->shape));
        }
        return it->second->shape;
    };

    // Sizes from the shapes.
    const Shape wte = rank2("wte.weight"), wpe = rank2("wpe.weight");
    const std::size_t V = wte[0], C = wte[1], P = wpe[0];
    std::size_t L = 0;
    for (const auto& [name, e] : by_name) {
        const std::string h = prefix_ + "h.";
        if (!starts_with(name, h)) continue;
        const std::size_t dot = name.find('.', h.size());
        const std::string index = name.substr(h.size(), dot == std::string::npos ? std::string::npos : dot - h.size());
        if (index.empty() || index.size() > 6 || index.find_first_not_of("0123456789") != std::string::npos) {
            fail_file(FileProblem::mismatch, kWhere, ": unexpected tensor ", name);
        }
        L = std::max(L, static_cast<std::size_t>(std::stoul(index)) + 1);
    }
    if (L == 0) fail_file(FileProblem::mismatch, kWhere, ": no blocks (no tensor ", prefix_, "h.0.ln_1.weight)");
    const std::size_t F = rank2("h.0.mlp.c_fc.weight")[1];
    has_lm_head_ = by_name.count("lm_head.weight") != 0;

    // config.json, when given, and the defaults of GPT2Config otherwise.
    std::size_t heads = 0;
    Activation activation = Activation::gelu_tanh;
    double eps = 1e-5;
    bool scale = true;
    if (config_json) {
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(*config_json);
        } catch (const nlohmann::json::exception& e) {
            fail<ConfigError>("config.json: not valid JSON (", e.what(), ")");
        }
        if (!j.is_object()) fail<ConfigError>("config.json: must be a JSON object, got ", j.type_name());
        if (j.contains("model_type")) {
            const std::string type = j["model_type"].is_string() ? j["model_type"].get<std::string>() : j["model_type"].dump();
            if (type != "gpt2") {
                fail<ConfigError>("config.json: unsupported model_type \"", type, "\" (attnlab reads GPT-2 checkpoints, model_type gpt2)");
            }
        }
        agree(j, "n_embd", C, "wte.weight's width");
        agree(j, "vocab_size", V, "wte.weight's rows");
        agree(j, "n_positions", P, "wpe.weight's rows");
        agree(j, "n_layer", L, "the blocks in the file");
        agree(j, "n_inner", F, "h.0.mlp.c_fc.weight's width");
        if (const auto h = config_size(j, "n_head")) {
            if (*h == 0 || C % *h != 0) {
                fail<ConfigError>("config.json: n_head ", *h, " does not divide n_embd ", C);
            }
            heads = *h;
        }
        if (j.contains("activation_function")) {
            if (!j["activation_function"].is_string()) {
                fail<ConfigError>("config.json: \"activation_function\" must be a string, got ", j["activation_function"].dump());
            }
            activation = activation_of(j["activation_function"].get<std::string>());
        }
        if (j.contains("layer_norm_epsilon") && !j["layer_norm_epsilon"].is_null()) {
            if (!j["layer_norm_epsilon"].is_number()) {
                fail<ConfigError>("config.json: \"layer_norm_epsilon\" must be a number, got ", j["layer_norm_epsilon"].dump());
            }
            eps = j["layer_norm_epsilon"].get<double>();
        }
        scale = config_flag(j, "scale_attn_weights", true);
        if (config_flag(j, "scale_attn_by_inverse_layer_idx", false)) {
            fail<ConfigError>("config.json: scale_attn_by_inverse_layer_idx true is not supported (the engine scales "
                              "every layer's scores by 1/sqrt(head_dim) alone)");
        }
        if (config_flag(j, "add_cross_attention", false)) {
            fail<ConfigError>("config.json: add_cross_attention true is not supported (a GPT-2 decoder here has no cross-attention)");
        }
        if (j.contains("tie_word_embeddings")) config_ties_ = config_flag(j, "tie_word_embeddings", true);
    }
    if (heads == 0) {
        if (C % kGpt2HeadDim != 0) {
            fail<ConfigError>(kWhere, ": without config.json n_head is taken as n_embd / 64, but n_embd ", C,
                              " is not a multiple of 64; give config.json");
        }
        heads = C / kGpt2HeadDim;
        notes_.push_back(std::string(config_json ? "config.json has no n_head" : "no config.json") +
                         ": n_head = n_embd / 64 = " + std::to_string(heads) + " (true for the whole GPT-2 family)");
    }
    if (!config_json) {
        notes_.push_back("the other sizes from the tensor shapes, activation gelu_new, layer_norm_epsilon 1e-05");
    }

    config_.kind = ModelKind::decoder;
    config_.architecture = Architecture::transformer;
    config_.vocab_size = V;
    config_.max_len = P;
    config_.d_model = C;
    config_.num_heads = heads;
    config_.num_kv_heads = 0;
    config_.num_layers = L;
    config_.ff_dim = F;
    config_.activation = activation;
    config_.positional = PositionalKind::learned;
    config_.norm = NormPlacement::pre;
    config_.scale_attention = scale;
    config_.bias = true;
    config_.causal = true;
    config_.dropout = 0.0f;
    config_.layer_norm_eps = static_cast<float>(eps);
    config_.tie_weights = !has_lm_head_;
    try {
        config_.validate();
    } catch (const ConfigError& e) {
        fail<ConfigError>(kWhere, ": ", e.what());
    }

    // Every tensor: there, of the right shape and a float dtype; nothing unexpected.
    const std::vector<Target> targets = targets_of(config_, has_lm_head_);
    std::set<std::string> wanted;
    Listing missing(", "), mismatched("; "), unexpected(", ");
    for (const Target& t : targets) {
        const std::string k = key(t.hf);
        wanted.insert(k);
        const auto it = by_name.find(k);
        if (it == by_name.end()) {
            missing.add(k);
        } else if (it->second->shape != t.shape) {
            mismatched.add(k + " is " + shape_string(it->second->shape) + ", expected " + shape_string(t.shape));
        } else if (it->second->dtype != Dtype::F32 && it->second->dtype != Dtype::F16 && it->second->dtype != Dtype::BF16) {
            mismatched.add(k + " has dtype " + dtype_name(it->second->dtype) + ", expected F32, F16 or BF16");
        }
    }
    for (const auto& [name, e] : by_name) {
        if (!wanted.count(name) && !is_mask_buffer(name)) unexpected.add(name);
    }
    if (!missing.empty()) fail_file(FileProblem::mismatch, kWhere, ": missing tensors: ", missing.text());
    if (!mismatched.empty()) fail_file(FileProblem::mismatch, kWhere, ": mismatched tensors: ", mismatched.text());
    if (!unexpected.empty()) fail_file(FileProblem::mismatch, kWhere, ": unexpected tensors: ", unexpected.text());
    if (config_ties_ && !*config_ties_ && !has_lm_head_) {
        fail_file(FileProblem::mismatch, kWhere, ": config.json unties the head (tie_word_embeddings false) but there "
                  "is no lm_head.weight");
    }

    // Size, before anything of it is allocated.
    const double params = static_cast<double>(config_.parameter_count());
    const double bytes = 4.0 * params;
    if (max_parameter_bytes != 0 && bytes > static_cast<double>(max_parameter_bytes)) {
        fail<ValueError>(kWhere, ": the model has ", static_cast<std::uint64_t>(params), " parameters, ",
                         gib(bytes), " in float32, more than the ", gib(static_cast<double>(max_parameter_bytes)),
                         " this build can hold");
    }

    // The reads: wte and lm_head first when the tying is still open, then data order.
    for (const Target& t : targets) reads_.push_back(*by_name.at(key(t.hf)));
    std::stable_sort(reads_.begin(), reads_.end(), [&](const SafeTensorsEntry& a, const SafeTensorsEntry& b) {
        const auto rank = [&](const SafeTensorsEntry& e) {
            if (!has_lm_head_) return 0;
            return e.name == key("wte.weight") ? 0 : e.name == "lm_head.weight" ? 1 : 2;
        };
        if (rank(a) != rank(b)) return rank(a) < rank(b);
        return a.begin < b.begin;
    });
    if (!has_lm_head_) {
        tied_ = true;
        build_model(true);
    }
}

std::optional<bool> Gpt2Loader::tied() const { return tied_; }

void Gpt2Loader::build_model(bool tie) {
    config_.tie_weights = tie;
    Rng rng = Rng::zeros();  // every parameter is overwritten by feed()
    model_.emplace(config_, rng);
    params_ = model_->parameters();
}

ParameterView* Gpt2Loader::direct_target(const SafeTensorsEntry& e) {
    const std::string hf = e.name == "lm_head.weight" ? e.name : e.name.substr(prefix_.size());
    for (const Target& t : targets_of(config_, true)) {
        if (t.hf != hf || t.transform != Transform::copy) continue;
        for (ParameterView& p : params_) {
            if (p.name == t.engine[0]) return &p;
        }
    }
    return nullptr;
}

// values: the tensor e as float32, in its stored layout.
void Gpt2Loader::scatter(const SafeTensorsEntry& e, const float* values) {
    const std::string hf = e.name == "lm_head.weight" ? e.name : e.name.substr(prefix_.size());
    std::map<std::string, ParameterView> params;
    for (const ParameterView& p : params_) params.emplace(p.name, p);
    for (const Target& t : targets_of(config_, true)) {
        if (t.hf != hf) continue;
        const std::size_t parts = t.engine.size();
        for (std::size_t j = 0; j < parts; ++j) {
            const ParameterView& p = params.at(t.engine[j]);
            if (t.transform == Transform::copy) {
                std::copy_n(values, p.size(), p.data);
            } else if (t.transform == Transform::split) {
                std::copy_n(values + j * p.size(), p.size(), p.data);
            } else {
                // values: (in, parts·out); p: (out, in) = columns [j·out, (j+1)·out) transposed.
                const std::size_t in = t.shape[0], width = t.shape[1], out = width / parts;
                for (std::size_t r = 0; r < out; ++r) {
                    for (std::size_t c = 0; c < in; ++c) p.data[r * in + c] = values[c * width + j * out + r];
                }
            }
        }
        return;
    }
}

void Gpt2Loader::feed(std::size_t i, const std::uint8_t* data, std::size_t size) {
    if (i >= reads_.size()) fail<IoError>(kWhere, ": read ", i, " is out of range (", reads_.size(), " reads)");
    if (i != next_) fail<IoError>(kWhere, ": read ", i, " (", reads_[i].name, ") fed out of order; expected read ", next_);
    const SafeTensorsEntry& e = reads_[i];
    if (size != e.end - e.begin) {
        fail_file(FileProblem::truncated, kWhere, ": ", e.name, " needs ", e.end - e.begin, " bytes, got ", size);
    }
    const std::size_t n = numel(e.shape);
    const bool wte = e.name == prefix_ + "wte.weight";
    if (!tied_) {
        // wte, then lm_head: held and compared before the model exists.
        if (wte) {
            wte_.resize(n);
            convert_to_f32(e.dtype, data, n, wte_.data());
        } else {
            std::vector<float> head(n);
            convert_to_f32(e.dtype, data, n, head.data());
            const bool same = head == wte_;
            if (config_ties_ && *config_ties_ && !same) {
                fail_file(FileProblem::mismatch, kWhere, ": config.json ties the head to wte (tie_word_embeddings true) "
                          "but lm_head.weight differs from wte.weight");
            }
            tied_ = same;
            build_model(same);
            scatter(reads_[0], wte_.data());
            std::vector<float>().swap(wte_);
            if (!same) scatter(e, head.data());
        }
        ++next_;
        return;
    }
    // A tensor the engine stores as it is goes straight into its parameter; Conv1D weights and
    // the packed q|k|v bias go through one float32 copy to be rearranged.
    if (ParameterView* p = direct_target(e)) {
        convert_to_f32(e.dtype, data, n, p->data);
    } else {
        std::vector<float> values(n);
        convert_to_f32(e.dtype, data, n, values.data());
        scatter(e, values.data());
    }
    ++next_;
}

DecoderLM Gpt2Loader::finish() {
    if (next_ < reads_.size()) {
        fail<IoError>(kWhere, ": ", reads_.size() - next_, " tensors were not read, the first ", reads_[next_].name);
    }
    if (!model_) fail<IoError>(kWhere, ": the loader was already finished");
    params_.clear();
    DecoderLM model = std::move(*model_);
    model_.reset();
    return model;
}

DecoderLM load_hf_gpt2(const std::vector<std::uint8_t>& bytes, const std::string* config_json,
                       std::vector<std::string>* notes) {
    const SafeTensorsHeader header = parse_safetensors_header(bytes.data(), bytes.size(), bytes.size());
    Gpt2Loader loader(header, config_json);
    if (notes) *notes = loader.notes();
    for (std::size_t i = 0; i < loader.reads().size(); ++i) {
        const SafeTensorsEntry& e = loader.reads()[i];
        loader.feed(i, bytes.data() + header.data_offset + e.begin, static_cast<std::size_t>(e.end - e.begin));
    }
    return loader.finish();
}

std::vector<std::string> hf_gpt2_blockers(const ModelConfig& c) {
    std::vector<std::string> why;
    const auto add = [&](std::string s) { why.push_back(std::move(s)); };
    if (c.kind != ModelKind::decoder) add("kind " + std::string(model_kind_name(c.kind)) + " (GPT-2 is a decoder)");
    if (c.architecture != Architecture::transformer) {
        add("architecture " + std::string(architecture_name(c.architecture)) + " (GPT-2 is a transformer)");
    }
    if (c.positional != PositionalKind::learned) {
        add("positional " + std::string(positional_name(c.positional)) + " (GPT-2 learns its positions: learned)");
    }
    if (c.norm != NormPlacement::pre) add("norm " + std::string(norm_placement_name(c.norm)) + " (GPT-2 is pre-LN)");
    if (!c.bias) add("bias false (GPT-2's projections have biases)");
    if (!c.causal) add("causal false (GPT-2 masks the future)");
    if (c.kv_heads() != c.num_heads) {
        add("num_kv_heads " + std::to_string(c.num_kv_heads) + " (GPT-2 has one key/value head per head)");
    }
    if (c.attention_scale) add("attention_scale set (GPT-2 scales by 1/sqrt(head_dim) or not at all)");
    if (c.tie_qk) add("tie_qk true (GPT-2 has separate W_Q and W_K)");
    if (c.variant != AttentionVariant::full) add("variant " + std::string(attention_variant_name(c.variant)) + " (GPT-2 attends fully)");
    if (c.normalizer != Normalizer::softmax) {
        add("normalizer " + std::string(normalizer_name(c.normalizer)) + " (GPT-2 normalises with softmax)");
    }
    if (c.attention_window != 0) add("attention_window " + std::to_string(c.attention_window) + " (GPT-2 attends to every earlier token)");
    if (c.global_tokens != 0) add("global_tokens " + std::to_string(c.global_tokens) + " (GPT-2 has no global tokens)");
    return why;
}

HfGpt2Export export_hf_gpt2(const DecoderLM& model) {
    const ModelConfig& c = model.config();
    const std::vector<std::string> why = hf_gpt2_blockers(c);
    if (!why.empty()) {
        std::string list;
        for (const auto& w : why) list += (list.empty() ? "" : "; ") + w;
        fail<ConfigError>("export_hf_gpt2: GPT-2 cannot express this model: ", list);
    }
    std::map<std::string, ParameterView> params;
    for (const ParameterView& p : const_cast<DecoderLM&>(model).parameters()) params.emplace(p.name, p);
    SafeTensors st;
    for (const Target& t : targets_of(c, !c.tie_weights)) {
        const std::size_t parts = t.engine.size();
        if (t.shape.size() == 1) {
            Tensor1 out = Tensor1::from_shape({t.shape[0]});
            for (std::size_t j = 0; j < parts; ++j) {
                const ParameterView& p = params.at(t.engine[j]);
                std::copy_n(p.data, p.size(), out.data() + j * p.size());
            }
            st.put(t.hf, out);
            continue;
        }
        Tensor2 out = Tensor2::from_shape({t.shape[0], t.shape[1]});
        if (t.transform == Transform::copy) {
            const ParameterView& p = params.at(t.engine[0]);
            std::copy_n(p.data, p.size(), out.data());
        } else {
            const std::size_t in = t.shape[0], width = t.shape[1], o = width / parts;
            for (std::size_t j = 0; j < parts; ++j) {
                const ParameterView& p = params.at(t.engine[j]);
                for (std::size_t r = 0; r < o; ++r) {
                    for (std::size_t k = 0; k < in; ++k) out(k, j * o + r) = p.data[r * in + k];
                }
            }
        }
        st.put(t.hf, out);
    }
    st.metadata()["format"] = "pt";
    nlohmann::ordered_json j;
    j["architectures"] = {"GPT2LMHeadModel"};
    j["model_type"] = "gpt2";
    j["vocab_size"] = c.vocab_size;
    j["n_positions"] = c.max_len;
    j["n_ctx"] = c.max_len;
    j["n_embd"] = c.d_model;
    j["n_layer"] = c.num_layers;
    j["n_head"] = c.num_heads;
    j["n_inner"] = c.ff_dim;
    j["activation_function"] = hf_activation_name(c.activation);
    j["layer_norm_epsilon"] = static_cast<double>(c.layer_norm_eps);
    j["scale_attn_weights"] = c.scale_attention;
    j["tie_word_embeddings"] = c.tie_weights;
    j["resid_pdrop"] = 0.0;
    j["embd_pdrop"] = 0.0;
    j["attn_pdrop"] = 0.0;
    return HfGpt2Export{st.serialize(), j.dump(2) + "\n"};
}

}  // namespace attnlab::io
