// The host's own graph IR: what an ONNX model becomes after import, what every
// plugin works on, and what is exported back to ONNX. Plain value types so that a
// Graph can be copied, compared and edited without ceremony.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace frugal {

// Element types. Values equal ONNX TensorProto.DataType so conversion is a cast.
enum class DType : int32_t {
  Undefined = 0,
  Float32 = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Float64 = 11,
  UInt32 = 12,
  UInt64 = 13,
};

// Bytes per element, 0 for types without a fixed size (String, Undefined).
size_t dtype_size(DType t);
const char* dtype_name(DType t);

// A dimension: a fixed size, or symbolic (value < 0) with an optional name
// such as "N" for the batch.
struct Dim {
  int64_t value = -1;
  std::string symbol;
  bool is_known() const { return value >= 0; }
  bool operator==(const Dim& o) const { return value == o.value && symbol == o.symbol; }
};
using Shape = std::vector<Dim>;

// Shape helpers. known_dims() throws when any dimension is symbolic.
Shape make_shape(const std::vector<int64_t>& dims);
std::vector<int64_t> known_dims(const Shape& s);
bool shape_is_known(const Shape& s);
int64_t element_count(const std::vector<int64_t>& dims);
std::string shape_to_string(const Shape& s);

// A named tensor: graph input/output, intermediate value, or initializer
// (constant weights; `data` holds the raw little-endian bytes, exactly as in
// ONNX raw_data, so round trips are bit-exact).
struct TensorDesc {
  std::string name;
  DType dtype = DType::Float32;
  Shape shape;  // empty with has_shape=false: not known yet
  bool has_shape = false;
  bool is_initializer = false;
  std::vector<uint8_t> data;  // initializer bytes (size = count * dtype_size)
  std::string doc;

  // Typed views of initializer data (checked: throw on dtype mismatch).
  const float* f32() const;
  float* f32();
  std::vector<int64_t> as_int64() const;  // Int64/Int32 initializers
  std::vector<float> as_float() const;    // Float32/Float64 initializers
};

struct Attribute {
  enum class Kind { Float, Int, String, Tensor, Floats, Ints, Strings };
  std::string name;
  Kind kind = Kind::Int;
  float f = 0.0f;
  int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::optional<TensorDesc> t;  // Kind::Tensor
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;               // "" = ai.onnx
  std::vector<std::string> inputs;  // "" marks an omitted optional input
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;  // in file order (kept for round trips)
  std::string doc;

  const Attribute* attr(const std::string& n) const;
  bool has_attr(const std::string& n) const { return attr(n) != nullptr; }
  int64_t attr_int(const std::string& n, int64_t dflt) const;
  float attr_float(const std::string& n, float dflt) const;
  std::string attr_string(const std::string& n, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const std::string& n, const std::vector<int64_t>& dflt) const;
  void set_attr_int(const std::string& n, int64_t v);
  void set_attr_float(const std::string& n, float v);
  void set_attr_ints(const std::string& n, const std::vector<int64_t>& v);
};

// Model-level metadata kept so that export reproduces what import read.
struct OpsetImport {
  std::string domain;
  int64_t version = 0;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;                    // topological order (import sorts)
  std::map<std::string, TensorDesc> tensors;  // every named value, incl. initializers
  std::vector<std::string> inputs;            // real inputs (initializers excluded)
  std::vector<std::string> outputs;
  std::vector<std::string> initializer_order;  // file order, for export

  // Model-level fields (ModelProto).
  int64_t ir_version = 8;
  std::vector<OpsetImport> opsets{{"", 13}};
  std::string producer_name = "frugal";
  std::string producer_version;
  std::string model_doc;
  // Further ModelProto/GraphProto fields, kept only so that export reproduces import.
  std::string graph_doc;
  std::string model_domain;
  int64_t model_version = 0;
  std::vector<std::pair<std::string, std::string>> metadata_props;

  const TensorDesc& tensor(const std::string& n) const;  // throws if absent
  TensorDesc& tensor(const std::string& n);
  bool has_tensor(const std::string& n) const { return tensors.count(n) != 0; }
  bool is_initializer(const std::string& n) const;

  // Index of the node producing value `n`, or -1 (graph input / initializer).
  int producer(const std::string& n) const;
  // Indices of nodes reading value `n`, in node order.
  std::vector<int> consumers(const std::string& n) const;
  int node_index(const std::string& node_name) const;  // -1 if absent

  // Sorts nodes topologically (stable: keeps file order where possible);
  // throws with the names of nodes on a cycle or reading undefined values.
  void topological_sort();

  // Adds an initializer (replacing a tensor of that name).
  TensorDesc& add_initializer(const std::string& n, DType t, const std::vector<int64_t>& dims,
                              const void* bytes);
  // A name not yet used by any tensor or node, derived from `base`.
  std::string unique_name(const std::string& base) const;
  // Drops initializers and value infos that no node reads and that are not outputs.
  void remove_unused_tensors();

  // Total number of parameters (elements of float initializers).
  int64_t parameter_count() const;
};

}  // namespace frugal
