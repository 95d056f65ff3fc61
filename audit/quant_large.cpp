// quant_large.cpp: a quantization call too large to hold twice (QuantLargeSpec): its counter-generated buffers, and
// a run of its rows regenerated as an ordinary call for the check.
#include "audit/counter_patterns.h"
#include "audit/quant_runner.h"
#include "common/parallel_for.h"

namespace fuseproof::audit {

uint64_t QuantLargeSpec::buffer_seed(int k) const { return k == 0 ? seed : counter_hash(seed, uint64_t(k)); }

QuantLargeSpec make_quant_large(const ref::QuantOpSpec& op, ref::QuantContract contract, int64_t rows, int64_t width,
                                int32_t dtype, uint64_t seed, const std::vector<float>& scalars) {
  QuantLargeSpec l;
  l.seed = seed;
  // The sizes of one row and of two tell each buffer's rows apart from a broadcast one.
  const QuantCallSpec one = make_quant_call(op, contract, 1, width, dtype, ref::ScaleLayout::kLinear);
  const QuantCallSpec two = make_quant_call(op, contract, 2, width, dtype, ref::ScaleLayout::kLinear);
  for (size_t k = 0; k < one.buffers.size(); ++k) {
    const size_t row = two.buffers[k].size() - one.buffers[k].size();
    l.row_elems.push_back(row);
    l.buffer_elems.push_back(row ? row * size_t(rows) : one.buffers[k].size());
  }
  l.view = one;
  l.view.buffers.clear();
  l.view.rows = rows;
  l.view.codes_bytes = one.codes_bytes * size_t(rows);
  l.view.scale_bytes = one.scale_bytes * size_t(rows);
  l.view.scalars = scalars;
  return l;
}

QuantCallSpec QuantLargeSpec::rows_of(int64_t row0, int64_t rows) const {
  QuantCallSpec s = make_quant_call(*view.op, view.contract, rows, view.width, view.dtype, view.layout);
  s.scalars = view.scalars;
  const bool bf = bf16();
  for (size_t k = 0; k < s.buffers.size(); ++k) {
    const uint64_t first = uint64_t(row0) * row_elems[k], bs = buffer_seed(int(k));
    std::vector<uint16_t>& b = s.buffers[k];
    parallel_for(b.size(), [&](unsigned, size_t lo, size_t hi) {
      for (size_t i = lo; i < hi; ++i) b[i] = counter_pattern(bf, bs, first + i);
    }, size_t(1) << 16);
  }
  return s;
}

void QuantLargeSpec::fill(int k, uint16_t* p) const {
  const bool bf = bf16();
  const uint64_t bs = buffer_seed(k);
  parallel_for(buffer_elems[size_t(k)], [&](unsigned, size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) p[i] = counter_pattern(bf, bs, i);
  }, size_t(1) << 16);
}

uint64_t QuantLargeSpec::changed(int k, const uint16_t* p) const {
  const bool bf = bf16();
  const uint64_t bs = buffer_seed(k);
  const unsigned workers = worker_count();
  std::vector<uint64_t> n(workers, 0);
  parallel_for(buffer_elems[size_t(k)], [&](unsigned w, size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) n[w] += p[i] != counter_pattern(bf, bs, i);
  }, size_t(1) << 16, workers);
  uint64_t total = 0;
  for (uint64_t c : n) total += c;
  return total;
}

}  // namespace fuseproof::audit
