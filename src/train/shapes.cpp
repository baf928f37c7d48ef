#include "attnlab/train/shapes.hpp"

#include <algorithm>
#include <cmath>

#include "attnlab/core/error.hpp"

namespace attnlab {

namespace {

constexpr std::size_t kShapesMinSide = 8, kShapesMaxSide = 64, kShapesMinClasses = 4, kShapesMaxClasses = 10;
constexpr float kNoise = 0.1f;       // standard deviation of the pixel noise
constexpr float kHalfWidth = 0.5f;   // a stroke's half width in pixels (bars: twice)

struct Point {
    float x, y;
};

// Distance from p to the segment a-b.
float segment_distance(Point p, Point a, Point b) {
    const float dx = b.x - a.x, dy = b.y - a.y;
    const float len2 = dx * dx + dy * dy;
    float t = len2 > 0.0f ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / len2 : 0.0f;
    t = std::clamp(t, 0.0f, 1.0f);
    const float ex = p.x - (a.x + t * dx), ey = p.y - (a.y + t * dy);
    return std::sqrt(ex * ex + ey * ey);
}

// One drawn shape: its class, centre and radius (pixels).
struct Shape {
    std::size_t label;
    Point c;
    float r;

    // Distance from p to the shape's strokes, minus their half width: <= 0 on a stroke.
    float distance(Point p) const {
        const float dx = p.x - c.x, dy = p.y - c.y;
        const auto seg = [&](float x0, float y0, float x1, float y1) {
            return segment_distance(p, {c.x + x0, c.y + y0}, {c.x + x1, c.y + y1});
        };
        switch (label) {
            case 0: return std::abs(std::max(std::abs(dx), std::abs(dy)) - r) - kHalfWidth;  // square
            case 1: return std::abs(std::sqrt(dx * dx + dy * dy) - r) - kHalfWidth;          // circle
            case 2: {                                                                          // triangle
                const float s = 0.8660254f * r;                                               // r·cos 30°
                const Point top{c.x, c.y - r}, left{c.x - s, c.y + 0.5f * r}, right{c.x + s, c.y + 0.5f * r};
                return std::min({segment_distance(p, top, left), segment_distance(p, left, right),
                                 segment_distance(p, right, top)}) - kHalfWidth;
            }
            case 3: return std::min(seg(-r, 0, r, 0), seg(0, -r, 0, r)) - kHalfWidth;  // plus
            case 4: {                                                                    // cross
                const float a = 0.7f * r;
                return std::min(seg(-a, -a, a, a), seg(-a, a, a, -a)) - kHalfWidth;
            }
            case 5: return seg(-r, 0, r, 0) - 2 * kHalfWidth;                           // hbar
            case 6: return seg(0, -r, 0, r) - 2 * kHalfWidth;                           // vbar
            case 7: return seg(-0.7f * r, -0.7f * r, 0.7f * r, 0.7f * r) - kHalfWidth;  // diagonal
            case 8: return seg(-0.7f * r, 0.7f * r, 0.7f * r, -0.7f * r) - kHalfWidth;  // antidiagonal
            default: return std::min(seg(-r, -r, -r, r), seg(-r, r, r, r)) - kHalfWidth;  // corner
        }
    }
};

}  // namespace

void draw_shape(std::size_t label, float cx, float cy, float r, std::size_t side, Rng& rng, float* image) {
    const Shape shape{label, {cx, cy}, r};
    for (std::size_t y = 0; y < side; ++y) {
        for (std::size_t x = 0; x < side; ++x) {
            const float d = shape.distance({static_cast<float>(x) + 0.5f, static_cast<float>(y) + 0.5f});
            // 1 on the stroke, fading to 0 one pixel outside it.
            const float ink = std::clamp(0.5f - d, 0.0f, 1.0f);
            image[y * side + x] = ink + kNoise * rng.normal();
        }
    }
}

namespace {

class ShapesTask final : public Task {
public:
    ShapesTask(std::size_t side, std::size_t classes) : side_(side), classes_(classes) {}

