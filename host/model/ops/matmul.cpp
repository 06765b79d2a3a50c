#include "frugal/model/ops/matmul.h"

#include <algorithm>

#include "model/ops/shape_util.h"

namespace frugal::ops {

std::vector<ValueShape> Gemm::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& a = need(in, 0, "A");
  const ValueShape& b = need(in, 1, "B");
  if (a.dims.size() != 2) bad("input A '" + a.name + "' has shape " + str(a.dims) + ", Gemm needs a matrix");
  if (b.dims.size() != 2) bad("input B '" + b.name + "' has shape " + str(b.dims) + ", Gemm needs a matrix");
  const int64_t m = trans_a ? a.dims[1] : a.dims[0], k = trans_a ? a.dims[0] : a.dims[1];
  const int64_t kb = trans_b ? b.dims[1] : b.dims[0], nn = trans_b ? b.dims[0] : b.dims[1];
  if (k != kb)
    bad("inner dimensions differ: A '" + a.name + "' " + str(a.dims) + (trans_a ? " (transposed)" : "") +
        " gives K=" + std::to_string(k) + ", B '" + b.name + "' " + str(b.dims) +
        (trans_b ? " (transposed)" : "") + " gives K=" + std::to_string(kb));
  if (const ValueShape* c = opt(in, 2)) {  // unidirectional broadcast to [M, N]
    const Dims target{m, nn};
    bool ok = c->dims.size() <= 2;
    for (size_t i = 0; ok && i < c->dims.size(); ++i) {
      const int64_t t = target[2 - c->dims.size() + i];
      ok = c->dims[i] == 1 || c->dims[i] == t;
    }
    if (!ok) bad("input C '" + c->name + "' " + str(c->dims) + " cannot be broadcast to " + str(target));
  }
  return outputs({value({m, nn}, a.dtype)});
}

int64_t Gemm::macs(const std::vector<ValueShape>& in, const std::vector<ValueShape>& out) const {
  const Dims& a = in[0].dims;
  return mul(product(out[0].dims), trans_a ? a[0] : a[1]);
}

MatMulShape MatMulShape::of(const ValueShape& a, const ValueShape& b) {
  if (a.dims.empty() || b.dims.empty()) bad("MatMul inputs must have rank >= 1");
  Dims da = a.dims, db = b.dims;
  if (da.size() == 1) da.insert(da.begin(), 1);  // numpy: 1-D operands get a unit dim
  if (db.size() == 1) db.push_back(1);
  MatMulShape s;
  s.M = da[da.size() - 2];
  s.K = da.back();
  s.N = db.back();
  const int64_t kb = db[db.size() - 2];
  if (s.K != kb)
    bad("inner dimensions differ: '" + a.name + "' " + str(a.dims) + " gives K=" + std::to_string(s.K) +
        ", '" + b.name + "' " + str(b.dims) + " gives K=" + std::to_string(kb));
  ValueShape ba = value(Dims(da.begin(), da.end() - 2), a.dtype),
             bb = value(Dims(db.begin(), db.end() - 2), b.dtype);
  ba.name = a.name;
  bb.name = b.name;
  s.batch = broadcast(ba, bb);
  const size_t r = s.batch.size();
  s.a_batch = Dims(r - ba.dims.size(), 1);
  s.a_batch.insert(s.a_batch.end(), ba.dims.begin(), ba.dims.end());
  s.b_batch = Dims(r - bb.dims.size(), 1);
  s.b_batch.insert(s.b_batch.end(), bb.dims.begin(), bb.dims.end());
  s.a_stride.assign(r, 1);
  s.b_stride.assign(r, 1);
  for (size_t k = r; k-- > 1;) {
    s.a_stride[k - 1] = s.a_stride[k] * s.a_batch[k];
    s.b_stride[k - 1] = s.b_stride[k] * s.b_batch[k];
  }
  s.out = s.batch;
  if (a.dims.size() > 1) s.out.push_back(s.M);
  if (b.dims.size() > 1) s.out.push_back(s.N);
  return s;
}

std::vector<ValueShape> MatMul::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& a = need(in, 0, "A");
  const ValueShape& b = need(in, 1, "B");
  return outputs({value(MatMulShape::of(a, b).out, a.dtype)});
}

int64_t MatMul::macs(const std::vector<ValueShape>& in, const std::vector<ValueShape>& out) const {
  return mul(product(out[0].dims), in[0].dims.back());  // every output element: K products
}

}  // namespace frugal::ops
