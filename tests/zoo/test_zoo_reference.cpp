// The toy networks through the float64 reference evaluator: the builder's
// shapes are the shapes the evaluator computes, samples of a batch do not mix,
// outputs are finite and O(1), and a round trip through ONNX bytes changes nothing.
#include <catch2/catch.hpp>
#include <cmath>

#include "frugal/model/onnx_export.h"
#include "frugal/model/onnx_import.h"
#include "reference.h"
#include "zoo/zoo.h"

using namespace frugal;

namespace {

const char* const kToys[] = {"toy_tiny", "toy_linear", "toy_branched", "toy_allops"};

std::vector<int64_t> input_dims(const Graph& g, int64_t batch) {
  std::vector<int64_t> d{batch};
  const Shape& s = g.tensor("input").shape;
  for (size_t i = 1; i < s.size(); ++i) d.push_back(s[i].value);
  return d;
}

// The builder's shape with N replaced by `batch`.
std::vector<int64_t> declared_dims(const TensorDesc& t, int64_t batch) {
  std::vector<int64_t> d;
  for (const Dim& x : t.shape) d.push_back(x.is_known() ? x.value : batch);
  return d;
}

RefTensor sample(const RefTensor& batch, int64_t i) {
  RefTensor s;
  s.dims = batch.dims;
  s.dims[0] = 1;
  const size_t per = batch.data.size() / static_cast<size_t>(batch.dims[0]);
  s.data.assign(batch.data.begin() + static_cast<long>(per * static_cast<size_t>(i)),
                batch.data.begin() + static_cast<long>(per * static_cast<size_t>(i + 1)));
  return s;
}

double rms(const RefTensor& t) {
  double s = 0.0;
  for (double v : t.data) s += v * v;
  return std::sqrt(s / static_cast<double>(t.data.size()));
}

}  // namespace

TEST_CASE("toy shapes declared by the zoo are the shapes the reference computes", "[zoo][reference]") {
  for (const char* name : kToys) {
    INFO(name);
    const Graph g = build_zoo_model(name);
    const RefValues all = reference_run_all(g, {{"input", random_ref_tensor(input_dims(g, 3), 1)}});
    for (const Node& n : g.nodes)
      for (const std::string& out : n.outputs) {
        INFO(out);
        CHECK(all.at(out).dims == declared_dims(g.tensor(out), 3));
      }
  }
}

TEST_CASE("toy outputs are finite, O(1), and independent per sample", "[zoo][reference]") {
  for (const char* name : kToys) {
    INFO(name);
    const Graph g = build_zoo_model(name);
    const RefTensor x = random_ref_tensor(input_dims(g, 3), 2);
    const RefTensor y = reference_run(g, {{"input", x}}).at("output");
    for (double v : y.data) CHECK(std::isfinite(v));
    CHECK(rms(y) > 0.01);
    CHECK(rms(y) < 10.0);
    for (int64_t i = 0; i < 3; ++i) {
      const RefTensor yi = reference_run(g, {{"input", sample(x, i)}}).at("output");
      CHECK(max_abs_diff(yi, sample(y, i)) < 1e-12);
    }
    // Different samples give different outputs (the network is not constant).
    CHECK(max_abs_diff(sample(y, 0), sample(y, 1)) > 1e-6);
  }
}

TEST_CASE("toy_allops ends in a softmax over its 10 classes", "[zoo][reference]") {
  const Graph g = build_zoo_model("toy_allops");
  const RefTensor y = reference_run(g, {{"input", random_ref_tensor(input_dims(g, 2), 3)}}).at("output");
  REQUIRE(y.dims == std::vector<int64_t>{2, 10});
  for (int64_t i = 0; i < 2; ++i) {
    double s = 0.0;
    for (int64_t k = 0; k < 10; ++k) s += y.data[static_cast<size_t>(i * 10 + k)];
    CHECK(s == Approx(1.0).epsilon(1e-12));
  }
}

TEST_CASE("toys survive an ONNX round trip unchanged", "[zoo][onnx]") {
  for (const char* name : kToys) {
    INFO(name);
    const Graph g = build_zoo_model(name);
    const std::string bytes = save_onnx_bytes(g);
    const Graph back = load_onnx_bytes(bytes.data(), bytes.size(), name);
    CHECK(torchvision_parameter_count(back) == torchvision_parameter_count(g));
    const RefValues in{{"input", random_ref_tensor(input_dims(g, 2), 4)}};
    CHECK(max_abs_diff(reference_run(back, in).at("output"), reference_run(g, in).at("output")) == 0.0);
  }
}
