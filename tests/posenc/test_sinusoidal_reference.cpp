// The sinusoidal table against the fixture computed by tests/reference/make_fixtures.py.
#include <gtest/gtest.h>

#include "attnlab/posenc/sinusoidal.hpp"
#include "support/fixtures.hpp"

namespace attnlab {
namespace {

TEST(SinusoidalReference, EvenAndOddWidthsMatchPython) {
    const test::Fixture fx = test::load_fixture("sinusoidal_pe");
    const Tensor2 pe = fx.tensor<2>("pe");
    const Tensor2 pe_odd = fx.tensor<2>("pe_odd");
    EXPECT_TRUE(test::all_close(sinusoidal_table(pe.shape(0), pe.shape(1)), pe, 1e-6));
    EXPECT_TRUE(test::all_close(sinusoidal_table(pe_odd.shape(0), pe_odd.shape(1)), pe_odd, 1e-6));
}

}  // namespace
}  // namespace attnlab
