// tests/support/gradcheck.hpp: the central-difference gradient checker every backward test uses.
//
// What it is for: checking an analytic gradient dL/dp (from a *_backward) against the numeric
// (L(p + h) - L(p - h)) / 2h, one parameter at a time. Not for: second derivatives, or
// comparing tensors with golden files (see the fixture helpers for that).
//
// How to use it: write the loss as a closure that reruns the forward on the *current* values of
// the parameter array and reduces the output to a double, usually Σ out ⊙ w with fixed random
// weights w (then the upstream gradient dout is w). Run the backward once with dout = w to get
// the analytic gradient, then:
//
//   std::vector<float> x = ..., w = ..., dx(n);                   // x: the parameter, (R, N)
//   auto loss = [&] { forward(x, y); return attnlab::testutil::dot(y, w); };
//   backward(x, /*dout=*/w, dx);
//   EXPECT_TRUE(attnlab::testutil::check_gradient("gelu dx", loss, x.data(), dx.data(), x.size()));
//
// Each parameter is perturbed in place and restored bit-exactly before the next one, so other
// closures sharing the array see it unchanged afterwards. The step actually applied is
// float(p + h) - float(p - h), not 2h, so float rounding of the parameter does not bias the
// derivative. An index passes when |analytic - numeric| <= atol + rtol · |numeric|
// (numpy.allclose); a failure message names the first bad index and the worst one.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace attnlab {
namespace testutil {

// Step and tolerances. The defaults suit float forwards whose loss is O(1) per element on
// inputs of magnitude O(1): h trades truncation error O(h²) against float cancellation
// O(eps / h). Ops with kinks (ReLU) need inputs away from the kink, not a smaller h.
struct GradCheckOptions {
    double h = 1e-2;     // perturbation of each parameter
    double atol = 1e-3;  // absolute tolerance
    double rtol = 1e-2;  // relative tolerance, times |numeric|
};

struct GradCheckResult {
    std::size_t checked = 0;              // parameters compared
    std::size_t num_bad = 0;              // parameters over tolerance
    std::ptrdiff_t first_bad_index = -1;  // -1 when all passed
    std::size_t worst_index = 0;          // index of the largest |analytic - numeric|
    double max_abs_error = 0.0;           // max |analytic - numeric|
    double max_rel_error = 0.0;           // max |analytic - numeric| / max(|numeric|, tiny)
    std::vector<double> numeric;          // the numeric gradient, one per parameter

    bool ok() const { return num_bad == 0; }
};

// Numeric gradient of loss() with respect to param[0..n), compared with analytic[0..n).
inline GradCheckResult compare_gradient(const std::function<double()>& loss, float* param, const float* analytic,
                                        std::size_t n, const GradCheckOptions& options = {}) {
    GradCheckResult result;
    result.checked = n;
    result.numeric.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const float saved = param[i];
        const float plus = static_cast<float>(double(saved) + options.h);
        const float minus = static_cast<float>(double(saved) - options.h);
        param[i] = plus;
        const double loss_plus = loss();
        param[i] = minus;
        const double loss_minus = loss();
        param[i] = saved;
        const double numeric = (loss_plus - loss_minus) / (double(plus) - double(minus));
        result.numeric[i] = numeric;

        const double abs_error = std::fabs(double(analytic[i]) - numeric);
        const double rel_error = abs_error / std::max(std::fabs(numeric), 1e-12);
        if (abs_error > result.max_abs_error || i == 0) {
            result.max_abs_error = abs_error;
            result.worst_index = i;
        }
        result.max_rel_error = std::max(result.max_rel_error, rel_error);
        // Written so that NaN on either side counts as bad.
        if (!(abs_error <= options.atol + options.rtol * std::fabs(numeric))) {
            if (result.first_bad_index < 0) result.first_bad_index = static_cast<std::ptrdiff_t>(i);
            ++result.num_bad;
        }
    }
    return result;
}

// GoogleTest assertion: EXPECT_TRUE(check_gradient("layer_norm dgamma", loss, g, dg, n)).
// The failure message names what was checked, the first bad index with both values, the
// worst index, and the tolerances used.
inline ::testing::AssertionResult check_gradient(const std::string& what, const std::function<double()>& loss,
                                                 float* param, const float* analytic, std::size_t n,
                                                 const GradCheckOptions& options = {}) {
    const GradCheckResult r = compare_gradient(loss, param, analytic, n, options);
    if (r.ok()) return ::testing::AssertionSuccess();
    const auto first = static_cast<std::size_t>(r.first_bad_index);
    std::ostringstream out;
    out << what << ": " << r.num_bad << " of " << r.checked << " gradients off; first bad index " << first
        << " (analytic " << analytic[first] << ", numeric " << r.numeric[first] << "); worst index " << r.worst_index
        << " (analytic " << analytic[r.worst_index] << ", numeric " << r.numeric[r.worst_index] << "); max abs error "
        << r.max_abs_error << ", max rel error " << r.max_rel_error << " (h " << options.h << ", atol " << options.atol
        << ", rtol " << options.rtol << ")";
    return ::testing::AssertionFailure() << out.str();
}

// Σ a_i · w_i in double: the usual way to reduce a forward output to a scalar loss, so that
// the upstream gradient is w.
inline double dot(const float* a, const float* w, std::size_t n) {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) sum += double(a[i]) * double(w[i]);
    return sum;
}

template <class A, class B>
double dot(const A& a, const B& w) {
    if (a.size() != w.size()) throw std::invalid_argument("testutil::dot: sizes differ");
    return dot(a.data(), w.data(), a.size());
}

}  // namespace testutil
}  // namespace attnlab
