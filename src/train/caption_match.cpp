#include "attnlab/train/caption_match.hpp"

#include <algorithm>

#include "attnlab/core/error.hpp"
#include "attnlab/train/shapes.hpp"

namespace attnlab {

namespace {

constexpr std::size_t kCaptionMinSide = 16, kCaptionMaxSide = 64, kCaptionMinClasses = 4, kCaptionMaxClasses = 10;
constexpr std::size_t kCaptionLength = 4;  // size, kind, vertical, horizontal
// Radius ranges as fractions of S (small, large), apart so that the size word is decidable.
constexpr float kSmall[2] = {0.20f, 0.24f}, kLarge[2] = {0.29f, 0.33f};

class CaptionMatchTask final : public Task {
public:
    CaptionMatchTask(std::size_t side, std::size_t classes)
        : side_(side), classes_(classes), words_(caption_match_words(classes)) {}

    std::string name() const override { return "caption_match"; }
    TaskKind kind() const override { return TaskKind::classification; }
    TaskInput input() const override { return TaskInput::paired; }
    std::size_t image_size() const override { return side_; }
    std::size_t vocab_size() const override { return classes_ + 6; }
    std::size_t seq_len() const override { return kCaptionLength; }
    std::size_t num_classes() const override { return 2; }

    void sample_into(std::size_t batch_size, Rng& rng, Batch& batch) const override {
        if (batch_size == 0) fail<ConfigError>("caption_match::sample: batch_size must be positive, got 0");
        require_allocatable({batch_size, side_, side_}, "Task::sample", "the batch");
        if (batch.pixels.dimension() != 3 || batch.pixels.shape(0) != batch_size || batch.pixels.shape(1) != side_ ||
            batch.pixels.shape(2) != side_) {
            batch.pixels = Tensor3::from_shape({batch_size, side_, side_});
        }
        if (batch.tokens.dimension() != 2 || batch.tokens.shape(0) != batch_size ||
            batch.tokens.shape(1) != kCaptionLength) {
            batch.tokens = Index2::from_shape({batch_size, kCaptionLength});
        }
        if (batch.labels.size() != batch_size) batch.labels = Index1::from_shape({batch_size});
        if (batch.targets.size() != 0) batch.targets = Index2();
        if (batch.padding.size() != 0) batch.padding = Mask2();
        const float side = static_cast<float>(side_), mid = side / 2.0f;
        const auto k = static_cast<std::int32_t>(classes_);
        for (std::size_t b = 0; b < batch_size; ++b) {
            const bool match = rng.below(2) == 1;
            const auto shape = static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(classes_)));
            const std::int32_t large = static_cast<std::int32_t>(rng.below(2));
            const std::int32_t bottom = static_cast<std::int32_t>(rng.below(2));
            const std::int32_t right = static_cast<std::int32_t>(rng.below(2));
            const float* range = large ? kLarge : kSmall;
            const float r = rng.uniform(range[0] * side, range[1] * side);
            // Within one pixel of the border, on the chosen side of the middle (½ pixel apart).
            const auto coordinate = [&](bool high) {
                return high ? rng.uniform(mid + 0.5f, side - r - 1.0f) : rng.uniform(r + 1.0f, mid - 0.5f);
            };
            const float cy = coordinate(bottom != 0), cx = coordinate(right != 0);
            std::int32_t* caption = batch.tokens.data() + b * kCaptionLength;
            caption[0] = k + large;
            caption[1] = shape;
            caption[2] = k + 2 + bottom;
            caption[3] = k + 4 + right;
            if (!match) {
                // One word becomes another value of its attribute.
                const std::size_t word = rng.below(kCaptionLength);
                if (word == 1) {
                    caption[1] = (shape + 1 + static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(k - 1)))) % k;
                } else {
                    const std::int32_t first = word == 0 ? k : (word == 2 ? k + 2 : k + 4);
                    caption[word] = first + (1 - (caption[word] - first));
                }
            }
            batch.labels(b) = match ? 1 : 0;
            draw_shape(static_cast<std::size_t>(shape), cx, cy, r, side_, rng, batch.pixels.data() + b * side_ * side_);
        }
    }

    // Tokens read as caption words ("large circle top left"); -1 as "_".
    std::string decode(const std::int32_t* tokens, std::size_t n) const override {
        std::string out;
        for (std::size_t i = 0; i < n; ++i) {
            if (tokens[i] < -1 || tokens[i] >= static_cast<std::int32_t>(words_.size())) {
                fail<ValueError>("caption_match::decode: token ", tokens[i], " at position ", i, " is outside [0, ",
                                 words_.size(), ") (and is not -1, the ignored target)");
            }
            if (i > 0) out += ' ';
            out += tokens[i] < 0 ? std::string("_") : words_[static_cast<std::size_t>(tokens[i])];
        }
        return out;
    }

private:
    std::size_t side_, classes_;
    std::vector<std::string> words_;
};

}  // namespace

std::vector<std::string> caption_match_words(std::size_t classes) {
    const std::vector<std::string>& shapes = shape_class_names();
    std::vector<std::string> words(shapes.begin(), shapes.begin() + static_cast<std::ptrdiff_t>(std::min(classes, shapes.size())));
    for (const char* w : {"small", "large", "top", "bottom", "left", "right"}) words.emplace_back(w);
    return words;
}

std::unique_ptr<Task> make_caption_match_task(std::size_t image_size, std::size_t classes) {
    if (image_size < kCaptionMinSide || image_size > kCaptionMaxSide) {
        fail<ConfigError>("make_task(\"caption_match\"): length (the image side) must be in [", kCaptionMinSide, ", ",
                          kCaptionMaxSide, "], got length=", image_size);
    }
    if (classes < kCaptionMinClasses || classes > kCaptionMaxClasses) {
        fail<ConfigError>("make_task(\"caption_match\"): vocab (the number of shape classes) must be in [",
                          kCaptionMinClasses, ", ", kCaptionMaxClasses, "], got vocab=", classes);
    }
    return std::make_unique<CaptionMatchTask>(image_size, classes);
}

}  // namespace attnlab
