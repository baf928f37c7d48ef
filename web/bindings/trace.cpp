#include "trace.hpp"

#include <string>
#include <vector>

#include <emscripten/bind.h>

#include "attnlab/core/error.hpp"
#include "convert.hpp"

namespace attnlab::web {

using emscripten::val;

namespace {
std::string recorded_list(const TraceRecorder& recorder) {
    std::string out;
    for (Stage s : recorder.stages()) out += (out.empty() ? "" : ", ") + std::string(stage_name(s));
    return out.empty() ? "none" : out;
}
}  // namespace

Stage TraceBinding::recorded_stage(const val& name, const char* where) const {
    if (!name.isString()) fail<ConfigError>(where, ": the stage name must be a string");
    const std::string text = name.as<std::string>();
    const Stage stage = stage_from_name(text);  // ConfigError listing the valid names
    if (recorder_->num_batches(stage) == 0) {
        fail<ConfigError>(where, ": stage '", text, "' was not recorded in this trace (recorded: ",
                          recorded_list(*recorder_), ")");
    }
    return stage;
}

std::tuple<Stage, std::size_t, std::ptrdiff_t> TraceBinding::entry_at(const val& name, const val* head, const val* batch,
                                                                     const char* where) const {
    const Stage stage = recorded_stage(name, where);
    const bool per_head = stage_is_per_head(stage);
    const std::ptrdiff_t h = head ? index_from_js(*head, where, "head") : (per_head ? 0 : -1);
    const std::size_t b = batch ? size_from_js(*batch, where, "batch") : 0;
    const std::size_t heads = recorder_->num_heads(stage), batches = recorder_->num_batches(stage);
    if (per_head && (h < 0 || static_cast<std::size_t>(h) >= heads)) {
        fail<ConfigError>(where, ": head ", h, " is out of range for stage '", stage_name(stage), "' (0..", heads - 1, ")");
    }
    if (!per_head && h != -1) {
        fail<ConfigError>(where, ": stage '", stage_name(stage), "' spans the whole width and has no heads; pass -1 or omit head, got ", h);
    }
    if (b >= batches) {
        fail<ConfigError>(where, ": batch ", b, " is out of range for stage '", stage_name(stage), "' (0..", batches - 1, ")");
    }
    return {stage, b, h};
}

val TraceBinding::stage_at(const val& name, const val* head, const val* batch) const {
    const auto [stage, b, h] = entry_at(name, head, batch, "Trace.stage");
    return tensor_to_js(recorder_->get(stage, b, h));
}

val TraceBinding::flushed_cells(val name) const {
    return guarded("Trace.flushedCells", [&] { return flushed_at(name, nullptr, nullptr); }, name);
}
val TraceBinding::flushed_cells(val name, val head) const {
    return guarded("Trace.flushedCells", [&] { return flushed_at(name, &head, nullptr); }, name, head);
}
val TraceBinding::flushed_cells(val name, val head, val batch) const {
    return guarded("Trace.flushedCells", [&] { return flushed_at(name, &head, &batch); }, name, head, batch);
}

val TraceBinding::flushed_at(const val& name, const val* head, const val* batch) const {
    const auto [stage, b, h] = entry_at(name, head, batch, "Trace.flushedCells");
    const FlushedCells& cells = recorder_->flushed_cells(stage, b, h);
    std::vector<std::int32_t> out(cells.begin(), cells.end());
    return int32_array_to_js(out.data(), out.size());
}

val TraceBinding::stage_names() const {
    return guarded("Trace.stageNames", [&] {
        std::vector<std::string> names;
        for (Stage s : recorder_->stages()) names.emplace_back(stage_name(s));
        return strings_to_js(names);
    });
}

val TraceBinding::stage(val name) const {
    return guarded("Trace.stage", [&] { return stage_at(name, nullptr, nullptr); }, name);
}
val TraceBinding::stage(val name, val head) const {
    return guarded("Trace.stage", [&] { return stage_at(name, &head, nullptr); }, name, head);
}
val TraceBinding::stage(val name, val head, val batch) const {
    return guarded("Trace.stage", [&] { return stage_at(name, &head, &batch); }, name, head, batch);
}

val TraceBinding::num_heads(val name) const {
    return guarded("Trace.numHeads", [&] { return val(recorder_->num_heads(recorded_stage(name, "Trace.numHeads"))); }, name);
}
val TraceBinding::num_batches(val name) const {
    return guarded("Trace.numBatches", [&] { return val(recorder_->num_batches(recorded_stage(name, "Trace.numBatches"))); }, name);
}

val TraceBinding::numerics() const {
    return guarded("Trace.numerics", [&] {
        val out = val::object();
        for (const StageNumerics& n : recorder_->numerics()) {
            val entry = val::object();
            entry.set("count", static_cast<double>(n.count));
            entry.set("maxAbs", n.max_abs);
            entry.set("posInf", static_cast<double>(n.pos_inf));
            entry.set("negInf", static_cast<double>(n.neg_inf));
            entry.set("nan", static_cast<double>(n.nan));
            entry.set("flushed", static_cast<double>(n.flushed));
            out.set(std::string(stage_name(n.stage)), entry);
        }
        return out;
    });
}

EMSCRIPTEN_BINDINGS(attnlab_trace) {
    using emscripten::select_overload;
    emscripten::class_<TraceBinding>("Trace")
        .function("stageNames", &TraceBinding::stage_names)
        .function("stage", select_overload<val(val) const>(&TraceBinding::stage))
        .function("stage", select_overload<val(val, val) const>(&TraceBinding::stage))
        .function("stage", select_overload<val(val, val, val) const>(&TraceBinding::stage))
        .function("numHeads", &TraceBinding::num_heads)
        .function("numBatches", &TraceBinding::num_batches)
        .function("numerics", &TraceBinding::numerics)
        .function("flushedCells", select_overload<val(val) const>(&TraceBinding::flushed_cells))
        .function("flushedCells", select_overload<val(val, val) const>(&TraceBinding::flushed_cells))
        .function("flushedCells", select_overload<val(val, val, val) const>(&TraceBinding::flushed_cells));
}

}  // namespace attnlab::web
