#include "attnlab/model/attention_stats.hpp"

#include <algorithm>
#include <cmath>

#include "attnlab/core/thread_pool.hpp"

namespace attnlab {

AttentionStatsRecorder::AttentionStatsRecorder(std::size_t num_heads)
    : entropy_sum_(num_heads, 0.0), row_count_(num_heads, 0) {}

namespace {
// w: (n) one row of weights -> -Σ_j w_j ln w_j, the direct way; sets `visible` to whether any
// weight is positive.
double row_entropy_direct(const float* w, std::size_t n, bool& visible) {
    double h = 0.0, total = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
        total += w[j];
        if (w[j] > 0.0f) h -= static_cast<double>(w[j]) * std::log(static_cast<double>(w[j]));
    }
    visible = total != 0.0;
    return h;
}

// w, x: (n) -> the same from the masked scores x the weights are the softmax of: lse - Σ_j w_j x_j, with
// lse = x_k - ln w_k at the largest weight (masked keys have w = 0 and x = -inf: skipped). Four
// independent sums and maxima, so the loop is not one long dependency chain.
double row_entropy_from_scores(const float* w, const float* x, std::size_t n, bool& visible) {
    float wmax[4] = {0.0f, 0.0f, 0.0f, 0.0f}, wx[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    std::size_t j = 0;
    for (; j + 4 <= n; j += 4) {
        for (std::size_t u = 0; u < 4; ++u) {
            const float wj = w[j + u];
            wmax[u] = wj > wmax[u] ? wj : wmax[u];
            wx[u] += wj > 0.0f ? wj * x[j + u] : 0.0f;
        }
    }
    for (; j < n; ++j) {
        wmax[0] = w[j] > wmax[0] ? w[j] : wmax[0];
        wx[0] += w[j] > 0.0f ? w[j] * x[j] : 0.0f;
    }
    const float top = std::max(std::max(wmax[0], wmax[1]), std::max(wmax[2], wmax[3]));
    visible = top > 0.0f;
    if (!visible) return 0.0;
    std::size_t k = 0;
    while (w[k] != top) ++k;
    const double lse = static_cast<double>(x[k]) - std::log(static_cast<double>(top));
    const double sum = (static_cast<double>(wx[0]) + wx[1]) + (static_cast<double>(wx[2]) + wx[3]);
    return std::max(0.0, lse - sum);  // >= 0 exactly; rounding can leave -1e-7
}
}  // namespace

void AttentionStatsRecorder::on_stage(const StageView& view) {
    if (view.stage == Stage::scaled) {
        float m[4] = {0.0f, 0.0f, 0.0f, 0.0f};  // four chains (see row_entropy_from_scores)
        for (std::size_t i = 0; i < view.rows; ++i) {
            const float* row = view.data + i * view.ld;
            std::size_t j = 0;
            for (; j + 4 <= view.cols; j += 4) {
                for (std::size_t u = 0; u < 4; ++u) m[u] = std::max(m[u], std::fabs(row[j + u]));
            }
            for (; j < view.cols; ++j) m[0] = std::max(m[0], std::fabs(row[j]));
        }
        std::lock_guard<std::mutex> lock(mutex_);
        max_abs_ = std::max({max_abs_, m[0], m[1], m[2], m[3]});
        return;
    }
    if (view.head < 0) return;
    // The running thread's slot, if it has one: only that thread touches it.
    const std::size_t index = thread_index();
    ScoreSlot* const slot = index < slots_.size() ? &slots_[index] : nullptr;
    float* const x = slot ? slot_scores_.data() + index * slot_floats_ : nullptr;
    if (view.stage == Stage::masked) {
        if (!slot) return;
        slot->valid = view.rows * view.cols <= slot_floats_;
        if (!slot->valid) return;
        slot->batch = view.batch;
        slot->head = view.head;
        slot->rows = view.rows;
        slot->cols = view.cols;
        for (std::size_t i = 0; i < view.rows; ++i) {
            std::copy(view.data + i * view.ld, view.data + i * view.ld + view.cols, x + i * view.cols);
        }
        return;
    }
    if (view.stage != Stage::weights) return;
    const bool have_scores = slot && slot->valid && slot->batch == view.batch && slot->head == view.head &&
                             slot->rows == view.rows && slot->cols == view.cols;
    double sum = 0.0;
    std::size_t rows = 0;
    for (std::size_t i = 0; i < view.rows; ++i) {
        const float* w = view.data + i * view.ld;
        bool visible = false;
        const double h = have_scores ? row_entropy_from_scores(w, x + i * view.cols, view.cols, visible)
                                     : row_entropy_direct(w, view.cols, visible);
        if (!visible) continue;  // every key masked: the row carries no distribution
        sum += h;
        ++rows;
    }
    if (slot) slot->valid = false;  // one use: the next weights need their own masked tile
    const auto head = static_cast<std::size_t>(view.head);
    std::lock_guard<std::mutex> lock(mutex_);
    if (head >= entropy_sum_.size()) {
        entropy_sum_.resize(head + 1, 0.0);
        row_count_.resize(head + 1, 0);
    }
    entropy_sum_[head] += sum;
    row_count_[head] += rows;
}

float AttentionStatsRecorder::max_abs_score() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return max_abs_;
}

