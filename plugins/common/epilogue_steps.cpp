#include "common/epilogue_steps.h"

#include <cmath>
#include <limits>
#include <string>

#include "frugal/error.h"

namespace frugal::exec {

void EpilogueSteps::add_affine(const std::vector<float>& scale, const std::vector<float>& shift) {
  if (scale.size() != shift.size()) throw Error("epilogue: scale and shift differ in length");
  if (!steps_.empty() && steps_.back().kind == Kind::Affine) {
    Step& prev = steps_.back();
    if (prev.scale.size() != scale.size())
      throw Error("epilogue: affine steps of " + std::to_string(prev.scale.size()) + " and " +
                  std::to_string(scale.size()) + " channels");
    // s2 * (s1 x + t1) + t2, merged in double so the fold costs no extra rounding step.
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

void EpilogueSteps::add_clip(float lo, float hi) {
  Step s{Kind::Clip, {}, {}};
  s.lo = lo;
  s.hi = hi;
  steps_.push_back(s);
}

int64_t EpilogueSteps::channels() const {
  for (const Step& s : steps_)
    if (s.kind == Kind::Affine) return int64_t(s.scale.size());
  return 0;
}

void batchnorm_affine(const KernelSpec& s, std::vector<float>& scale, std::vector<float>& shift) {
  const Node& n = *s.node;
  if (n.attr_int("training_mode", 0) != 0) unsupported(s, "training mode is not supported (inference only)");
  if (s.opset < 7 && n.attr_int("is_test", 0) == 0)
    unsupported(s, "training mode (is_test=0) is not supported");
  if (s.opset < 9 && n.attr_int("spatial", 1) == 0) unsupported(s, "spatial=0 is not supported");
  const std::vector<float> gamma = constant_floats(s, 1, "scale"), beta = constant_floats(s, 2, "B"),
                           mean = constant_floats(s, 3, "mean"), var = constant_floats(s, 4, "var");
  const size_t C = gamma.size();
  if (beta.size() != C || mean.size() != C || var.size() != C)
    fail(s, "scale, B, mean and var must have the same length");
  const double eps = n.attr_float("epsilon", 1e-5f);
  scale.resize(C);
  shift.resize(C);
  for (size_t c = 0; c < C; ++c) {  // gamma (x - mean) / sqrt(var + eps) + beta
    const double a = double(gamma[c]) / std::sqrt(double(var[c]) + eps);
    scale[c] = float(a);
    shift[c] = float(double(beta[c]) - a * double(mean[c]));
  }
}

namespace {

float clip_bound(const KernelSpec& s, size_t i, const char* attr, float dflt) {
  if (s.opset < 11) return s.node->attr_float(attr, dflt);
  if (!has_input(s, i)) return dflt;
  const std::vector<float> v = constant_floats(s, i, i == 1 ? "min" : "max");
  if (v.size() != 1) fail(s, std::string(i == 1 ? "min" : "max") + " must be a scalar");
  return v[0];
}

}  // namespace

void append_to_epilogue(const KernelSpec& s, EpilogueSteps& e) {
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
    const float lo = clip_bound(s, 1, "min", -std::numeric_limits<float>::infinity());
    const float hi = clip_bound(s, 2, "max", std::numeric_limits<float>::infinity());
    e.add_clip(lo, hi);
  } else if (t == "Dropout") {
    if (s.opset < 7 && n.attr_int("is_test", 0) == 0)
      unsupported(s, "training mode (is_test=0) is not supported");
    if (has_input(s, 2)) {
      const InputInfo& tm = s.inputs[2];
      if (!tm.constant)
        unsupported(s, "training_mode '" + tm.name + "' is computed at run time (inference only)");
      const std::vector<int64_t> v = tm.value->dtype == DType::Bool
                                         ? std::vector<int64_t>(tm.value->data.begin(), tm.value->data.end())
                                         : tm.value->as_int64();
      if (!v.empty() && v[0] != 0) unsupported(s, "training mode is not supported (inference only)");
    }
  } else if (t != "Identity") {
    fail(s, "not a pointwise op");
  }
}

}  // namespace frugal::exec
