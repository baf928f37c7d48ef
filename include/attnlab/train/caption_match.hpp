// attnlab/train/caption_match.hpp: the `caption_match` task — a shapes image and a four-word
// caption that does or does not describe it (article §7.3: modalities meet through
// cross-attention).
//
// What it is for: a paired task that a crossmodal model (model/crossmodal/crossmodal.hpp) learns only by
// relating words to places in the image: the caption names the shape's size, kind, vertical and
// horizontal half, "large circle top left", and the label says whether it matches (1) or not (0).
// Labels are drawn 1 or 0 with probability ½ each; a non-matching caption is the true one with one
// word, chosen uniformly among the four, replaced by another value of its attribute (a hard
// negative: three words still fit). Seeded, the same natively and in WebAssembly. Not for:
// free text, several shapes per image.
//
// Images are drawn as the shapes task draws them (train/shapes.hpp draw_shape): (S, S), kind among
// the first K classes, radius r in [0.20 S, 0.24 S] (small) or [0.29 S, 0.33 S] (large), centre
// (cx, cy) in the chosen halves (left: cx <= S/2 - ½, right: cx >= S/2 + ½; top: cy <= S/2 - ½,
// bottom: cy >= S/2 + ½; y grows downwards) and one pixel from the border. The gaps between the
// ranges make every word decidable from the pixels.
//
// Tokens (T = 4, vocab_size = K + 6): [size, kind, vertical, horizontal] with ids
//   0 .. K-1  the shape classes (square, circle, ...)    K, K+1   small, large
//   K+2, K+3  top, bottom                                   K+4, K+5 left, right
// The `length` option is S (16 <= S <= 64, default 16), `vocab` is K (4 <= K <= 10, default 6).
//
//   auto task = attnlab::make_task("caption_match");            // 16 x 16, 6 shapes
//   attnlab::Rng rng(7);
//   attnlab::Batch batch = task->sample(32, rng);              // pixels (32, 16, 16), tokens (32, 4), labels (32)
//   std::cout << task->decode(&batch.tokens(0, 0), 4) << "\n";  // "large circle top left"
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "attnlab/train/tasks.hpp"

namespace attnlab {

// The caption vocabulary for K shape classes, in token order (K + 6 words).
std::vector<std::string> caption_match_words(std::size_t classes);

// The task with S = image_size and K = classes; ConfigError naming the value outside [16, 64] or
// [4, 10].
std::unique_ptr<Task> make_caption_match_task(std::size_t image_size, std::size_t classes);

}  // namespace attnlab