    std::string name() const override { return "shapes"; }
    TaskKind kind() const override { return TaskKind::classification; }
    TaskInput input() const override { return TaskInput::pixels; }
    std::size_t image_size() const override { return side_; }
    std::size_t vocab_size() const override { return 0; }
    std::size_t seq_len() const override { return side_ * side_; }
    std::size_t num_classes() const override { return classes_; }

    void sample_into(std::size_t batch_size, Rng& rng, Batch& batch) const override {
        if (batch_size == 0) fail<ConfigError>("shapes::sample: batch_size must be positive, got 0");
        require_allocatable({batch_size, side_, side_}, "Task::sample", "the batch");
        if (batch.pixels.dimension() != 3 || batch.pixels.shape(0) != batch_size || batch.pixels.shape(1) != side_ ||
            batch.pixels.shape(2) != side_) {
            batch.pixels = Tensor3::from_shape({batch_size, side_, side_});
        }
        if (batch.labels.size() != batch_size) batch.labels = Index1::from_shape({batch_size});
        if (batch.tokens.size() != 0) batch.tokens = Index2();
        if (batch.targets.size() != 0) batch.targets = Index2();
        if (batch.padding.size() != 0) batch.padding = Mask2();
        for (Tensor2* t : {&batch.time, &batch.forecast, &batch.baseline}) {
            if (t->size() != 0) *t = Tensor2();
        }
        if (batch.values.size() != 0) batch.values = Tensor3();
        const float side = static_cast<float>(side_);
        for (std::size_t b = 0; b < batch_size; ++b) {
            Shape shape;
            shape.label = rng.below(static_cast<std::uint32_t>(classes_));
            shape.r = rng.uniform(side / 5.0f, side / 3.0f);
            // The centre keeps the shape inside the image (a margin of one pixel).
            const float lo = shape.r + 1.0f, hi = side - shape.r - 1.0f;
            shape.c = {rng.uniform(lo, hi), rng.uniform(lo, hi)};
            batch.labels(b) = static_cast<std::int32_t>(shape.label);
            draw_shape(shape.label, shape.c.x, shape.c.y, shape.r, side_, rng, batch.pixels.data() + b * side_ * side_);
        }
    }

    // Labels read as class names ("circle"); -1 as "_".
    std::string decode(const std::int32_t* tokens, std::size_t n) const override {
        std::string out;
        for (std::size_t i = 0; i < n; ++i) {
            if (tokens[i] < -1 || tokens[i] >= static_cast<std::int32_t>(classes_)) {
                fail<ValueError>("shapes::decode: label ", tokens[i], " at position ", i, " is outside [0, ", classes_,
                                 ") (and is not -1, the ignored target)");
            }
            if (i > 0) out += ' ';
            out += tokens[i] < 0 ? std::string("_") : shape_class_names()[static_cast<std::size_t>(tokens[i])];
        }
        return out;
    }

private:
    std::size_t side_, classes_;
};

}  // namespace

const std::vector<std::string>& shape_class_names() {
    static const std::vector<std::string> names = {"square", "circle", "triangle", "plus", "cross",
                                                   "hbar", "vbar", "diagonal", "antidiagonal", "corner"};
    return names;
}

std::unique_ptr<Task> make_shapes_task(std::size_t image_size, std::size_t classes) {
    if (image_size < kShapesMinSide || image_size > kShapesMaxSide) {
        fail<ConfigError>("make_task(\"shapes\"): length (the image side) must be in [", kShapesMinSide, ", ", kShapesMaxSide,
                          "], got length=", image_size);
    }
    if (classes < kShapesMinClasses || classes > kShapesMaxClasses) {
        fail<ConfigError>("make_task(\"shapes\"): vocab (the number of classes) must be in [", kShapesMinClasses, ", ",
                          kShapesMaxClasses, "], got vocab=", classes);
    }
    return std::make_unique<ShapesTask>(image_size, classes);
}

}  // namespace attnlab
