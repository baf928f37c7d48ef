// attnlab/train/shapes.hpp: the `shapes` task — seeded synthetic grayscale images of drawn
// shapes, one label each (article §7.1: what a ViT or a Swin Transformer learns to see).
//
// What it is for: an image classification task that a tiny ViT or Swin learns in seconds, with
// nothing downloaded and the same images natively and in WebAssembly for the same seed (all
// randomness comes from attnlab::Rng). Not for: colour, several objects per image, detection.
//
// Each image is (S, S), background 0, strokes about 1 pixel wide of intensity up to 1 drawn
// by their distance to the pixel centre (anti-aliased), plus N(0, 0.1²) noise on every pixel.
// The shape's centre is uniform in the middle of the image and its radius r in [S/5, S/3], so
// the same class appears at many positions and sizes. Classes, in order (the `vocab` option
// takes the first K, 4 <= K <= 10, default 6):
//   0 square    outline of the square of half-side r
//   1 circle    outline of the circle of radius r
//   2 triangle  outline of the upward triangle inscribed in the circle of radius r
//   3 plus      a horizontal and a vertical stroke of length 2r through the centre
//   4 cross     the two diagonals of the square of half-side 0.7r
//   5 hbar      one horizontal stroke of length 2r, 2 pixels wide
//   6 vbar      one vertical stroke of length 2r, 2 pixels wide
//   7 diagonal  one stroke from top left to bottom right
//   8 antidiagonal  one stroke from bottom left to top right
//   9 corner    an L: a vertical stroke down and a horizontal one to the right
// The `length` option is S (8 <= S <= 64, default 16; 32 for sharper shapes).
//
//   auto task = attnlab::make_task("shapes");                   // 16 x 16, 6 classes
//   attnlab::Rng rng(7);
//   attnlab::Batch batch = task->sample(32, rng);               // pixels (32, 16, 16), labels (32)
//   std::cout << task->decode(&batch.labels(0), 1) << "\n";      // "circle"
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "attnlab/train/tasks.hpp"

namespace attnlab {

// The class names in label order (all ten).
const std::vector<std::string>& shape_class_names();

// One image of class `label` (the order above) with centre (cx, cy) and radius r in pixels, drawn
// as the task draws its images: image (S, S) overwritten, N(0, 0.1²) noise drawn from rng per pixel.
// (The caption_match task, train/caption_match.hpp, draws its images with it.)
void draw_shape(std::size_t label, float cx, float cy, float r, std::size_t side, Rng& rng, float* image);

// The task with S = image_size and the first `classes` classes; ConfigError naming the value
// outside [8, 64] or [4, 10].
std::unique_ptr<Task> make_shapes_task(std::size_t image_size, std::size_t classes);

}  // namespace attnlab
