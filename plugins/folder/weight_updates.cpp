#include "folder/weight_updates.h"

#include <cstring>

#include "folder/constants.h"
#include "frugal/error.h"

namespace frugal::folding {

namespace {

int64_t product_from(const std::vector<int64_t>& d, size_t from) {
  int64_t p = 1;
  for (size_t i = from; i < d.size(); ++i) p *= d[i];
  return p;
}

bool has_input(const Node& n, size_t slot) { return n.inputs.size() > slot && !n.inputs[slot].empty(); }

bool any_nonzero(const std::vector<double>& v) {
  for (double x : v)
    if (x != 0.0) return true;
  return false;
}

ConstantTensor read_constant(const Graph& g, const Node& n, size_t slot) {
  auto c = constant_floats(g, n.inputs[slot]);
  if (!c) throw Error("node '" + n.name + "': input '" + n.inputs[slot] + "' is not a constant float tensor");
  return *c;
}

// Writes a float32 parameter into slot `slot` of node `node`: in place when the
// node is its only reader, else under a fresh name (the old one is detached).
void write_parameter(Graph& g, int node, size_t slot, const std::vector<int64_t>& dims,
                     const std::vector<double>& values, const std::string& role,
                     std::vector<std::string>& detached) {
  std::vector<float> f(values.begin(), values.end());
  const std::string old = has_input(g.nodes[node], slot) ? g.nodes[node].inputs[slot] : std::string();
  if (!old.empty() && g.is_initializer(old) && use_count(g, old) == 1) {
    TensorDesc& t = g.tensor(old);
    t.dtype = DType::Float32;
    t.shape = make_shape(dims);
    t.has_shape = true;
    t.data.resize(f.size() * sizeof(float));
    if (!f.empty()) std::memcpy(t.data.data(), f.data(), t.data.size());
    return;
  }
  const std::string fresh = g.unique_name(g.nodes[node].name + "." + role);
  g.add_initializer(fresh, DType::Float32, dims, f.data());
  Node& n = g.nodes[node];
  if (n.inputs.size() <= slot) n.inputs.resize(slot + 1);
  n.inputs[slot] = fresh;
  if (!old.empty()) detached.push_back(old);
}

void check_size(const Node& n, const FeatureMap& m, int64_t expected, const char* side) {
  if (static_cast<int64_t>(m.size()) != expected)
    throw Error("node '" + n.name + "': the " + side + " map has " + std::to_string(m.size()) +
                " features, the layer has " + std::to_string(expected));
}

void edit_conv(Graph& g, const ExpressiveEdit& e, std::vector<std::string>& detached) {
  const Node& n = g.nodes[e.node];
  ConstantTensor w = read_constant(g, n, 1);
  if (w.dims.size() < 3)
    throw Error("Conv node '" + n.name + "': weight has rank " + std::to_string(w.dims.size()));
  const int64_t group = n.attr_int("group", 1);
  const int64_t filters = w.dims[0], per_group_in = w.dims[1], kernel = product_from(w.dims, 2);
  if (group <= 0 || filters % group != 0)
    throw Error("Conv node '" + n.name + "': bad group " + std::to_string(group));
  const int64_t filters_per_group = filters / group;
  const bool had_bias = has_input(n, 2);
  std::vector<double> bias(filters, 0.0);
  if (had_bias) {
    ConstantTensor b = read_constant(g, n, 2);
    if (static_cast<int64_t>(b.values.size()) != filters)
      throw Error("Conv node '" + n.name + "': bias size mismatch");
    bias = b.values;
  }
  if (e.input) {  // reads new where old = P*new + Q: W[o,j,.] *= P[ci], b[o] += sum W[o,j,.] Q[ci]
    const FeatureMap& m = *e.input;
    check_size(n, m, per_group_in * group, "input");
    for (int64_t o = 0; o < filters; ++o) {
      const int64_t first_channel = (o / filters_per_group) * per_group_in;
      double acc = 0.0;
      for (int64_t j = 0; j < per_group_in; ++j) {
        const double p = m.scale[first_channel + j], q = m.shift[first_channel + j];
        double* wk = &w.values[(o * per_group_in + j) * kernel];
        for (int64_t k = 0; k < kernel; ++k) {
          acc += wk[k] * q;
          wk[k] *= p;
        }
      }
      bias[o] += acc;
    }
  }
  if (e.output) {  // writes new = S*old + T
    const FeatureMap& m = *e.output;
    check_size(n, m, filters, "output");
    for (int64_t o = 0; o < filters; ++o) {
      double* wo = &w.values[o * per_group_in * kernel];
      for (int64_t k = 0; k < per_group_in * kernel; ++k) wo[k] *= m.scale[o];
      bias[o] = m.scale[o] * bias[o] + m.shift[o];
    }
  }
  write_parameter(g, e.node, 1, w.dims, w.values, "weight", detached);
  if (had_bias || any_nonzero(bias)) write_parameter(g, e.node, 2, {filters}, bias, "bias", detached);
}

// Gemm (alpha, beta folded in) and MatMul: Y = A B + C with B as K x N.
void edit_matrix_product(Graph& g, const ExpressiveEdit& e, std::vector<std::string>& detached) {
  const Node& n = g.nodes[e.node];
  const bool is_gemm = n.op_type == "Gemm";
  const bool trans_b = is_gemm && n.attr_int("transB", 0) != 0;
  const double alpha = is_gemm ? n.attr_float("alpha", 1.0f) : 1.0;
  const double beta = is_gemm ? n.attr_float("beta", 1.0f) : 1.0;
  ConstantTensor b = read_constant(g, n, 1);
  if (b.dims.size() != 2) throw Error("node '" + n.name + "': weight is not a matrix");
  const int64_t k_dim = trans_b ? b.dims[1] : b.dims[0], n_dim = trans_b ? b.dims[0] : b.dims[1];
  auto at = [&](int64_t k, int64_t j) -> double& {
    return b.values[trans_b ? j * k_dim + k : k * n_dim + j];
  };
  for (double& v : b.values) v *= alpha;
  // C broadcast to rows x N (rows = 1, or M when C is a full matrix).
  const bool had_c = is_gemm && has_input(n, 2);
  int64_t rows = 1;
  std::vector<double> c(n_dim, 0.0);
  if (had_c) {
    ConstantTensor ct = read_constant(g, n, 2);
    const std::vector<int64_t>& d = ct.dims;
    const int64_t cols = d.empty() ? 1 : d.back();
    rows = d.size() == 2 ? d[0] : 1;
    if (d.size() > 2 || (cols != 1 && cols != n_dim))
      throw Error("Gemm node '" + n.name + "': C has a shape the folder cannot rewrite");
    c.assign(rows * n_dim, 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n_dim; ++j) c[r * n_dim + j] = beta * ct.values[r * cols + (cols == 1 ? 0 : j)];
  }
  if (e.input) {  // old = P*new + Q per input feature k
    const FeatureMap& m = *e.input;
    check_size(n, m, k_dim, "input");
    for (int64_t j = 0; j < n_dim; ++j) {
      double acc = 0.0;
      for (int64_t k = 0; k < k_dim; ++k) {
        acc += m.shift[k] * at(k, j);
        at(k, j) *= m.scale[k];
      }
      for (int64_t r = 0; r < rows; ++r) c[r * n_dim + j] += acc;
    }
  }
  if (e.output) {  // new = S*old + T per output feature j
    const FeatureMap& m = *e.output;
    check_size(n, m, n_dim, "output");
    for (int64_t j = 0; j < n_dim; ++j) {
      for (int64_t k = 0; k < k_dim; ++k) at(k, j) *= m.scale[j];
      for (int64_t r = 0; r < rows; ++r) c[r * n_dim + j] = m.scale[j] * c[r * n_dim + j] + m.shift[j];
    }
  }
  const bool need_c = had_c || any_nonzero(c);
  if (!is_gemm && need_c) {  // MatMul [M,K] x [K,N] + bias is Gemm(A, B, C)
    Node& mm = g.nodes[e.node];
    mm.op_type = "Gemm";
    mm.attributes.clear();
  }
  write_parameter(g, e.node, 1, b.dims, b.values, "weight", detached);
  if (need_c) {
    write_parameter(g, e.node, 2, rows == 1 ? std::vector<int64_t>{n_dim} : std::vector<int64_t>{rows, n_dim},
                    c, "bias", detached);
  }
  Node& out = g.nodes[e.node];
  if (out.op_type == "Gemm") {
    if (out.has_attr("alpha")) out.set_attr_float("alpha", 1.0f);
    if (out.has_attr("beta")) out.set_attr_float("beta", 1.0f);
  }
}

}  // namespace

std::optional<int64_t> expressive_features(const Graph& g, const Node& n, bool input_side) {
  if (n.inputs.size() < 2) return std::nullopt;
  auto d = constant_dims(g, n.inputs[1]);
  if (!d) return std::nullopt;
  if (n.op_type == "Conv") {
    if (d->size() < 3) return std::nullopt;
    return input_side ? (*d)[1] * n.attr_int("group", 1) : (*d)[0];
  }
  if (d->size() != 2) return std::nullopt;
  const bool trans_b = n.op_type == "Gemm" && n.attr_int("transB", 0) != 0;
  if (n.op_type == "Gemm" || n.op_type == "MatMul") return input_side == trans_b ? (*d)[1] : (*d)[0];
  return std::nullopt;
}

void apply_edit(Graph& g, const ExpressiveEdit& e, std::vector<std::string>& detached) {
  const Node& n = g.nodes.at(e.node);
  if (n.op_type == "Conv") return edit_conv(g, e, detached);
  if (n.op_type == "Gemm" || n.op_type == "MatMul") return edit_matrix_product(g, e, detached);
  throw Error("node '" + n.name + "' (" + n.op_type + ") is not a layer the folder can edit");
}

}  // namespace frugal::folding
