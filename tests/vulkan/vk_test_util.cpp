#include "vk_test_util.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <random>

#include "frugal/model/onnx_export.h"
#include "loader/plugin_registry.h"

namespace vk_test {

bool vulkan_required() {
  const char* v = std::getenv("FRUGAL_REQUIRE_VULKAN");
  return v && std::string(v) != "" && std::string(v) != "0";
}

Verdict verdict_for_create(frugal_status code, const std::string& message, bool required) {
  if (code == FRUGAL_OK) return Verdict::Run;
  const bool no_vulkan = code == FRUGAL_ERR_DEVICE && message.rfind("no Vulkan ", 0) == 0;
  return no_vulkan && !required ? Verdict::Skip : Verdict::Fail;
}

const std::string& no_device_reason() {
  static const std::string reason = [] {
    GraphMaker m;
    m.input("x", {-1, 2});
    m.node("Relu", "relu", {"x"}, {"y"});
    m.output("y");
    Executor ex(m.g);
    const bool required = vulkan_required();
    switch (verdict_for_create(ex.created.code, ex.created.message, required)) {
      case Verdict::Run:
        return std::string();
      case Verdict::Skip:
        std::cout << "vulkan tests: no Vulkan driver or device (" << ex.created.message
                  << "); tests that need one are skipped\n";
        return ex.created.message;
      case Verdict::Fail:
        break;
    }
    FAIL("creating a trivial vulkan executor failed"
         << (required ? " (FRUGAL_REQUIRE_VULKAN is set: no skip)" : "") << ": " << ex.created.message);
    return std::string();
  }();
  return reason;
}

uint64_t Executor::validation_errors() const {
  return describe()["vulkan"]["validation_errors"].get<uint64_t>();
}

// ---- GraphMaker --------------------------------------------------------------------

GraphMaker& GraphMaker::input(const std::string& name, const std::vector<int64_t>& dims) {
  frugal::TensorDesc d;
  d.name = name;
  d.dtype = frugal::DType::Float32;
  d.has_shape = true;
  for (int64_t v : dims) d.shape.push_back(v < 0 ? frugal::Dim{-1, "N"} : frugal::Dim{v, ""});
  g.tensors[name] = d;
  g.inputs.push_back(name);
  return *this;
}

std::string GraphMaker::weight(const std::string& name, const std::vector<int64_t>& dims, float lo,
                               float hi) {
  const std::vector<float> v =
      random_floats(size_t(frugal::element_count(dims)), seed++ * 7919u + name.size(), lo, hi);
  return floats(name, dims, v);
}

std::string GraphMaker::floats(const std::string& name, const std::vector<int64_t>& dims,
                               const std::vector<float>& values) {
  g.add_initializer(name, frugal::DType::Float32, dims, values.data());
  return name;
}

std::string GraphMaker::ints(const std::string& name, const std::vector<int64_t>& values) {
  g.add_initializer(name, frugal::DType::Int64, {int64_t(values.size())}, values.data());
  return name;
}

frugal::Node& GraphMaker::conv(const std::string& x, const std::string& out, int64_t C, int64_t M, int64_t k,
                               int64_t s, int64_t d, const std::vector<int64_t>& pads) {
  frugal::Node& n = node("Conv", "conv", {x, weight("w", {M, C, k, k}), weight("b", {M})}, {out});
  n.set_attr_ints("kernel_shape", {k, k});
  n.set_attr_ints("strides", {s, s});
  n.set_attr_ints("dilations", {d, d});
  n.set_attr_ints("pads", pads);
  return n;
}

frugal::Node& GraphMaker::node(const std::string& op, const std::string& name, std::vector<std::string> in,
                               std::vector<std::string> out) {
  frugal::Node n;
  n.op_type = op;
  n.name = name;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  for (const std::string& o : n.outputs) {
    if (o.empty()) continue;
    frugal::TensorDesc d;
    d.name = o;
    d.dtype = frugal::DType::Float32;
    g.tensors[o] = d;
  }
  g.nodes.push_back(std::move(n));
  return g.nodes.back();
}

GraphMaker& GraphMaker::output(const std::string& name) {
  g.outputs.push_back(name);
  return *this;
}

// ---- reference comparison -------------------------------------------------------------

std::map<std::string, frugal::RefTensor> random_inputs(const frugal::Graph& g, int64_t batch, uint64_t seed) {
  std::map<std::string, frugal::RefTensor> in;
  for (const std::string& name : g.inputs) {
    std::vector<int64_t> dims;
    const frugal::TensorDesc& d = g.tensor(name);
    for (size_t k = 0; k < d.shape.size(); ++k)
      dims.push_back(d.shape[k].is_known() ? d.shape[k].value : batch);
    // Values exactly representable in float32, so both sides see the same inputs.
    frugal::RefTensor t = frugal::random_ref_tensor(dims, seed++);
    for (double& v : t.data) v = double(float(v));
    in[name] = t;
  }
  return in;
}

Comparison check_against_reference(const frugal::Graph& g,
                                   const std::map<std::string, frugal::RefTensor>& inputs,
                                   const std::string& options_json, double atol, double rtol) {
  Comparison c;
  const frugal::RefValues want = frugal::reference_run(g, inputs);
  Executor ex(g, options_json);
  if (!ex.ok()) {
    c.error = "create: " + ex.created.message;
    FAIL_CHECK(c.error);
    return c;
  }
  std::vector<HostTensor> in, out;
  for (const std::string& name : g.inputs) {
    const frugal::RefTensor& r = inputs.at(name);
    HostTensor t{name, r.dims, std::vector<float>(r.data.begin(), r.data.end())};
    in.push_back(t);
  }
  for (const std::string& name : g.outputs) out.push_back(HostTensor{name, want.at(name).dims, {}});
  const Status st = ex.run(in, out, nullptr, &c.report);
  if (!st.ok()) {
    c.error = "run: " + st.message;
    FAIL_CHECK(c.error);
    return c;
  }
  c.ran = true;
  for (const HostTensor& o : out) {
    const frugal::RefTensor& w = want.at(o.name);
    REQUIRE(o.data.size() == w.data.size());
    for (size_t i = 0; i < w.data.size(); ++i) {
      const double d = std::fabs(double(o.data[i]) - w.data[i]);
      const double excess = std::isnan(o.data[i]) ? 1e30 : d - (atol + rtol * std::fabs(w.data[i]));
      c.max_abs = std::max(c.max_abs, std::isnan(o.data[i]) ? 1e30 : d);
      c.max_excess = std::max(c.max_excess, excess);
    }
  }
  c.description = ex.describe();
  CHECK(c.max_excess <= 0.0);
  CHECK(c.description["vulkan"]["validation_errors"].get<uint64_t>() == 0);
  return c;
}

std::vector<HostTensor> host_inputs(const std::map<std::string, frugal::RefTensor>& in) {
  std::vector<HostTensor> v;
  for (const auto& kv : in)
    v.push_back(HostTensor{kv.first, kv.second.dims,
                           std::vector<float>(kv.second.data.begin(), kv.second.data.end())});
  return v;
}

double max_diff(const std::vector<float>& got, const frugal::RefTensor& want) {
  REQUIRE(got.size() == want.data.size());
  double d = 0;
  for (size_t i = 0; i < got.size(); ++i)
    d = std::max(d, std::isnan(got[i]) ? 1e30 : std::fabs(double(got[i]) - want.data[i]));
  return d;
}

// x [N,3,12,12] -> conv(8)+BN+Relu -> maxpool 2 -> conv(4) -> flatten -> gemm(10): a chain.
frugal::Graph chain_model() {
  GraphMaker m;
  m.input("x", {-1, 3, 12, 12});
  frugal::Node& c1 =
      m.node("Conv", "conv1", {"x", m.weight("w1", {8, 3, 3, 3}, -0.3f, 0.3f), m.weight("b1", {8})}, {"c1"});
  c1.set_attr_ints("pads", {1, 1, 1, 1});
  m.node("BatchNormalization", "bn1",
         {"c1", m.weight("s", {8}, 0.5f, 1.5f), m.weight("t", {8}), m.weight("mu", {8}),
          m.weight("var", {8}, 0.5f, 2.0f)},
         {"n1"});
  m.node("Relu", "relu1", {"n1"}, {"r1"});
  frugal::Node& p = m.node("MaxPool", "pool", {"r1"}, {"p"});
  p.set_attr_ints("kernel_shape", {2, 2});
  p.set_attr_ints("strides", {2, 2});
  m.node("Conv", "conv2", {"p", m.weight("w2", {4, 8, 3, 3}, -0.3f, 0.3f)}, {"c2"});
  m.node("Flatten", "flat", {"c2"}, {"f"});
  m.node("Gemm", "fc", {"f", m.weight("wf", {10, 64}, -0.2f, 0.2f), m.weight("bf", {10})}, {"y"})
      .set_attr_int("transB", 1);
  m.output("y");
  return m.g;
}

}  // namespace vk_test
