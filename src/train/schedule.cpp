#include "attnlab/train/schedule.hpp"

#include <cmath>

#include "attnlab/core/error.hpp"

namespace attnlab {
namespace {

// min(1, (step + 1) / warmup), the LambdaLR warm-up factor; 1 without warm-up.
double warmup_factor(std::size_t step, std::size_t warmup) {
    if (step >= warmup) return 1.0;
    return static_cast<double>(step + 1) / static_cast<double>(warmup);
}

void require_rate(float lr, const char* where, const char* what) {
    if (!std::isfinite(lr) || lr < 0.0f) fail<ConfigError>(where, ": ", what, " must be finite and >= 0, got ", what, "=", lr);
}

}  // namespace

ConstantSchedule::ConstantSchedule(float lr, std::size_t warmup_steps) : lr_(lr), warmup_(warmup_steps) {
    require_rate(lr, "ConstantSchedule", "lr");
}

float ConstantSchedule::lr_at(std::size_t step) const {
    return static_cast<float>(lr_ * warmup_factor(step, warmup_));
}

WarmupCosineSchedule::WarmupCosineSchedule(float max_lr, float min_lr, std::size_t warmup_steps,
                                           std::size_t total_steps)
    : max_lr_(max_lr), min_lr_(min_lr), warmup_(warmup_steps), total_(total_steps) {
    require_rate(max_lr, "WarmupCosineSchedule", "max_lr");
    require_rate(min_lr, "WarmupCosineSchedule", "min_lr");
    if (min_lr > max_lr) {
        fail<ConfigError>("WarmupCosineSchedule: min_lr must be <= max_lr, got min_lr=", min_lr, ", max_lr=", max_lr);
    }
    if (total_steps == 0 || warmup_steps > total_steps) {
        fail<ConfigError>("WarmupCosineSchedule: need 0 < total_steps and warmup_steps <= total_steps, got warmup_steps=",
                          warmup_steps, ", total_steps=", total_steps);
    }
}

float WarmupCosineSchedule::lr_at(std::size_t step) const {
    if (step >= total_) return min_lr_;
    if (step < warmup_) return static_cast<float>(max_lr_ * warmup_factor(step, warmup_));
    // warmup_ <= step < total_, so the denominator is positive.
    const double progress = static_cast<double>(step - warmup_) / static_cast<double>(total_ - warmup_);
    const double cosine = 0.5 * (1.0 + std::cos(3.141592653589793 * progress));
    return static_cast<float>(min_lr_ + (static_cast<double>(max_lr_) - min_lr_) * cosine);
}

std::unique_ptr<Schedule> make_schedule(const std::string& name, const ScheduleOptions& options) {
    if (name == "constant") return std::make_unique<ConstantSchedule>(options.lr, options.warmup_steps);
    if (name == "cosine") {
        return std::make_unique<WarmupCosineSchedule>(options.lr, options.min_lr, options.warmup_steps,
                                                      options.total_steps);
    }
    fail<ConfigError>("make_schedule: unknown schedule '", name, "'; valid names: constant, cosine");
}

}  // namespace attnlab
