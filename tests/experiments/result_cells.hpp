// tests/experiments/result_cells.hpp: reading the cells of an experiment's Result in tests.
#pragma once

#include <stdexcept>
#include <string>

#include "attnlab/experiments/experiments.hpp"

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

}  // namespace attnlab::experiments::testing
