#include "support/fixtures.hpp"

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "attnlab/core/tensor.hpp"

#ifndef ATTNLAB_FIXTURE_DIR
#error "ATTNLAB_FIXTURE_DIR must be defined by tests/CMakeLists.txt"
#endif

namespace attnlab::test {

void Fixture::fail(const std::string& message) const {
    const std::string full = "fixture '" + name_ + "': " + message;
    ADD_FAILURE() << full;
    throw FixtureError(full);
}

std::string Fixture::meta_string(const std::string& key) const {
    auto it = st_.metadata().find(key);
    if (it == st_.metadata().end()) {
        std::string keys;
        for (const auto& kv : st_.metadata()) keys += (keys.empty() ? "" : ", ") + kv.first;
        fail("no metadata key '" + key + "' (keys: " + keys + ")");
    }
    return it->second;
}

long long Fixture::meta_int(const std::string& key) const {
    const std::string s = meta_string(key);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || errno == ERANGE) fail("metadata '" + key + "' = '" + s + "' is not an integer");
    return v;
}

double Fixture::meta_double(const std::string& key) const {
    const std::string s = meta_string(key);
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || errno == ERANGE) fail("metadata '" + key + "' = '" + s + "' is not a number");
    return v;
}

bool Fixture::meta_bool(const std::string& key) const {
    const std::string s = meta_string(key);
    if (s == "1" || s == "true") return true;
    if (s == "0" || s == "false") return false;
    fail("metadata '" + key + "' = '" + s + "' is not a boolean (expected \"1\" or \"0\")");
}

Fixture load_fixture(const std::string& name) {
    const std::string path = std::string(ATTNLAB_FIXTURE_DIR) + "/" + name + ".safetensors";
    try {
        return Fixture(name, io::SafeTensors::read_file(path));
    } catch (const attnlab::IoError& e) {
        const std::string message = "cannot load fixture '" + name + "' (regenerate with "
                                    "/usr/bin/python3 tests/reference/make_fixtures.py): " + e.what();
        ADD_FAILURE() << message;
        throw FixtureError(message);
    }
}

namespace {
std::vector<std::size_t> unravel(std::size_t flat, const std::vector<std::size_t>& shape) {
    std::vector<std::size_t> index(shape.size());
    for (std::size_t d = shape.size(); d-- > 0;) {
        index[d] = shape[d] ? flat % shape[d] : 0;
        flat = shape[d] ? flat / shape[d] : 0;
    }
    return index;
}
}  // namespace

::testing::AssertionResult all_close(const float* actual, const float* expected,
                                     const std::vector<std::size_t>& shape, double atol, double rtol) {
    std::size_t n = 1;
    for (std::size_t e : shape) n *= e;
    double max_diff = 0.0;
    std::size_t max_at = 0, bad = 0, first_bad = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double a = actual[i], e = expected[i];
        const double diff = a == e ? 0.0 : std::abs(a - e);  // equal infinities match
        const bool ok = !std::isnan(diff) && diff <= atol + rtol * std::abs(e);
        // A NaN difference is the worst possible; the first one is reported.
        const bool worse = std::isnan(diff) ? !std::isnan(max_diff) : !std::isnan(max_diff) && diff > max_diff;
        if (worse) {
            max_diff = diff;
            max_at = i;
        }
        if (!ok && bad++ == 0) first_bad = i;
    }
    std::ostringstream out;
    out.precision(9);
    out << "max abs diff " << max_diff << " at " << attnlab::shape_string(unravel(max_at, shape)) << " over "
        << n << " elements of shape " << attnlab::shape_string(shape) << " (atol " << atol;
    if (rtol != 0.0) out << ", rtol " << rtol;
    out << ")";
    if (bad == 0) return ::testing::AssertionSuccess() << out.str();
    out << "; " << bad << " element(s) out of tolerance, first at " << attnlab::shape_string(unravel(first_bad, shape))
        << ": actual " << actual[first_bad] << ", expected " << expected[first_bad];
    return ::testing::AssertionFailure() << out.str();
}

}  // namespace attnlab::test
