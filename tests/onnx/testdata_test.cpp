// The ONNX backend node tests (libonnx-testdata): every model whose ops are all
// in frugal's table must import, and shape inference from the test inputs must
// give exactly the shapes (and dtypes) of the reference outputs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "frugal/error.h"
#include "frugal/model/onnx_import.h"
#include "frugal/model/ops.h"
#include "frugal/model/shape_inference.h"
#include "frugal/model/tensor_pb.h"
#include "test_models.h"

using namespace frugal;
namespace fs = std::filesystem;

namespace {

bool all_ops_known(const onnx::GraphProto& g) {
  for (const onnx::NodeProto& n : g.node())
    if (!(n.domain().empty() || n.domain() == "ai.onnx") || !op_is_known(n.op_type())) return false;
  return true;
}

bool all_tensor_typed(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& vs) {
  return std::all_of(vs.begin(), vs.end(), [](const onnx::ValueInfoProto& v) {
    return v.type().value_case() == onnx::TypeProto::kTensorType;
  });
}

// Loads a test data tensor and checks its byte size against its shape.
TensorDesc load_checked(const fs::path& p) {
  TensorDesc t = load_tensor_pb(p.string());
  INFO(p.string());
  CHECK(t.data.size() == static_cast<size_t>(element_count(known_dims(t.shape))) * dtype_size(t.dtype));
  return t;
}

// Float inputs that are parameters (Resize's roi and scales, Upsample's scales):
// like integer inputs they become constants with the test's values.
bool is_parameter(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    for (size_t k = 1; k < n.inputs.size(); ++k)
      if (n.inputs[k] == name && (n.op_type == "Resize" || n.op_type == "Upsample")) return true;
  return false;
}

// Checks every model under FRUGAL_ONNX_TESTDATA/<suite> whose ops are all known;
// returns how many. Models whose element types frugal does not hold (bfloat16,
// strings) are counted in `refused`.
int check_suite(const std::string& suite, int& pb_files, int& refused) {
  const fs::path root = fs::path(FRUGAL_ONNX_TESTDATA) / suite;
  INFO("libonnx-testdata (a Debian build dependency) at " << root.string());
  REQUIRE(fs::exists(root));
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());

  int checked = 0;
  for (const fs::path& dir : dirs) {
    const std::string model_path = (dir / "model.onnx").string();
    onnx::ModelProto proto;
    {
      std::ifstream in(model_path, std::ios::binary);
      REQUIRE(proto.ParseFromIstream(&in));
    }
    if (!all_ops_known(proto.graph())) continue;
    // Sequence / optional I/O (test_identity_sequence, ...) is outside frugal's tensor world.
    if (!all_tensor_typed(proto.graph().input()) || !all_tensor_typed(proto.graph().output())) continue;
    INFO(model_path);

    Graph g;
    try {
      g = load_onnx_file(model_path);
    } catch (const Error& e) {
      CHECK_THAT(e.what(), Catch::Contains("dtype"));  // refused for an element type, nothing else
      ++refused;
      continue;
    }
    const fs::path data = dir / "test_data_set_0";
    // Integer inputs (Reshape shapes, Unsqueeze axes, Gather indices) become
    // constants with the test's values: frugal infers shapes from constants.
    std::map<std::string, std::vector<int64_t>> dims;
    const std::vector<std::string> inputs = g.inputs;
    int file_index = 0;
    for (const onnx::ValueInfoProto& v : proto.graph().input()) {
      const fs::path pb = data / ("input_" + std::to_string(file_index++) + ".pb");
      if (g.is_initializer(v.name())) continue;
      REQUIRE(fs::exists(pb));
      TensorDesc t = load_checked(pb);
      ++pb_files;
      if (t.dtype == DType::Int64 || t.dtype == DType::Int32 || is_parameter(g, v.name())) {
        g.add_initializer(v.name(), t.dtype, known_dims(t.shape), t.data.data());
        g.inputs.erase(std::find(g.inputs.begin(), g.inputs.end(), v.name()));
      } else {
        dims[v.name()] = known_dims(t.shape);
      }
    }
    infer_shapes(g, dims);
    for (int j = 0; j < proto.graph().output_size(); ++j) {
      const fs::path pb = data / ("output_" + std::to_string(j) + ".pb");
      REQUIRE(fs::exists(pb));
      TensorDesc ref = load_checked(pb);
      ++pb_files;
      const TensorDesc& got = g.tensor(proto.graph().output(j).name());
      INFO("output " << got.name);
      CHECK(shape_to_string(got.shape) == shape_to_string(ref.shape));
      CHECK(dtype_name(got.dtype) == std::string(dtype_name(ref.dtype)));
    }
    ++checked;
  }
  return checked;
}

}  // namespace

// Counted when written (libonnx-testdata 1.12): 160 node, 56 pytorch-converted, 15 pytorch-operator.
TEST_CASE("ONNX backend tests with known ops import and infer the reference output shapes",
          "[onnx][testdata]") {
  int pb_files = 0, refused = 0;
  const int node = check_suite("node", pb_files, refused);
  const int converted = check_suite("pytorch-converted", pb_files, refused);
  const int operators = check_suite("pytorch-operator", pb_files, refused);
  WARN("backend tests with known ops imported and checked: "
       << node << " node, " << converted << " pytorch-converted, " << operators << " pytorch-operator; "
       << pb_files << " .pb files read; " << refused << " refused for their element types");
  CHECK(node >= 150);
  CHECK(converted >= 50);
  CHECK(operators >= 12);
}
