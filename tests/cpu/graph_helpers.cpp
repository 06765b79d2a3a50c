#include "graph_helpers.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "cpu_plugin.h"

namespace cpu_test {

GraphMaker::GraphMaker(int64_t opset) {
  g_.name = "cpu_test";
  g_.opsets = {{"", opset}};
}

void GraphMaker::input(const std::string& name, const std::vector<int64_t>& dims, bool symbolic_batch) {
  frugal::TensorDesc t;
  t.name = name;
  t.dtype = frugal::DType::Float32;
  t.shape = frugal::make_shape(dims);
  if (symbolic_batch && !t.shape.empty()) t.shape[0] = frugal::Dim{-1, "N"};
  t.has_shape = true;
  g_.tensors[name] = t;
  g_.inputs.push_back(name);
}

void GraphMaker::constant(const std::string& name, const std::vector<int64_t>& dims,
                          const std::vector<float>& values) {
  g_.add_initializer(name, frugal::DType::Float32, dims, values.data());
}

void GraphMaker::constant_i64(const std::string& name, const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& values) {
  g_.add_initializer(name, frugal::DType::Int64, dims, values.data());
}

frugal::Node& GraphMaker::node(const std::string& op, const std::vector<std::string>& inputs,
                               const std::string& output) {
  frugal::Node n;
  n.name = output;
  n.op_type = op;
  n.inputs = inputs;
  n.outputs = {output};
  frugal::TensorDesc t;
  t.name = output;
  t.dtype = frugal::DType::Float32;
  g_.tensors[output] = t;
  g_.nodes.push_back(n);
  return g_.nodes.back();
}

void GraphMaker::output(const std::string& name) { g_.outputs.push_back(name); }

void GraphMaker::batchnorm(const std::string& in, const std::string& out, int64_t channels,
                           std::mt19937_64& rng, float scale_max, float bias_max) {
  auto vals = [&](float lo, float hi) { return random_floats(size_t(channels), rng(), lo, hi); };
  const std::string p[] = {out + "_scale", out + "_bias", out + "_mean", out + "_var"};
  constant(p[0], {channels}, vals(-scale_max, scale_max));
  constant(p[1], {channels}, vals(-bias_max, bias_max));
  constant(p[2], {channels}, vals(-0.5f, 0.5f));
  constant(p[3], {channels}, vals(0.2f, 2.0f));
  node("BatchNormalization", {in, p[0], p[1], p[2], p[3]}, out);
}

int64_t numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t x : dims) n *= x;
  return n;
}

frugal::RefTensor ref_of(const std::vector<int64_t>& dims, const std::vector<float>& v) {
  frugal::RefTensor r;
  r.dims = dims;
  r.data.assign(v.begin(), v.end());
  return r;
}

std::vector<ReferenceRun> check_against_reference(const frugal::Graph& g, const std::vector<int64_t>& xd,
                                                  std::mt19937_64& rng, double tol,
                                                  const std::string& extra_options) {
  const HostTensor x{"x", xd, random_floats(size_t(numel(xd)), rng(), -2.0f, 2.0f)};
  frugal::RefValues ref_in;
  ref_in["x"] = ref_of(xd, x.data);
  const frugal::RefTensor want = frugal::reference_run(g, ref_in).at("out");
  std::vector<ReferenceRun> runs;
  for (int threads : {1, 2}) {
    Executor ex(g, "{\"threads\": " + std::to_string(threads) + extra_options + "}");
    REQUIRE(ex.ok());
    std::vector<HostTensor> out;
    const Status st = ex.run({x}, out);
    INFO("threads " << threads << ": " << st.message);
    REQUIRE(st.ok());
    REQUIRE(out[0].dims == want.dims);
    double worst = 0.0;
    for (size_t i = 0; i < want.data.size(); ++i)
      worst = std::max(
          worst, std::fabs(double(out[0].data[i]) - want.data[i]) / (tol + tol * std::fabs(want.data[i])));
    CHECK(worst <= 1.0);
    runs.push_back({threads, ex.describe(), ex.layer_bytes(0, int(xd[0])).ws_bytes});
  }
  return runs;
}

std::vector<std::string> layer_ops(const nlohmann::json& describe) {
  std::vector<std::string> ops;
  for (const auto& L : describe["layers"]) {
    std::string s;
    for (const auto& o : L["ops"]) s += (s.empty() ? "" : "+") + o.get<std::string>();
    ops.push_back(s);
  }
  return ops;
}

}  // namespace cpu_test
