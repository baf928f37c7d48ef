// tests/support/model_gradcheck.hpp: whole-model gradient checks on sampled coordinates.
//
// What it is for: checking a model's backward against central differences without perturbing
// every one of its thousands of parameters. Every parameter tensor gets at least `per_tensor`
// checked coordinates, the rest of the budget goes to random coordinates anywhere (~50 in total
// keeps a whole-model check fast). Built on testutil::check_gradient (gradcheck.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "attnlab/core/random.hpp"
#include "attnlab/nn/parameter.hpp"
#include "support/gradcheck.hpp"

namespace attnlab::testutil {

// Nudges every parameter so LayerNorm gains, biases and CLS vectors are not at their symmetric
// initial values (where some gradients vanish and a wrong backward could pass).
inline void perturb(const std::vector<ParameterView>& params, std::uint64_t seed) {
    for (const auto& p : params) {
        Rng r(seed + p.size());
        for (std::size_t i = 0; i < p.size(); ++i) p.data[i] += 0.1f * r.normal();
    }
}

// A copy of every gradient tensor's values (a model's gradients()), to compare after the next step.
inline std::vector<std::vector<float>> copy_values(const std::vector<ParameterView>& views) {
    std::vector<std::vector<float>> out;
    for (const auto& v : views) out.emplace_back(v.data, v.data + v.size());
    return out;
}

// Every value of actual within rel·max(1, |expected|) of expected (two paths that sum in another
// order), and, when nonzero_above > 0, some |expected| above it (the comparison is not between zeros).
inline ::testing::AssertionResult values_near(const std::vector<ParameterView>& actual,
                                              const std::vector<std::vector<float>>& expected, float rel,
                                              float nonzero_above = 0.0f) {
    if (actual.size() != expected.size()) {
        return ::testing::AssertionFailure() << actual.size() << " tensors against " << expected.size();
    }
    float largest = 0.0f;
    for (std::size_t i = 0; i < actual.size(); ++i) {
        if (actual[i].size() != expected[i].size()) return ::testing::AssertionFailure() << actual[i].name << ": sizes differ";
        for (std::size_t j = 0; j < expected[i].size(); ++j) {
            const float a = actual[i].data[j], e = expected[i][j];
            largest = std::max(largest, std::abs(e));
            if (!(std::abs(a - e) <= rel * std::max(1.0f, std::abs(e)))) {
                return ::testing::AssertionFailure() << actual[i].name << "[" << j << "] = " << a << ", expected " << e;
            }
        }
    }
    if (largest <= nonzero_above) return ::testing::AssertionFailure() << "every expected value is within " << nonzero_above << " of 0";
    return ::testing::AssertionSuccess();
}

// params and grads: same names and order (a model's parameters() and gradients()).
inline ::testing::AssertionResult check_model_gradient(const std::string& what, const std::function<double()>& loss,
                                                       const std::vector<ParameterView>& params,
                                                       const std::vector<ParameterView>& grads,
                                                       const GradCheckOptions& tol, std::size_t budget = 50,
                                                       std::size_t per_tensor = 1) {
    if (params.size() != grads.size()) {
        return ::testing::AssertionFailure() << "parameter/gradient lists differ: " << params.size() << " vs "
                                             << grads.size();
    }
    Rng rng(12345);
    std::vector<std::pair<std::size_t, std::size_t>> picks;
    std::size_t total = 0;
    for (std::size_t i = 0; i < params.size(); ++i) {
        total += params[i].size();
        for (std::size_t k = 0; k < per_tensor; ++k) {
            picks.emplace_back(i, rng.below(static_cast<std::uint32_t>(params[i].size())));
        }
    }
    while (picks.size() < budget) {
        std::size_t flat = rng.below(static_cast<std::uint32_t>(total));
        std::size_t i = 0;
        while (flat >= params[i].size()) flat -= params[i++].size();
        picks.emplace_back(i, flat);
    }
    for (const auto& [i, j] : picks) {
        auto r = check_gradient(what + " d" + params[i].name + "[" + std::to_string(j) + "]", loss,
                                params[i].data + j, grads[i].data + j, 1, tol);
        if (!r) return r;
    }
    return ::testing::AssertionSuccess();
}

}  // namespace attnlab::testutil
