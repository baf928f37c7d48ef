#include "input_tables.hpp"

#include "attnlab/posenc/sinusoidal.hpp"

namespace attnlab::detail {

void set_input_tables(const Trunk& trunk, TrunkCache& cache) {
    const ModelConfig& config = trunk.config();
    const std::vector<TransformerBlock>& blocks = trunk.blocks;
    cache.blocks.resize(blocks.size());
    if (blocks.empty()) return;
    const Index2& tokens = cache.tokens;
    const std::size_t batch = tokens.shape(0), t = tokens.shape(1), c = config.d_model, v = trunk.tok_emb.vocab_size();
    const bool additive = config.positional == PositionalKind::sinusoidal || config.positional == PositionalKind::learned;
    const std::size_t table_rows = v + (additive ? t : 0);
    const bool use = config.norm == NormPlacement::post && !blocks[0].gradient_checkpointing() &&
                     config.positional != PositionalKind::rope && kRowsPerTableRow * table_rows <= batch * t;
    MultiHeadAttentionCache& first = cache.blocks[0].attn;
    if (!use) {
        first.input.tables = nullptr;
        return;
    }
    TableRows& tables = cache.input_tables;
    tables = TableRows{};
    tables.a = trunk.tok_emb.weight.data();
    tables.a_rows = v;
    tables.ia = tokens.data();
    tables.rows = batch * t;
    tables.width = c;
    if (config.positional == PositionalKind::sinusoidal) {
        Tensor2& rows = cache.position_rows;
        if (rows.shape(0) != t || rows.shape(1) != c) rows = sinusoidal_table(t, c);
        tables.b = rows.data();
        tables.b_rows = t;
    } else if (config.positional == PositionalKind::learned) {
        tables.b = trunk.pos_emb.table.data();  // rows 0 .. T - 1
        tables.b_rows = t;
    }
    first.input.tables = &tables;
}

void clear_input_tables(std::vector<TransformerBlockCache>& caches) {
    for (auto& cache : caches) cache.attn.input.tables = nullptr;
}

void set_input_table_gradients(TrunkCache& cache, Tensor2& dtok, Tensor2* dpos) {
    cache.input_tables.da = dtok.data();
    cache.input_tables.db = dpos ? dpos->data() : nullptr;
}

}  // namespace attnlab::detail
