#include "common/kernel_spec.h"

#include <algorithm>

#include "frugal/error.h"
#include "frugal/plugin_sdk.hpp"

namespace frugal::exec {

std::string KernelSpec::label() const { return node->op_type + " node '" + node->name + "'"; }

void fail(const KernelSpec& s, const std::string& msg) { throw Error(s.label() + ": " + msg); }

void unsupported(const KernelSpec& s, const std::string& msg) {
  throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, s.label() + ": " + msg);
}

bool has_input(const KernelSpec& s, size_t i) { return i < s.inputs.size() && s.inputs[i].present; }

const InputInfo& required_input(const KernelSpec& s, size_t i, const char* role) {
  if (!has_input(s, i)) fail(s, std::string("missing input ") + std::to_string(i) + " (" + role + ")");
  return s.inputs[i];
}

std::vector<float> constant_floats(const KernelSpec& s, size_t i, const char* role) {
  const InputInfo& in = required_input(s, i, role);
  if (!in.constant)
    unsupported(s, std::string(role) + " '" + in.name + "' is computed at run time; the " + s.executor +
                       " executor needs it as a constant (initializer)");
  if (in.value->dtype != DType::Float32 && in.value->dtype != DType::Float64)
    unsupported(s, std::string(role) + " '" + in.name + "' has dtype " + dtype_name(in.value->dtype) +
                       "; the " + s.executor + " executor runs float32 only");
  return in.value->as_float();
}

std::vector<int64_t> constant_ints(const KernelSpec& s, size_t i, const char* role) {
  const InputInfo& in = required_input(s, i, role);
  if (!in.constant)
    unsupported(s, std::string(role) + " '" + in.name + "' is computed at run time; the " + s.executor +
                       " executor needs it as a constant (initializer)");
  if (in.value->dtype != DType::Int64 && in.value->dtype != DType::Int32)
    fail(s, std::string(role) + " '" + in.name + "' must be int64, not " + dtype_name(in.value->dtype));
  return in.value->as_int64();
}

void require_float_activation(const KernelSpec& s, size_t i, const char* role) {
  const InputInfo& in = required_input(s, i, role);
  if (in.dtype != DType::Float32)
    unsupported(s, std::string(role) + " '" + in.name + "' has dtype " + dtype_name(in.dtype) + "; the " +
                       s.executor + " executor runs float32 only");
}

int64_t product(const Dims& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < std::min(to, d.size()); ++i) p *= d[i];
  return p;
}

std::string dims_string(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

int64_t normalize_axis(const KernelSpec& s, int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    fail(s, std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

}  // namespace frugal::exec
