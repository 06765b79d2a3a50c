// The op table, the epilogue, the weight packer and the helpers the kernel
// factories share.
#include "vk_kernel.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "frugal/plugin_sdk.hpp"
#include "util/error.h"

namespace frugal::vk {

std::string KernelSpec::label() const { return node->op_type + " node '" + node->name + "'"; }

// ---- WeightPacker ----------------------------------------------------------------

void WeightPacker::begin_block() {
  while (words_.size() % align_words_) words_.push_back(0);
  block_start_ = words_.size();
}

uint32_t WeightPacker::add_floats(const std::vector<float>& v) {
  const uint32_t at = uint32_t(words_.size() - block_start_);
  const size_t old = words_.size();
  words_.resize(old + v.size());
  if (!v.empty()) std::memcpy(words_.data() + old, v.data(), v.size() * 4);
  return at;
}

uint32_t WeightPacker::add_words(const std::vector<uint32_t>& v) {
  const uint32_t at = uint32_t(words_.size() - block_start_);
  words_.insert(words_.end(), v.begin(), v.end());
  return at;
}

// ---- Epilogue --------------------------------------------------------------------

void Epilogue::add_affine(const std::vector<float>& scale, const std::vector<float>& shift) {
  if (scale.size() != shift.size()) throw Error("epilogue: scale and shift differ in length");
  if (!steps_.empty() && steps_.back().kind == Kind::Affine) {
    Step& prev = steps_.back();
    if (prev.scale.size() != scale.size())
      throw Error("epilogue: affine steps of " + std::to_string(prev.scale.size()) + " and " + std::to_string(scale.size()) + " channels");
    // s2 * (s1 x + t1) + t2, merged in double (as the cpu executor does).
    for (size_t c = 0; c < scale.size(); ++c) {
      const double s = double(scale[c]) * prev.scale[c];
      const double t = double(scale[c]) * prev.shift[c] + shift[c];
      prev.scale[c] = float(s);
      prev.shift[c] = float(t);
    }
    return;
  }
  steps_.push_back(Step{Kind::Affine, scale, shift});
}

void Epilogue::add_clip(float lo, float hi) {
  Step s{Kind::Clip, {}, {}};
  s.lo = lo;
  s.hi = hi;
  steps_.push_back(s);
}

bool Epilogue::has_room(bool affine) const {
  if (affine && !steps_.empty() && steps_.back().kind == Kind::Affine) return true;
  return steps_.size() < kMaxSteps;
}

int64_t Epilogue::channels() const {
  for (const Step& s : steps_)
    if (s.kind == Kind::Affine) return int64_t(s.scale.size());
  return 0;
}

void Epilogue::pack(WeightPacker& p) {
  for (Step& s : steps_) {
    if (s.kind != Kind::Affine) continue;
    s.offset = p.add_floats(s.scale);
    p.add_floats(s.shift);
  }
}

void Epilogue::specialize(SpecConstants& sc, uint32_t channels) const {
  sc.set(40, channels);
  for (size_t k = 0; k < kMaxSteps; ++k) {
    const uint32_t i = uint32_t(k);
    if (k >= steps_.size()) {
      sc.set(41 + i, 0);
      continue;
    }
    const Step& s = steps_[k];
    if (s.kind == Kind::Affine && s.scale.size() != channels)
      throw Error("internal: epilogue of " + std::to_string(s.scale.size()) + " channels on an output of " + std::to_string(channels));
    sc.set(41 + i, uint32_t(s.kind));
    sc.set(45 + i, s.offset);
    sc.set_float(49 + i, s.lo);
    sc.set_float(53 + i, s.hi);
  }
}

// ---- helpers -----------------------------------------------------------------------

void fail(const KernelSpec& s, const std::string& msg) { throw Error(s.label() + ": " + msg); }

void unsupported(const KernelSpec& s, const std::string& msg) {
  throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, s.label() + ": " + msg);
}

bool has_input(const KernelSpec& s, size_t i) { return i < s.inputs.size() && s.inputs[i].present; }

