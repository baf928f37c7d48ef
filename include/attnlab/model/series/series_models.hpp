// attnlab/model/series/series_models.hpp: the forecaster — a Transformer or an LSTM that reads a window
// of a time series and regresses its next `horizon` values (ModelConfig::kind = forecaster;
// article §7.2: on strongly periodic series an LSTM can be steadier than attention).
//
// What it is for: training both architectures on the `series` task (train/series.hpp) with the
// same Trainer, checkpoints and attention traces as the token models, at comparable parameter
// counts (ModelConfig::parameter_count()), against the seasonal-naive baseline every batch carries.
// Dimension letters: B batch, T context steps, F features per step, F_in = F (+ 2K with pe time,
// K = time_periods.size()), C = d_model, N = horizon.
//   values (B, T, F) [, time (B, >= T)] -> input (B, T, F_in): the values, with pe time followed
//   by sin/cos of each step's timestamp at the periods (posenc/time_encoding.hpp)
//   -> value_proj (Linear F_in -> C, in place of a token embedding) -> x (B, T, C)
//   transformer: + positions (sinusoidal for sinusoidal and time, learned table, rope inside
//                attention, or none) -> num_layers blocks, not causal (the whole context is
//                known) -> ln_f (pre-LN) -> the last step's row (B, C)
//   lstm:        -> num_layers LSTM layers (width C) -> the last step's h (B, C); positions
//                are its order (pe other than time is ignored, as for the token LSTMs)
//   -> head (Linear C -> N) -> forecast (B, N)
// Why the last step feeds the head, for both: an LSTM's last state is the only one that has read
// the whole window; a non-causal Transformer's last row has attended to every step, and it is the
// step next to the forecast, whose position (and time phase) the row carries, so the head reads
// "where the cycle stands now" rather than a mean that blurs the phase. One read-out for both
// keeps the comparison about the trunks. Loss: MSE against the forecast; MAE is reported beside it.
// pe time keeps the sinusoidal table because the timestamp features repeat every lcm of the
// periods: the table still says where in the window a step sits (the trend needs it).
// No generation (there are no tokens: the facade refuses generate), no dropout (refused).
//
// Parameter names (PyTorch state_dict style, in this order; [..] only when configured):
//   value_proj.weight (C, F_in), [value_proj.bias (C)], [pos_emb.weight (max_len, C)],
//   blocks.<i>.{ln1, attn.{q,k,v,out}_proj, ln2, ffn.{fc1,fc2}}.* | lstm.weight_ih_l<k> ...,
//   [ln_f.weight, ln_f.bias], head.weight (N, C), [head.bias (N)]
//
//   attnlab::ModelConfig config; config.kind = attnlab::ModelKind::forecaster;
//   config.num_features = 1; config.horizon = 12; config.positional = attnlab::PositionalKind::time;
//   config.time_periods = {12, 24};
//   attnlab::Rng rng(1);
//   attnlab::Forecaster model(config, rng);
//   model.zero_grad();
//   attnlab::RegressionResult r = model.loss_and_backward(batch.values, batch.time, batch.forecast);
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "attnlab/attention/stage.hpp"
#include "attnlab/core/random.hpp"
#include "attnlab/core/tensor.hpp"
#include "attnlab/model/attention_stats.hpp"
#include "attnlab/model/config.hpp"
#include "attnlab/model/transformer_block.hpp"
#include "attnlab/nn/layer_norm.hpp"
#include "attnlab/nn/linear.hpp"
#include "attnlab/nn/loss.hpp"
#include "attnlab/nn/lstm.hpp"
#include "attnlab/nn/parameter.hpp"
#include "attnlab/posenc/learned.hpp"

namespace attnlab {

class Forecaster;

// Gradients of every parameter, same shapes; backward accumulates into them with +=.
struct ForecasterGrad {
    LinearGrad value_proj;
    Tensor2 pos_emb;  // (max_len, C) learned positions only, else empty
    std::vector<TransformerBlockGrad> blocks;
    LayerNormGrad ln_f;  // pre-LN transformer only
    LstmGrad lstm;       // lstm only
    LinearGrad head;