Tensor1 AttentionStatsRecorder::mean_entropy() const {
    std::size_t heads = 0;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        heads = entropy_sum_.size();
    }
    Tensor1 out = Tensor1::from_shape({heads});
    for (std::size_t h = 0; h < heads; ++h) out(h) = mean_entropy(h);
    return out;
}

float AttentionStatsRecorder::mean_entropy(std::size_t head) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (head >= entropy_sum_.size() || row_count_[head] == 0) return 0.0f;
    return static_cast<float>(entropy_sum_[head] / double(row_count_[head]));
}

void AttentionStatsRecorder::reserve_score_slots(std::size_t tile_floats) {
    const std::size_t threads = num_threads();
    if (slots_.size() >= threads && slot_floats_ >= tile_floats) return;
    slot_floats_ = std::max(slot_floats_, tile_floats);
    slots_.assign(std::max(slots_.size(), threads), ScoreSlot{});
    slot_scores_.resize(slots_.size() * slot_floats_);
}

void AttentionStatsRecorder::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (ScoreSlot& slot : slots_) slot.valid = false;  // a tile left by an interrupted forward
    max_abs_ = 0.0f;
    std::fill(entropy_sum_.begin(), entropy_sum_.end(), 0.0);
    std::fill(row_count_.begin(), row_count_.end(), 0);
}

const std::vector<StageObserver*>& AttentionStatsCollector::start(std::size_t num_layers, std::size_t num_heads,
                                                                  std::size_t tile_floats) {
    if (recorders_.size() != num_layers || num_heads_ != num_heads) {
        recorders_.clear();
        observers_.clear();
        for (std::size_t l = 0; l < num_layers; ++l) observers_.push_back(&recorders_.emplace_back(num_heads));
        num_heads_ = num_heads;
    }
    for (AttentionStatsRecorder& r : recorders_) {
        r.clear();
        r.reserve_score_slots(tile_floats);
    }
    return observers_;
}

void AttentionStatsCollector::finish(AttentionStats& out) const {
    const std::size_t layers = recorders_.size(), heads = num_heads_;
    if (out.max_abs_score.size() != layers) out.max_abs_score = Tensor1::from_shape({layers});
    if (out.entropy.shape(0) != layers || out.entropy.shape(1) != heads) out.entropy = Tensor2::from_shape({layers, heads});
    for (std::size_t l = 0; l < layers; ++l) {
        out.max_abs_score(l) = recorders_[l].max_abs_score();
        for (std::size_t h = 0; h < heads; ++h) out.entropy(l, h) = recorders_[l].mean_entropy(h);
    }
}

float AttentionStats::max_abs() const {
    float m = 0.0f;
    for (float v : max_abs_score) m = std::max(m, v);
    return m;
}

}  // namespace attnlab