const InputInfo& required_input(const KernelSpec& s, size_t i, const char* role) {
  if (!has_input(s, i)) fail(s, std::string(role) + " (input " + std::to_string(i) + ") is missing");
  return s.inputs[i];
}

std::vector<float> constant_floats(const KernelSpec& s, size_t i, const char* role) {
  const InputInfo& in = required_input(s, i, role);
  if (!in.constant)
    unsupported(s, std::string(role) + " '" + in.name + "' is computed at run time; the vulkan executor needs it constant");
  if (in.value->dtype != DType::Float32 && in.value->dtype != DType::Float64)
    fail(s, std::string(role) + " '" + in.name + "' has dtype " + dtype_name(in.value->dtype) + ", expected float");
  return in.value->as_float();
}

std::vector<int64_t> constant_ints(const KernelSpec& s, size_t i, const char* role) {
  const InputInfo& in = required_input(s, i, role);
  if (!in.constant)
    unsupported(s, std::string(role) + " '" + in.name + "' is computed at run time; the vulkan executor needs it constant");
  if (in.value->dtype != DType::Int64 && in.value->dtype != DType::Int32)
    fail(s, std::string(role) + " '" + in.name + "' has dtype " + dtype_name(in.value->dtype) + ", expected int64");
  return in.value->as_int64();
}

void require_float_activation(const KernelSpec& s, size_t i, const char* role) {
  const InputInfo& in = required_input(s, i, role);
  if (in.constant) unsupported(s, std::string(role) + " '" + in.name + "' is a constant; the vulkan executor expects an activation");
  if (in.dtype != DType::Float32)
    unsupported(s, std::string(role) + " '" + in.name + "' has dtype " + dtype_name(in.dtype) + " (float32 only)");
}

int64_t product(const Dims& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < d.size() && i < to; ++i) p *= d[i];
  return p;
}

