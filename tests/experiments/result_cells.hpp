// tests/experiments/result_cells.hpp: reading the cells of an experiment's Result in tests, and
// checking that its conclusion, timing and phrases are messages of its experiment's template table.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "attnlab/experiments/experiments.hpp"
#include "attnlab/experiments/registry.hpp"

namespace attnlab::experiments::testing {

inline const Table& table(const Result& r, const std::string& name) {
    for (const auto& t : r.tables) {
        if (t.name == name) return t;
    }
    throw std::runtime_error("no table '" + name + "' in " + r.name);
}

inline std::size_t column_index(const Table& t, const std::string& column) {
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
        if (t.columns[c] == column) return c;
    }
    throw std::runtime_error("no column '" + column + "' in " + t.name);
}

// The cell of `row` (matched on the first column) under `column`, as text.
inline std::string text(const Result& r, const std::string& table_name, const std::string& row, const std::string& column) {
    const Table& t = table(r, table_name);
    const std::size_t c = column_index(t, column);
    for (const auto& cells : t.rows) {
        if (cells[0] == row) return cells[c];
    }
    throw std::runtime_error("no row '" + row + "' in " + table_name);
}
// The same as a number ("97.1%" reads as 97.1, "nan" as NaN).
inline double value(const Result& r, const std::string& table_name, const std::string& row, const std::string& column) {
    return std::stod(text(r, table_name, row, column));
}

// Two runs of one experiment drew the same curves: every series' lines point for point, a NaN
// where the other has a NaN.
inline void expect_same_series(const Result& a, const Result& b) {
    ASSERT_EQ(a.series.size(), b.series.size()) << a.name;
    for (std::size_t i = 0; i < a.series.size(); ++i) {
        ASSERT_EQ(a.series[i].lines.size(), b.series[i].lines.size()) << a.series[i].name;
        for (std::size_t l = 0; l < a.series[i].lines.size(); ++l) {
            const auto &ya = a.series[i].lines[l].y, &yb = b.series[i].lines[l].y;
            ASSERT_EQ(ya.size(), yb.size()) << a.series[i].name;
            for (std::size_t j = 0; j < ya.size(); ++j) {
                EXPECT_TRUE(ya[j] == yb[j] || (std::isnan(ya[j]) && std::isnan(yb[j]))) << a.series[i].name;
            }
        }
    }
}

// The conclusion and timing lines, and the texts made from templates (Result::phrases), are
// messages of the experiment's own table (registry entry): every id is a template there, every
// placeholder has a value and every value a placeholder (render_message throws otherwise), nothing
// is left in braces, and the rendering is exactly the English text the result carries, so a
// translated table with the same placeholders says the same.
inline void expect_messages_render(const Result& r) {
    const MessageTemplates& templates = find_experiment(r.name).messages;
    ASSERT_FALSE(r.conclusion_message.id.empty()) << r.name << ": no conclusion message";
    std::string conclusion;
    ASSERT_NO_THROW(conclusion = render_message(r.conclusion_message, templates)) << r.name;
    EXPECT_EQ(conclusion, r.conclusion) << r.name;
    EXPECT_EQ(conclusion.find('{'), std::string::npos) << r.name << ": " << conclusion;
    // Each text made from a template renders from its message with the experiment's templates.
    for (const auto& [text, message] : r.phrases) {
        std::string rendered;
        ASSERT_NO_THROW(rendered = render_message(message, templates)) << r.name << ": phrase " << text;
        EXPECT_EQ(rendered, text) << r.name;
    }
    EXPECT_EQ(r.timing_message.id.empty(), r.timing.empty()) << r.name << ": timing " << r.timing;
    if (r.timing_message.id.empty()) return;
    std::string timing;
    ASSERT_NO_THROW(timing = render_message(r.timing_message, templates)) << r.name;
    EXPECT_EQ(timing, r.timing) << r.name;
    EXPECT_EQ(timing.find('{'), std::string::npos) << r.name << ": " << timing;
}

}  // namespace attnlab::experiments::testing
