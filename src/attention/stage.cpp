#include "attnlab/attention/stage.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

namespace attnlab {
namespace {
constexpr std::array<std::string_view, kNumStages> kStageNames = {
    "x", "q", "k", "v", "q_rot", "k_rot", "phi_q", "phi_k", "scores", "scaled", "masked", "weights", "context", "concat", "output"};
constexpr std::array<Stage, kNumStages> kStages = {
    Stage::x,      Stage::q,      Stage::k,       Stage::v,       Stage::q_rot,  Stage::k_rot, Stage::phi_q, Stage::phi_k, Stage::scores,
    Stage::scaled, Stage::masked, Stage::weights, Stage::context, Stage::concat, Stage::output};
std::size_t index_of(Stage s) { return static_cast<std::size_t>(s); }
}  // namespace

std::string_view stage_name(Stage stage) { return kStageNames.at(index_of(stage)); }

Stage stage_from_name(std::string_view name) {
    for (std::size_t i = 0; i < kNumStages; ++i) {
        if (kStageNames[i] == name) return kStages[i];
    }
    std::string valid;
    for (auto n : kStageNames) valid += (valid.empty() ? "" : ", ") + std::string(n);
    fail<ConfigError>("unknown stage '", name, "'; valid stages are: ", valid);
}

const std::array<Stage, kNumStages>& all_stages() { return kStages; }

bool stage_is_per_head(Stage stage) { return stage != Stage::x && stage != Stage::concat && stage != Stage::output; }

TraceRecorder::TraceRecorder() { wanted_.fill(true); }

TraceRecorder::TraceRecorder(const std::vector<Stage>& only) {
    for (Stage s : only) wanted_[index_of(s)] = true;
}

bool TraceRecorder::wants(Stage stage) const { return wanted_[index_of(stage)]; }

void TraceRecorder::on_stage(const StageView& view) {
    Tensor2 copy = Tensor2::from_shape({view.rows, view.cols});
    for (std::size_t r = 0; r < view.rows; ++r) {
        const float* src = view.data + r * view.ld;
        std::copy(src, src + view.cols, copy.data() + r * view.cols);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    entries_[Key{view.stage, view.batch, view.head}] = std::move(copy);
    flushed_[Key{view.stage, view.batch, view.head}] = view.flushed ? *view.flushed : FlushedCells();
}

std::vector<Stage> TraceRecorder::stages() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Stage> out;
    for (Stage s : kStages) {
        auto it = entries_.lower_bound(Key{s, 0, -1});
        if (it != entries_.end() && std::get<0>(it->first) == s) out.push_back(s);
    }
    return out;
}

bool TraceRecorder::has(Stage stage, std::size_t batch, std::ptrdiff_t head) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.count(Key{stage, batch, head}) != 0;
}

const Tensor2& TraceRecorder::get(Stage stage, std::size_t batch, std::ptrdiff_t head) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(Key{stage, batch, head});
    if (it == entries_.end()) {
        fail<ValueError>("TraceRecorder::get: stage '", stage_name(stage), "' was not recorded for batch ", batch,
                         " and head ", head, stage_is_per_head(stage) ? "" : " (this stage has head -1)");
    }
    return it->second;
}

const FlushedCells& TraceRecorder::flushed_cells(Stage stage, std::size_t batch, std::ptrdiff_t head) const {
    get(stage, batch, head);  // the ValueError for an entry not recorded
    std::lock_guard<std::mutex> lock(mutex_);
    return flushed_.at(Key{stage, batch, head});
}

std::size_t TraceRecorder::num_heads(Stage stage) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::set<std::ptrdiff_t> heads;
    for (const auto& [key, value] : entries_) {
        if (std::get<0>(key) == stage) heads.insert(std::get<2>(key));
    }
    return heads.size();
}

std::size_t TraceRecorder::num_batches(Stage stage) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::set<std::size_t> batches;
    for (const auto& [key, value] : entries_) {
        if (std::get<0>(key) == stage) batches.insert(std::get<1>(key));
    }
    return batches.size();
}

std::vector<StageNumerics> TraceRecorder::numerics() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<StageNumerics> out;
    for (const auto& [key, value] : entries_) {
        const Stage stage = std::get<0>(key);
        if (out.empty() || out.back().stage != stage) out.push_back(StageNumerics{stage});
        StageNumerics& n = out.back();  // entries_ is ordered by stage first
        n.count += value.size();
        n.flushed += flushed_.at(key).size();
        for (const float x : value) {
            if (std::isnan(x)) ++n.nan;
            else if (std::isinf(x)) ++(x > 0.0f ? n.pos_inf : n.neg_inf);
            else n.max_abs = std::max(n.max_abs, std::fabs(x));
        }
    }
    return out;
}

void TraceRecorder::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.clear();
    flushed_.clear();
}

}  // namespace attnlab