std::string dims_string(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

int64_t normalize_axis(const KernelSpec& s, int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    fail(s, std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

Dims at_call(const Dims& d, const LayerIO& io) {
  Dims r = d;
  if (io.batched && !r.empty()) r[0] = io.n;
  return r;
}

uint32_t u32(int64_t v, const KernelSpec& s, const char* what) {
  if (v < 0 || v > int64_t(std::numeric_limits<uint32_t>::max()))
    unsupported(s, std::string(what) + " = " + std::to_string(v) + " does not fit the shaders' 32-bit indices");
  return uint32_t(v);
}

int64_t Kernel::samples_per_dispatch(const Recorder& r, const LayerIO& io, const std::vector<uint64_t>& sample_bytes,
                                     const std::string& label) const {
  const int64_t n = count(io);
  if (!io.batched) return std::max<int64_t>(1, n);
  const uint64_t limit = r.max_binding_bytes(), slack = r.device().binding_alignment();
  int64_t g = n;
  for (uint64_t b : sample_bytes) {
    if (b == 0) continue;
    if (b + slack > limit)
      throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, label + ": one sample's operand of " + std::to_string(b) +
                                                     " bytes does not fit one storage-buffer binding of this device (" +
                                                     std::to_string(limit) + " bytes)");
    g = std::min<int64_t>(g, int64_t((limit - slack) / b));
  }
  return std::max<int64_t>(1, g);
}

// ---- epilogue ops --------------------------------------------------------------------

namespace {

float clip_bound(const KernelSpec& s, size_t i, const char* attr, float dflt) {
  if (s.opset < 11) return s.node->attr_float(attr, dflt);
  if (!has_input(s, i)) return dflt;
  const std::vector<float> v = constant_floats(s, i, i == 1 ? "min" : "max");
  if (v.size() != 1) fail(s, std::string(i == 1 ? "min" : "max") + " must be a scalar");
  return v[0];
}

void batchnorm_affine(const KernelSpec& s, std::vector<float>& scale, std::vector<float>& shift) {
  const Node& n = *s.node;
  if (n.attr_int("training_mode", 0) != 0) unsupported(s, "training mode is not supported (inference only)");
  if (s.opset < 7 && n.attr_int("is_test", 0) == 0) unsupported(s, "training mode (is_test=0) is not supported");
  if (s.opset < 9 && n.attr_int("spatial", 1) == 0) unsupported(s, "spatial=0 is not supported");
  const std::vector<float> gamma = constant_floats(s, 1, "scale"), beta = constant_floats(s, 2, "B"),
                           mean = constant_floats(s, 3, "mean"), var = constant_floats(s, 4, "var");
  const size_t C = gamma.size();
  if (beta.size() != C || mean.size() != C || var.size() != C) fail(s, "scale, B, mean and var must have the same length");
  const double eps = n.attr_float("epsilon", 1e-5f);
  scale.resize(C);
  shift.resize(C);
  for (size_t c = 0; c < C; ++c) {  // gamma (x - mean) / sqrt(var + eps) + beta
    const double a = double(gamma[c]) / std::sqrt(double(var[c]) + eps);
    scale[c] = float(a);
    shift[c] = float(double(beta[c]) - a * double(mean[c]));
  }
}

}  // namespace

void append_to_epilogue(const KernelSpec& s, Epilogue& e) {
  const Node& n = *s.node;
  const std::string& t = n.op_type;
  if (t == "BatchNormalization") {
    std::vector<float> scale, shift;
    batchnorm_affine(s, scale, shift);
    e.add_affine(scale, shift);
  } else if (t == "Relu") {
    e.add_relu();
  } else if (t == "Sigmoid") {
    e.add_sigmoid();
  } else if (t == "Clip") {
    e.add_clip(clip_bound(s, 1, "min", -std::numeric_limits<float>::infinity()),
               clip_bound(s, 2, "max", std::numeric_limits<float>::infinity()));
  } else if (t == "Dropout") {
    if (s.opset < 7 && n.attr_int("is_test", 0) == 0) unsupported(s, "training mode (is_test=0) is not supported");
    if (has_input(s, 2)) {
      const InputInfo& tm = s.inputs[2];
      if (!tm.constant) unsupported(s, "training_mode '" + tm.name + "' is computed at run time (inference only)");
      const std::vector<int64_t> v = tm.value->dtype == DType::Bool
                                         ? std::vector<int64_t>(tm.value->data.begin(), tm.value->data.end())
                                         : tm.value->as_int64();
      if (!v.empty() && v[0] != 0) unsupported(s, "training mode is not supported (inference only)");
    }
  } else if (t != "Identity") {
    fail(s, "not a pointwise op");
  }
}

// ---- the op table ----------------------------------------------------------------------

namespace {

using Factory = std::unique_ptr<Kernel> (*)(const KernelSpec&);

const std::map<std::string, Factory>& table() {
  static const std::map<std::string, Factory> t = {
      {"Conv", &make_conv},
      {"MaxPool", &make_pool},
      {"AveragePool", &make_pool},
      {"GlobalAveragePool", &make_pool},
      {"GlobalMaxPool", &make_pool},
      {"Add", &make_binary},
      {"Sub", &make_binary},
      {"Mul", &make_binary},
      {"Div", &make_binary},
      {"BatchNormalization", &make_pointwise},
      {"Relu", &make_pointwise},
      {"Clip", &make_pointwise},
      {"Sigmoid", &make_pointwise},
      {"Identity", &make_copy},
      {"Dropout", &make_copy},
      {"LRN", &make_lrn},
      {"Gemm", &make_matmul},
      {"MatMul", &make_matmul},
      {"Flatten", &make_copy},
      {"Reshape", &make_copy},
      {"Concat", &make_copy},
      {"Softmax", &make_softmax},
  };
  return t;
}

}  // namespace

bool op_is_supported(const std::string& op_type) { return table().count(op_type) != 0; }

std::vector<std::string> supported_ops() {
  std::vector<std::string> v;
  for (const auto& kv : table()) v.push_back(kv.first);
  return v;
}

std::unique_ptr<Kernel> make_kernel(const KernelSpec& s) {
  auto it = table().find(s.node->op_type);
  if (it == table().end()) unsupported(s, "op " + s.node->op_type + " is not supported");
  return it->second(s);
}

}  // namespace frugal::vk
