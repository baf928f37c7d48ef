// attnlab/train/schedule.hpp: the learning rate as a function of the step number.
//
// What it is for: linear warm-up followed by cosine decay (the schedule of GPT-2/3 and nanoGPT),
// or a constant rate, queried once per step and passed to Optimizer::step. Pure functions of the
// step: no state, so evaluation, resumption and plotting the curve in the browser all agree.
// Not for: adaptive schedules that react to the loss (reduce-on-plateau).
//
//   attnlab::WarmupCosineSchedule schedule(/*max_lr=*/3e-3f, /*min_lr=*/3e-4f,
//                                          /*warmup_steps=*/100, /*total_steps=*/2000);
//   for (std::size_t step = 0; step < 2000; ++step) {
//       optimizer.step(params, grads, schedule.lr_at(step));   // step counts from 0
//   }
//
// Warm-up convention (torch LambdaLR with lambda = min(1, (step + 1) / warmup)): step s < warmup
// gets max_lr * (s + 1) / warmup, so the first step already uses max_lr / warmup rather than 0
// (a zero rate would waste the step) and step warmup - 1 reaches max_lr. Cosine decay then runs
// over steps [warmup, total): lr = min_lr + (max_lr - min_lr) * (1 + cos(pi * progress)) / 2
// with progress = (s - warmup) / (total - warmup), starting at max_lr; steps >= total get min_lr.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace attnlab {

class Schedule {
public:
    virtual ~Schedule() = default;
    // The learning rate for 0-based step `step`.
    virtual float lr_at(std::size_t step) const = 0;
    virtual std::string name() const = 0;
};

// lr * min(1, (step + 1) / warmup_steps); warmup_steps = 0 means no warm-up.
class ConstantSchedule final : public Schedule {
public:
    // Throws ConfigError unless lr is finite and >= 0.
    explicit ConstantSchedule(float lr, std::size_t warmup_steps = 0);
    float lr_at(std::size_t step) const override;
    std::string name() const override { return "constant"; }

private:
    float lr_;
    std::size_t warmup_;
};

class WarmupCosineSchedule final : public Schedule {
public:
    // Throws ConfigError naming the values unless 0 <= min_lr <= max_lr (finite), total_steps > 0
    // and warmup_steps <= total_steps.
    WarmupCosineSchedule(float max_lr, float min_lr, std::size_t warmup_steps, std::size_t total_steps);
    float lr_at(std::size_t step) const override;
    std::string name() const override { return "cosine"; }

private:
    float max_lr_, min_lr_;
    std::size_t warmup_, total_;
};

struct ScheduleOptions {
    float lr = 1e-3f;              // the peak (constant) learning rate
    float min_lr = 0.0f;           // cosine: the final rate
    std::size_t warmup_steps = 0;  // both
    std::size_t total_steps = 1;   // cosine: where the decay ends
};

// "constant" or "cosine"; anything else throws ConfigError listing the valid names.
std::unique_ptr<Schedule> make_schedule(const std::string& name, const ScheduleOptions& options);

}  // namespace attnlab
