#include "common/epilogue_steps.h"

#include <cmath>
#include <limits>
#include <string>

#include "frugal/error.h"
#include "frugal/model/ops/normalization.h"
#include "frugal/model/ops/shape_ops.h"

namespace frugal::exec {

void EpilogueSteps::add_affine(const std::vector<float>& scale, const std::vector<float>& shift) {
  if (scale.size() != shift.size()) throw Error("epilogue: scale and shift differ in length");
  if (!steps_.empty() && steps_.back().kind == kAffine) {
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
  steps_.push_back(Step{kAffine, scale, shift});
}

void EpilogueSteps::add_activation(ops::ActivationKind kind, float a, float b) {
  Step s{int(kind), {}, {}};
  s.a = a;
  s.b = b;
  steps_.push_back(s);
}

int64_t EpilogueSteps::channels() const {
  for (const Step& s : steps_)
    if (s.kind == kAffine) return int64_t(s.scale.size());
  return 0;
}

void batchnorm_affine(const KernelSpec& s, std::vector<float>& scale, std::vector<float>& shift) {
  const ops::BatchNormalization& op = s.op_as<ops::BatchNormalization>();
  if (op.training_mode) unsupported(s, "training mode is not supported (inference only)");
  if (!op.is_test) unsupported(s, "training mode (is_test=0) is not supported");
  if (!op.spatial) unsupported(s, "spatial=0 is not supported");
  const std::vector<float> gamma = constant_floats(s, 1, "scale"), beta = constant_floats(s, 2, "B"),
                           mean = constant_floats(s, 3, "mean"), var = constant_floats(s, 4, "var");
  const size_t C = gamma.size();
  if (beta.size() != C || mean.size() != C || var.size() != C)
    fail(s, "scale, B, mean and var must have the same length");
  const double eps = op.epsilon;
  scale.resize(C);
  shift.resize(C);
  for (size_t c = 0; c < C; ++c) {  // gamma (x - mean) / sqrt(var + eps) + beta
    const double a = double(gamma[c]) / std::sqrt(double(var[c]) + eps);
    scale[c] = float(a);
    shift[c] = float(double(beta[c]) - a * double(mean[c]));
  }
}

namespace {

// Clip's bound i (1: min, 2: max): the attribute the op read before opset 11, a
// constant scalar input since.
float clip_bound(const KernelSpec& s, size_t i, float attribute) {
  if (s.opset < 11 || !has_input(s, i)) return attribute;
  const std::vector<float> v = constant_floats(s, i, i == 1 ? "min" : "max");
  if (v.size() != 1) fail(s, std::string(i == 1 ? "min" : "max") + " must be a scalar");
  return v[0];
}

void check_dropout(const KernelSpec& s) {
  if (!s.op_as<ops::Dropout>().is_test) unsupported(s, "training mode (is_test=0) is not supported");
  if (!has_input(s, 2)) return;
  const InputInfo& tm = s.inputs[2];
  if (!tm.constant)
    unsupported(s, "training_mode '" + tm.name + "' is computed at run time (inference only)");
  const std::vector<int64_t> v = tm.value->dtype == DType::Bool
                                     ? std::vector<int64_t>(tm.value->data.begin(), tm.value->data.end())
                                     : tm.value->as_int64();
  if (!v.empty() && v[0] != 0) unsupported(s, "training mode is not supported (inference only)");
}

}  // namespace

bool joins_epilogue(const Op& op) {
  return dynamic_cast<const ops::Activation*>(&op) || dynamic_cast<const ops::BatchNormalization*>(&op);
}

bool is_passthrough(const Op& op) {
  return dynamic_cast<const ops::Identity*>(&op) || dynamic_cast<const ops::Dropout*>(&op);
}

void append_to_epilogue(const KernelSpec& s, EpilogueSteps& e) {
  if (const auto* a = dynamic_cast<const ops::Activation*>(s.op)) {
    const bool clip = a->kind == ops::ActivationKind::Clip;
    e.add_activation(a->kind, clip ? clip_bound(s, 1, a->alpha) : a->alpha,
                     clip ? clip_bound(s, 2, a->beta) : a->beta);
  } else if (dynamic_cast<const ops::BatchNormalization*>(s.op)) {
    std::vector<float> scale, shift;
    batchnorm_affine(s, scale, shift);
    e.add_affine(scale, shift);
  } else if (dynamic_cast<const ops::Dropout*>(s.op)) {
    check_dropout(s);
  } else if (!dynamic_cast<const ops::Identity*>(s.op)) {
    fail(s, "not a pointwise op");
  }
}

bool EpilogueSteps::has_residual() const {
  for (const Step& s : steps_)
    if (s.kind == kResidual) return true;
  return false;
}

}  // namespace frugal::exec
