// attnlab/model/choices.hpp: the choices of a model as a whole (what it is, what computes its
// hidden states, where its norms sit, how an encoder pools, a crossmodal model's loss), one line
// per value (core/choice.hpp).
//
// What it is for: the enums ModelConfig's field table (model/config_fields.hpp) holds beside the
// layer-level choices declared with their layers (attention/normalizer.hpp, attention/variant.hpp,
// core/numeric_format.hpp, posenc/positional_encoding.hpp, nn/feed_forward.hpp).
// Not for: the fields themselves (model/config_fields.hpp).
//
//   attnlab::Architecture a = attnlab::choice_from_name<attnlab::Architecture>("swin");
//   attnlab::choice_name(attnlab::NormPlacement::post);   // "post"
#pragma once

#include <string_view>

#include "attnlab/core/choice.hpp"

namespace attnlab {

// forecaster: reads a window of real values (B, T, F) with their timestamps and regresses the next
// `horizon` values of feature 0 (model/series/series_models.hpp, article §7.2).
#define ATTNLAB_MODEL_KIND_VALUES(X)                                                   \
    X(encoder, "a classifier, with padding masks")                                    \
    X(decoder, "a causal language model")                                             \
    X(forecaster, "a regression of the next horizon values of a series (section 7.2)")
ATTNLAB_CHOICE(ModelKind, "kind", ATTNLAB_MODEL_KIND_VALUES, "what the model predicts")

// What computes the hidden states between the embedding and the head: Transformer blocks, or
// LSTM layers (model/lstm/lstm_models.hpp), the recurrent baseline the article compares with (§1.1);
// or, for images (model/vision/image_classifier.hpp, article §7.1), a ViT (patches -> Transformer
// blocks over all patches) or a Swin Transformer (blocks over M x M windows, shifted on
// alternate blocks, patch merging between stages); or, for paired image/text tasks
// (model/crossmodal/crossmodal.hpp, article §7.3), a text encoder and a ViT image encoder joined by
// cross-attention from the words to the patches.
#define ATTNLAB_ARCHITECTURE_VALUES(X)                                                                              \
    X(transformer, "Transformer blocks over the token embeddings")                                                 \
    X(lstm, "embedding -> num_layers LSTM layers of width d_model -> head (ignores heads, kv-heads, ff, "          \
            "activation, pe, norm, scale, and refuses dropout, window, global-tokens, no-causal, cls pooling, "    \
            "normalizer other than softmax, tie-qk, variant other than full, precision other than fp32)")         \
    X(vit, "Transformer blocks over every patch of an image")                                        \
    X(swin, "blocks over shifted windows of an image's patches, patch merging between stages")                   \
    X(crossmodal, "a text encoder and a ViT image encoder joined by cross-attention, for paired image/text "     \
                  "tasks (caption_match)")
ATTNLAB_CHOICE(Architecture, "architecture", ATTNLAB_ARCHITECTURE_VALUES, "what computes the hidden states")

// The loss of a crossmodal model: match (cross-entropy of its match/no-match head), or clip (the
// same plus a CLIP-style symmetric InfoNCE over the matched pairs' pooled embeddings,
// nn/contrastive_loss.hpp).
#define ATTNLAB_PAIR_LOSS_VALUES(X)                                                        \
    X(match, "cross-entropy of the match head")                                           \
    X(clip, "plus a symmetric InfoNCE over the matched pairs' pooled, normalised embeddings")
ATTNLAB_CHOICE(PairLoss, "loss", ATTNLAB_PAIR_LOSS_VALUES, "the training loss of a crossmodal model")

// Where the LayerNorms sit in a block (Xiong et al. 2020, "On Layer Normalization in the
// Transformer Architecture"): pre trains without warm-up; post is the original Transformer's.
#define ATTNLAB_NORM_PLACEMENT_VALUES(X)                               \
    X(pre, "x + f(LN(x)), with a final ln_f (GPT-2)")                  \
    X(post, "LN(x + f(x)) (the original Transformer, BERT)")
ATTNLAB_CHOICE(NormPlacement, "norm", ATTNLAB_NORM_PLACEMENT_VALUES, "where the LayerNorms sit in a block")

// How an encoder turns (B, T, C) into one vector per sequence.
#define ATTNLAB_POOLING_VALUES(X)                          \
    X(mean, "the mean over the non-padding positions")     \
    X(cls, "the row of a CLS token")
ATTNLAB_CHOICE(Pooling, "pooling", ATTNLAB_POOLING_VALUES, "how an encoder turns (B, T, C) into one vector per sequence")

// Shorthands of choice_name / choice_from_name (ConfigError listing the valid names).
inline std::string_view model_kind_name(ModelKind kind) { return choice_name(kind); }
inline ModelKind model_kind_from_name(std::string_view name) { return choice_from_name<ModelKind>(name); }
inline std::string_view architecture_name(Architecture architecture) { return choice_name(architecture); }
inline Architecture architecture_from_name(std::string_view name) { return choice_from_name<Architecture>(name); }
inline std::string_view norm_placement_name(NormPlacement norm) { return choice_name(norm); }
inline NormPlacement norm_placement_from_name(std::string_view name) { return choice_from_name<NormPlacement>(name); }
inline std::string_view pooling_name(Pooling pooling) { return choice_name(pooling); }
inline Pooling pooling_from_name(std::string_view name) { return choice_from_name<Pooling>(name); }
inline std::string_view pair_loss_name(PairLoss loss) { return choice_name(loss); }
inline PairLoss pair_loss_from_name(std::string_view name) { return choice_from_name<PairLoss>(name); }

}  // namespace attnlab
