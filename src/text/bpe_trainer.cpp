#include "attnlab/text/bpe_trainer.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <queue>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "attnlab/core/error.hpp"
#include "attnlab/text/byte_bpe.hpp"

namespace attnlab::text {

namespace {
std::uint64_t key_of(std::int32_t a, std::int32_t b) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
}

// The pieces of the corpus with their counts, sorted by their bytes (a deterministic order).
std::vector<std::pair<std::string, std::int64_t>> count_pieces(const std::vector<std::string>& texts) {
    std::unordered_map<std::string, std::int64_t> counts;
    for (std::size_t d = 0; d < texts.size(); ++d) {
        const std::string& t = texts[d];
        for (const TextPiece& p : gpt2_pieces(t)) ++counts[t.substr(p.begin, p.end - p.begin)];
    }
    std::vector<std::pair<std::string, std::int64_t>> sorted(counts.begin(), counts.end());
    std::sort(sorted.begin(), sorted.end());
    return sorted;
}

// The state of training: words as symbol ids, and every adjacent pair's weighted count.
struct BpeState {
    std::vector<std::vector<std::int32_t>> words;  // each piece's symbols
    std::vector<std::int64_t> freq;                // each piece's count
    std::unordered_map<std::uint64_t, std::int64_t> pairs;          // pair -> weighted count
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> where;  // pair -> words (may repeat, may be stale)
    std::vector<std::uint64_t> touched;            // pairs whose count changed in this merge

    void add_pairs(std::uint32_t w, std::int64_t sign) {
        const std::vector<std::int32_t>& s = words[w];
        for (std::size_t i = 0; i + 1 < s.size(); ++i) {
            const std::uint64_t k = key_of(s[i], s[i + 1]);
            pairs[k] += sign * freq[w];
            touched.push_back(k);
            if (sign > 0) where[k].push_back(w);
        }
    }
};

// Max-heap order: larger count first, then the smaller pair key.
struct HeapOrder {
    bool operator()(const std::pair<std::int64_t, std::uint64_t>& a, const std::pair<std::int64_t, std::uint64_t>& b) const {
        return a.first != b.first ? a.first < b.first : a.second > b.second;
    }
};
}  // namespace

TokenizerFiles train_byte_bpe(const std::vector<std::string>& texts, std::size_t merges) {
    if (merges > kMaxBpeMerges) fail<ConfigError>("train_byte_bpe: merges must be at most ", kMaxBpeMerges, ", got ", merges);
    std::vector<std::string> tokens;  // id -> the token's string of byte symbols
    std::unordered_map<std::string, std::int32_t> ids;
    for (int b = 0; b < 256; ++b) {
        tokens.push_back(byte_symbol(static_cast<std::uint8_t>(b)));
        ids[tokens.back()] = b;
    }
    BpeState st;
    for (const auto& [piece, count] : count_pieces(texts)) {
        std::vector<std::int32_t> s;
        for (unsigned char c : piece) s.push_back(c);
        st.words.push_back(std::move(s));
        st.freq.push_back(count);
    }
    for (std::uint32_t w = 0; w < st.words.size(); ++w) st.add_pairs(w, +1);
    std::priority_queue<std::pair<std::int64_t, std::uint64_t>, std::vector<std::pair<std::int64_t, std::uint64_t>>, HeapOrder> heap;
    for (const auto& [k, c] : st.pairs) heap.emplace(c, k);
    st.touched.clear();

    std::string merges_txt = "#version: attnlab train_byte_bpe\n";
    std::vector<std::uint32_t> stamp(st.words.size(), 0);
    for (std::uint32_t m = 1; m <= merges; ++m) {
        // The best pair whose heap entry is current.
        std::uint64_t best = 0;
        bool found = false;
        while (!heap.empty()) {
            const auto [count, k] = heap.top();
            heap.pop();
            const auto it = st.pairs.find(k);
            if (it != st.pairs.end() && it->second == count) {
                found = count >= 2;
                best = k;
                break;
            }
        }
        if (!found) break;
        const auto a = static_cast<std::int32_t>(best >> 32), b = static_cast<std::int32_t>(best & 0xffffffffu);
        const std::string merged = tokens[static_cast<std::size_t>(a)] + tokens[static_cast<std::size_t>(b)];
        auto [it, inserted] = ids.emplace(merged, static_cast<std::int32_t>(tokens.size()));
        if (inserted) tokens.push_back(merged);
        const std::int32_t id = it->second;
        merges_txt += tokens[static_cast<std::size_t>(a)] + " " + tokens[static_cast<std::size_t>(b)] + "\n";

        const std::vector<std::uint32_t> words = std::move(st.where[best]);
        st.where.erase(best);
        for (std::uint32_t w : words) {
            if (stamp[w] == m) continue;
            stamp[w] = m;
            std::vector<std::int32_t>& s = st.words[w];
            st.add_pairs(w, -1);
            std::vector<std::int32_t> out;
            out.reserve(s.size());
            for (std::size_t i = 0; i < s.size(); ++i) {
                if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
                    out.push_back(id);
                    ++i;
                } else {
                    out.push_back(s[i]);
                }
            }
            s = std::move(out);
            st.add_pairs(w, +1);
        }
        std::sort(st.touched.begin(), st.touched.end());
        st.touched.erase(std::unique(st.touched.begin(), st.touched.end()), st.touched.end());
        for (std::uint64_t k : st.touched) {
            const auto p = st.pairs.find(k);
            if (p == st.pairs.end()) continue;
            if (p->second <= 0) st.pairs.erase(p);
            else heap.emplace(p->second, k);
        }
        st.touched.clear();
    }
    nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
    for (std::size_t id = 0; id < tokens.size(); ++id) vocab[tokens[id]] = id;
    return {{"vocab.json", vocab.dump()}, {"merges.txt", merges_txt}};
}

}  // namespace attnlab::text