    ForecasterGrad() = default;
    explicit ForecasterGrad(const Forecaster& model);  // zeros
    void zero();
};

// What backward needs from the last training forward, and the buffers a forward reuses.
struct ForecasterCache {
    bool valid = false;     // set by a training-mode forward
    Tensor3 input;          // (B, T, F_in) value_proj's input: dW = dxᵀ·input
    Tensor3 x;              // (B, T, C) value_proj(input) + positions: the trunk's input
    std::vector<TransformerBlockCache> blocks;
    std::vector<Tensor3> stream;  // (B, T, C) each block's output
    LayerNormCache ln_f;
    Tensor3 normed;         // (B, T, C) after ln_f (pre-LN), else the last block's output
    LstmCache lstm;
    LstmOutput lstm_out;    // output (B, T, C)
    Tensor2 last;           // (B, C) the head's input: the last step's row
    Tensor2 pred, dpred;    // (B, N)
    MseCache mse;
    Tensor2 dlast;          // (B, C)
    Tensor3 dh, dtmp;       // (B, T, C) backward buffers
};

class Forecaster {
public:
    // Validates config (kind forecaster) and initialises the parameters from rng: value_proj and
    // head as torch.nn.Linear, pos_emb N(0, 0.02²), the blocks or the LSTM as their own types do.
    Forecaster(const ModelConfig& config, Rng& rng);

    const ModelConfig& config() const { return config_; }
    void train(bool on = true) { training_ = on; }
    void eval() { training_ = false; }
    bool training() const { return training_; }

    // values: (B, T, F); time: (B, T') with T' >= T timestamps (the context's are the first T),
    // needed with pe time and otherwise ignored (may be empty) -> forecast (B, N). A training-mode
    // forward keeps what backward needs. ShapeError naming the shapes for a wrong F, an empty
    // batch or a short time; ValueError for T beyond a learned table or a bad timestamp.
    Tensor2 forward(const Tensor3& values, const Tensor2& time);
    // An evaluation forward that leaves the model untouched -> (B, N).
    Tensor2 predict(const Tensor3& values, const Tensor2& time) const;
    // Backward of the last training-mode forward: dpred (B, N); gradients accumulate (+=).
    void backward(const Tensor2& dpred);
    // forward + MSE against forecast (B, N) + backward of the MSE (times the loss scale).
    RegressionResult loss_and_backward(const Tensor3& values, const Tensor2& time, const Tensor2& forecast);

    // Attention weights of batch row `batch` in every block of an evaluation forward:
    // (L, H, T, T). ConfigError for an LSTM; ValueError for batch >= B.
    Tensor4 attention_maps(const Tensor3& values, const Tensor2& time, std::size_t batch = 0) const;
    // Every stage of block `layer` in an evaluation forward (batch rows as given). ConfigError
    // for an LSTM, or naming the layer and the count when out of range.
    std::unique_ptr<TraceRecorder> trace_layer(const Tensor3& values, const Tensor2& time, std::size_t layer) const;

    // No attention statistics: recording is a no-op and the statistics stay empty.
    void set_record_attention_stats(bool) {}
    // The loss's gradient is multiplied by this before backward (the Trainer's loss scaling).
    void set_loss_scale(float scale) { loss_scale_ = scale; }
    const AttentionStats& attention_stats() const { return no_stats_; }

    std::vector<ParameterView> parameters();
    std::vector<ParameterView> gradients();
    void zero_grad();

    Linear value_proj;                   // (C, F_in)
    LearnedPositionalEmbedding pos_emb;  // table empty unless a transformer with learned positions
    std::vector<TransformerBlock> blocks;  // transformer
    LayerNorm ln_f;                      // pre-LN transformer only
    Lstm lstm;                           // lstm
    Linear head;                         // (N, C)

private:
    bool is_lstm() const { return config_.architecture == Architecture::lstm; }
    void check_input(const Tensor3& values, const Tensor2& time, const char* where) const;
    AttentionOptions attention_options() const;
    // The forward into cache; observers: one per block (entries may be null) or empty.
    void run(const Tensor3& values, const Tensor2& time, ForecasterCache& cache, bool training,
             const std::vector<StageObserver*>& observers, Tensor2& pred) const;
    void require_attention(const char* where) const;

    ModelConfig config_;
    ForecasterGrad grads_;
    ForecasterCache cache_;
    AttentionStats no_stats_;
    float loss_scale_ = 1.0f;
    bool training_ = true;
};

}  // namespace attnlab
