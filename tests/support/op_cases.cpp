#include "op_cases.h"

#include <cmath>
#include <sstream>

#include "reference.h"

namespace exec_test {

namespace {

using Dims = std::vector<int64_t>;

// A graph built value by value: float32 inputs with a symbolic batch, constants, nodes.
struct Builder {
  frugal::Graph g;
  Builder() { g.opsets = {{"", 13}}; }
  bool symbolic_batch = true;
  Builder& input(const std::string& name, const Dims& dims) {
    frugal::TensorDesc& t = g.tensors[name];
    t.name = name;
    t.dtype = frugal::DType::Float32;
    t.shape = frugal::make_shape(dims);
    if (symbolic_batch) t.shape[0] = frugal::Dim{-1, "N"};
    t.has_shape = true;
    g.inputs.push_back(name);
    return *this;
  }
  Builder& constant(const std::string& name, const Dims& dims, const std::vector<float>& v) {
    g.add_initializer(name, frugal::DType::Float32, dims, v.data());
    return *this;
  }
  frugal::Node& node(const std::string& op, const std::vector<std::string>& in, const std::string& out) {
    frugal::Node n;
    n.name = out;
    n.op_type = op;
    n.inputs = in;
    n.outputs = {out};
    g.nodes.push_back(n);
    return g.nodes.back();
  }
  OpCase done(const std::string& name, const std::vector<std::string>& outputs) {
    for (const std::string& o : outputs) {
      g.tensors[o].name = o;
      g.outputs.push_back(o);
    }
    return OpCase{name, g};
  }
};

std::vector<float> ramp(size_t n, float lo, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = lo + step * float(i);
  return v;
}

// x [N,3,5,4] -> Conv 3x3 (4 filters, pad 1) -> activation: fused into the conv's epilogue.
OpCase fused_activation(const std::string& op, float alpha, float beta) {
  Builder b;
  b.input("x", {2, 3, 5, 4})
      .constant("w", {4, 3, 3, 3}, ramp(108, -0.5f, 0.01f))
      .constant("b", {4}, {0.1f, -0.2f, 0.3f, 0});
  b.node("Conv", {"x", "w", "b"}, "c").set_attr_ints("pads", {1, 1, 1, 1});
  frugal::Node& a = b.node(op, {"c"}, "y");
  if (op == "HardSigmoid") {
    a.set_attr_float("alpha", alpha);
    a.set_attr_float("beta", beta);
  } else if (op == "LeakyRelu") {
    a.set_attr_float("alpha", alpha);
  }
  return b.done(op + " fused after Conv", {"y"});
}

OpCase standalone(const std::string& op) {
  Builder b;
  b.input("x", {2, 3, 4, 5});
  b.node(op, {"x"}, "y");
  return b.done(op + " alone", {"y"});
}

OpCase binary(const std::string& op, const Dims& bdims, bool constant_b) {
  Builder b;
  b.input("a", {2, 3, 4, 5});
  if (constant_b) {
    int64_t n = 1;
    for (int64_t d : bdims) n *= d;
    b.constant("b", bdims, ramp(size_t(n), -1.0f, 0.37f));
  } else {
    b.input("b", bdims);
  }
  b.node(op, {"a", "b"}, "y");
  std::ostringstream s;
  s << op << " with " << (constant_b ? "constant " : "") << "B of " << bdims.size() << " dims";
  return b.done(s.str(), {"y"});
}

// The gate of a gated convolution: mask = Cast(GreaterOrEqual(g, t), float); y = conv * mask.
OpCase gate_chain() {
  Builder b;
  b.input("x", {2, 3, 4, 4}).input("g", {2, 4, 1, 1});
  b.constant("w", {4, 3, 1, 1}, ramp(12, -0.6f, 0.1f)).constant("t", {1}, {0.0f});
  b.node("Conv", {"x", "w"}, "c");
  b.node("GreaterOrEqual", {"g", "t"}, "on");
  b.node("Cast", {"on"}, "mask").set_attr_int("to", int64_t(frugal::DType::Float32));
  b.node("Mul", {"c", "mask"}, "y");
  return b.done("GreaterOrEqual -> Cast(float) -> Mul (a conv gate)", {"y", "mask"});
}

// Where with a computed condition; also the bool output of Greater itself.
OpCase where_chain() {
  Builder b;
  b.input("x", {2, 3, 4, 5}).input("y0", {2, 3, 4, 5});
  b.constant("zero", {1, 3, 1, 1}, {0.0f, 0.5f, -0.5f});
  b.node("Greater", {"x", "zero"}, "pos");
  b.node("Where", {"pos", "x", "y0"}, "y");
  return b.done("Greater -> Where, and Greater's bool output", {"y", "pos"});
}

OpCase cast_to_bool() {
  Builder b;
  b.input("x", {2, 3, 4});
  b.constant("s", {1}, {2.0f});
  b.node("Mul", {"x", "s"}, "x2");
  b.node("Cast", {"x2"}, "nz").set_attr_int("to", int64_t(frugal::DType::Bool));
  b.node("Cast", {"nz"}, "y").set_attr_int("to", int64_t(frugal::DType::Float32));
  return b.done("Cast float -> bool -> float", {"y"});
}

OpCase resize(const std::string& coordinate_mode, const std::string& nearest_mode, const Dims& in,
              const Dims& sizes, const std::vector<float>& scales) {
  Builder b;
  b.symbolic_batch = !scales.empty();  // sizes fix the batch too: such a model is not batched
  b.input("x", in);
  std::vector<std::string> inputs{"x", "", ""};
  if (!scales.empty()) {
    b.constant("scales", {int64_t(scales.size())}, scales);
    inputs[2] = "scales";
  } else {
    b.g.add_initializer("sizes", frugal::DType::Int64, {int64_t(sizes.size())}, sizes.data());
    inputs.push_back("sizes");
  }
  frugal::Node& n = b.node("Resize", inputs, "y");
  for (const auto& kv :
       std::vector<std::pair<std::string, std::string>>{{"mode", "nearest"},
                                                        {"coordinate_transformation_mode", coordinate_mode},
                                                        {"nearest_mode", nearest_mode}}) {
    frugal::Attribute a;
    a.name = kv.first;
    a.kind = frugal::Attribute::Kind::String;
    a.s = kv.second;
    n.attributes.push_back(a);
  }
  return b.done("Resize nearest " + coordinate_mode + "/" + nearest_mode, {"y"});
}

std::string compare(const std::vector<HostTensor>& got, const frugal::RefValues& want) {
  for (const HostTensor& o : got) {
    const frugal::RefTensor& r = want.at(o.name);
    if (r.dims != o.dims) return "output '" + o.name + "' has other dims than the reference";
    for (size_t i = 0; i < r.data.size(); ++i)
      if (!(std::fabs(double(o.data[i]) - r.data[i]) <= 1e-5 + 1e-4 * std::fabs(r.data[i]))) {
        std::ostringstream s;
        s << "output '" << o.name << "' element " << i << ": got " << o.data[i] << ", want " << r.data[i];
        return s.str();
      }
  }
  return "";
}

}  // namespace

std::vector<OpCase> registry_op_cases() {
  std::vector<OpCase> v;
  for (const char* op : {"HardSigmoid", "HardSwish", "LeakyRelu", "Relu"}) v.push_back(standalone(op));
  v.push_back(fused_activation("HardSigmoid", 0.3f, 0.4f));
  v.push_back(fused_activation("HardSwish", 0, 0));
  v.push_back(fused_activation("LeakyRelu", 0.2f, 0));
  v.push_back(standalone("GlobalMaxPool"));
  for (const char* op : {"Sub", "Div", "Greater", "GreaterOrEqual"}) {
    v.push_back(binary(op, {2, 3, 4, 5}, false));
    v.push_back(binary(op, {3, 1, 1}, true));
    v.push_back(binary(op, {5}, true));
  }
  v.push_back(gate_chain());
  v.push_back(where_chain());
  v.push_back(cast_to_bool());
  v.push_back(resize("half_pixel", "round_prefer_floor", {2, 3, 4, 5}, {}, {1, 1, 2, 1.5f}));
  v.push_back(resize("asymmetric", "floor", {2, 3, 4, 5}, {}, {1, 1, 0.5f, 2}));
  v.push_back(resize("align_corners", "round_prefer_ceil", {2, 3, 4, 5}, {2, 3, 7, 3}, {}));
  v.push_back(resize("pytorch_half_pixel", "ceil", {2, 3, 6}, {}, {1, 1, 1.7f}));
  v.push_back(resize("tf_half_pixel_for_nn", "round_prefer_floor", {2, 2, 3, 3}, {}, {1, 1, 3, 3}));
  return v;
}

std::string check_op_case(const OpCase& c, const frugal_executor_api& api,
                          const std::function<std::string(PluginExecutor&)>& after_run) {
  const int64_t batch = 2;
  frugal::RefValues ref_in;
  std::vector<HostTensor> inputs;
  uint64_t seed = 7;
  for (const std::string& name : c.graph.inputs) {
    Dims dims;
    for (const frugal::Dim& d : c.graph.tensor(name).shape) dims.push_back(d.is_known() ? d.value : batch);
    size_t n = 1;
    for (int64_t d : dims) n *= size_t(d);
    const std::vector<float> v = random_floats(n, seed++, -2.0f, 2.0f);
    inputs.push_back(HostTensor{name, dims, v});
    ref_in[name] = frugal::RefTensor{dims, std::vector<double>(v.begin(), v.end())};
  }
  const frugal::RefValues want = frugal::reference_run(c.graph, ref_in);
  PluginExecutor ex(api, c.graph);
  if (!ex.ok()) return "create: " + ex.created.message;
  std::vector<HostTensor> outputs;
  Status st = ex.run(inputs, outputs);
  if (!st.ok()) return "run: " + st.message;
  std::string why = compare(outputs, want);
  if (!why.empty()) return why;
  // Again one sample per step: the batch splits exactly.
  const nlohmann::json d = ex.describe();
  if (!d.value("batched", false)) return after_run ? after_run(ex) : "";
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& layer : d["layers"])
    for (int64_t s = 0; s < batch; ++s)
      steps.push_back({{"layer", layer["name"]}, {"first", s}, {"count", 1}});
  std::vector<HostTensor> split;
  st = ex.run(inputs, split, {{"steps", steps}});
  if (!st.ok()) return "run with a plan: " + st.message;
  why = compare(split, want);
  if (!why.empty()) return "with a plan of one sample per step: " + why;
  return after_run ? after_run(ex) : "";
}

}  // namespace exec_test
