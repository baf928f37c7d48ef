// The hooked forward of the interpretability tools (attnlab/interp/run.hpp): without edits it is
// the model's forward; what it records is what the layers computed; an edit of a head's output
// or of the residual stream gives what a direct computation of the edited block gives.
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "attnlab/interp/run.hpp"
#include "interp_models.hpp"

namespace attnlab {
namespace {

Index2 as_batch(const std::vector<std::int32_t>& tokens) {
    Index2 ids = Index2::from_shape({1, tokens.size()});
    std::copy(tokens.begin(), tokens.end(), ids.data());
    return ids;
}

void expect_plain_forward(const DecoderLM& lm) {
    {
        const std::vector<std::int32_t> tokens{1, 5, 2, 5, 1, 7};
        const interp::Run r = interp::run(lm, tokens);
        std::deque<TraceRecorder> recorders;  // a recorder holds a mutex: it never moves
        for (std::size_t l = 0; l < lm.config().num_layers; ++l) recorders.emplace_back(std::vector<Stage>{Stage::concat});
        std::vector<StageObserver*> observers;
        for (auto& rec : recorders) observers.push_back(&rec);
        const Tensor3 logits = lm.forward_observed(as_batch(tokens), observers);
        ASSERT_EQ(r.logits.size(), logits.size());
        for (std::size_t i = 0; i < logits.size(); ++i) ASSERT_EQ(r.logits.data()[i], logits.data()[i]) << i;
        ASSERT_EQ(r.head_outputs.size(), lm.config().num_layers);
        ASSERT_EQ(r.residuals.size(), lm.config().num_layers + 1);
        for (std::size_t l = 0; l < r.head_outputs.size(); ++l) {
            EXPECT_EQ(r.head_outputs[l], recorders[l].get(Stage::concat, 0)) << "layer " << l;
        }
    }
}

TEST(InterpRun, WithoutEditsItIsTheModelsForward) {
    expect_plain_forward(test::tiny_decoder(NormPlacement::pre));
    expect_plain_forward(test::tiny_decoder(NormPlacement::post));
    expect_plain_forward(test::gpt2_fixture());
}

TEST(InterpRun, ReplacingAnActivationByItselfChangesNothing) {
    const DecoderLM lm = test::tiny_decoder();
    const std::vector<std::int32_t> tokens{3, 1, 4, 1, 5, 9, 2, 6};
    const interp::Run clean = interp::run(lm, tokens);
    interp::Edits edits;
    edits.heads.push_back({1, 1, interp::head_slice(clean.head_outputs[1], 1, 8)});
    Tensor1 row = Tensor1::from_shape({16});
    std::copy_n(clean.residuals[1].data() + 3 * 16, 16, row.data());
    edits.residuals.push_back({1, 3, row});
    EXPECT_EQ(interp::run(lm, tokens, edits).logits, clean.logits);
}

// Block 0 of a pre-LN model recomputed by hand from its layers, head `head` of its attention
// output zeroed: y = h + ffn(ln2(h)), h = x + z'·W_Oᵀ + b_O.
TEST(InterpRun, AZeroedHeadIsTheBlockWithoutThatHeadsColumns) {
    const DecoderLM lm = test::tiny_decoder();
    const std::vector<std::int32_t> tokens{2, 7, 1, 8, 2, 8};
    const std::size_t t = tokens.size(), c = 16, d = 8, head = 1;
    const interp::Run clean = interp::run(lm, tokens);
    interp::Edits edits;
    edits.heads.push_back({0, head, xt::zeros<float>({t, d})});
    const interp::Run ablated = interp::run(lm, tokens, edits);
    const TransformerBlock& block = lm.trunk.blocks[0];
    Tensor3 h = Tensor3::from_shape({1, t, c});
    for (std::size_t i = 0; i < t; ++i) {
        for (std::size_t o = 0; o < c; ++o) {
            double s = block.attn.out_proj.bias(o);
            for (std::size_t k = 0; k < c; ++k) {
                if (k / d == head) continue;
                s += double(block.attn.out_proj.weight(o, k)) * clean.head_outputs[0](i, k);
            }
            h(0, i, o) = static_cast<float>(clean.residuals[0](i, o) + s);
        }
    }
    const Tensor3 f = block.ffn.forward(block.ln2.forward(h));
    for (std::size_t i = 0; i < t; ++i)
        for (std::size_t o = 0; o < c; ++o) EXPECT_NEAR(ablated.residuals[1](i, o), h(0, i, o) + f(0, i, o), 1e-5);
    // the head's recorded output is the edit
    for (std::size_t i = 0; i < t; ++i)
        for (std::size_t k = head * d; k < (head + 1) * d; ++k) EXPECT_EQ(ablated.head_outputs[0](i, k), 0.0f);
}

TEST(InterpRun, EditsOutOfRangeAreRefusedByName) {
    const DecoderLM lm = test::tiny_decoder();
    const std::vector<std::int32_t> tokens{1, 2, 3};
    interp::Edits bad_head;
    bad_head.heads.push_back({0, 2, xt::zeros<float>({3, 8})});
    EXPECT_THROW(interp::run(lm, tokens, bad_head), ValueError);
    interp::Edits bad_layer;
    bad_layer.heads.push_back({2, 0, xt::zeros<float>({3, 8})});
    try {
        interp::run(lm, tokens, bad_layer);
        FAIL() << "layer 2 accepted";
    } catch (const ValueError& e) {
        EXPECT_NE(std::string(e.what()).find("layer 2 out of range: layers are 0..1"), std::string::npos) << e.what();
    }
    interp::Edits bad_shape;
    bad_shape.heads.push_back({0, 0, xt::zeros<float>({2, 8})});
    EXPECT_THROW(interp::run(lm, tokens, bad_shape), ShapeError);
    interp::Edits bad_position;
    bad_position.residuals.push_back({0, 3, xt::zeros<float>({16})});
    EXPECT_THROW(interp::run(lm, tokens, bad_position), ValueError);
    interp::Edits bad_stream;
    bad_stream.residuals.push_back({3, 0, xt::zeros<float>({16})});
    EXPECT_THROW(interp::run(lm, tokens, bad_stream), ValueError);
}

}  // namespace
}  // namespace attnlab
