// Weights handed to a plugin by address (FRUGAL_EXT_HOST_WEIGHTS): what the
// importer reads from host memory is the graph's own bytes, and only a caller
// that asks for it honours such a reference.
#include <catch2/catch.hpp>
#include <cstring>
#include <set>

#include "frugal/model/onnx_export.h"
#include "frugal/model/onnx_import.h"
#include "frugal/model/tensor_pb.h"
#include "graphs_equal.h"
#include "profiler/cost_cache.h"
#include "test_models.h"

using namespace frugal;
using namespace frugal::test;

namespace {

// The tiny CNN with one more initializer, large enough (8 KiB) to go by address.
Graph model_with_large_weight() {
  const std::string bytes = serialize(tiny_cnn_model(3));
  Graph g = load_onnx_bytes(bytes.data(), bytes.size(), "tiny_cnn.onnx");
  std::vector<float> values(2048);
  for (int i = 0; i < 2048; ++i) values[size_t(i)] = 0.25f * float(i) - 7.0f;
  g.add_initializer("big", DType::Float32, {2048}, values.data());
  return g;
}

}  // namespace

TEST_CASE("weights by address: read back from host memory they equal the graph's bytes",
          "[onnx][host_weights]") {
  const Graph g = model_with_large_weight();
  const std::string by_bytes = save_onnx_bytes(g);
  const std::string by_address = save_onnx_bytes(g, WeightsAs::HostAddresses);
  CHECK(by_address.size() + 2048 * 4 <= by_bytes.size());  // the large weight's bytes are not in it
  const Graph back = load_onnx_bytes(by_address.data(), by_address.size(), "<create>", true);
  std::string why;
  CHECK(graphs_equal(g, back, &why));
  INFO(why);
  CHECK(back.tensor("big").data == g.tensor("big").data);
}

TEST_CASE("weights by address: each reference is reported once the graph holds its copy",
          "[onnx][host_weights]") {
  Graph g = model_with_large_weight();
  const std::string by_address = save_onnx_bytes(g, WeightsAs::HostAddresses);
  std::set<uint64_t> lent;  // the initializers of 4 KiB and more: fc_w and big
  for (const auto& [name, t] : g.tensors)
    if (t.is_initializer && t.data.size() >= 4096) lent.insert(reinterpret_cast<uintptr_t>(t.data.data()));
  REQUIRE(lent.size() == 2);
  std::vector<uint64_t> reported;
  const Graph back =
      load_onnx_bytes(by_address.data(), by_address.size(), "<create>", true, [&](uint64_t address) {
        reported.push_back(address);
        // The host may free them now: the graph holds a copy.
        for (auto& [name, t] : g.tensors)
          if (reinterpret_cast<uintptr_t>(t.data.data()) == address) std::vector<uint8_t>().swap(t.data);
      });
  CHECK(std::set<uint64_t>(reported.begin(), reported.end()) == lent);
  CHECK(reported.size() == lent.size());
  const Graph original = model_with_large_weight();
  std::string why;
  CHECK(graphs_equal(original, back, &why));
  INFO(why);
  CHECK(g.tensor("big").data.empty());  // given back and freed
}

TEST_CASE("a host-memory reference is refused where not asked for, or when its length is wrong",
          "[onnx][host_weights][errors]") {
  const Graph g = model_with_large_weight();
  const std::string by_address = save_onnx_bytes(g, WeightsAs::HostAddresses);
  CHECK(error_of([&] { load_onnx_bytes(by_address.data(), by_address.size(), "file.onnx"); }) ==
        "file.onnx: external data is not supported: tensor 'fc_w' refers to file '*frugal-host-memory*'");

  const std::string omitted = save_onnx_bytes(g, WeightsAs::Omitted);  // offset 0: nothing to read
  CHECK_THAT(
      error_of([&] { load_onnx_bytes(omitted.data(), omitted.size(), "<create>", true); }),
      Catch::Contains("tensor 'fc_w'") && Catch::Contains("a host-memory reference without an address"));

  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(by_address));
  for (onnx::TensorProto& t : *m.mutable_graph()->mutable_initializer())
    for (auto& kv : *t.mutable_external_data())
      if (kv.key() == "length") kv.set_value("4096");  // fc_w: 5120 bytes, big: 8192
  const std::string wrong = serialize(m);
  CHECK_THAT(error_of([&] { load_onnx_bytes(wrong.data(), wrong.size(), "<create>", true); }),
             Catch::Contains("tensor 'fc_w'") && Catch::Contains("4096 bytes where 5120 are needed"));
}

TEST_CASE("a model's fingerprint follows its structure and every weight byte", "[onnx][host_weights]") {
  const Graph a = model_with_large_weight();
  Graph b = model_with_large_weight();
  CHECK(model_fingerprint(a) == model_fingerprint(b));
  CHECK(model_fingerprint(a).size() == 16);
  b.tensor("big").data[4097] ^= 1;
  CHECK(model_fingerprint(a) != model_fingerprint(b));
  Graph c = model_with_large_weight();
  c.tensor("w1").data[0] ^= 1;  // a small weight, written inline
  CHECK(model_fingerprint(a) != model_fingerprint(c));
  Graph d = model_with_large_weight();
  d.nodes[2].name = "renamed";
  CHECK(model_fingerprint(a) != model_fingerprint(d));
}
