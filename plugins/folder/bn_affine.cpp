#include "folder/bn_affine.h"

#include <cmath>
#include <sstream>

#include "folder/constants.h"

namespace frugal::folding {

bool is_batchnorm(const Node& n) {
  return n.op_type == "BatchNormalization" && (n.domain.empty() || n.domain == "ai.onnx");
}

BnReading read_batchnorm(const Graph& g, const Node& n) {
  BnReading r;
  auto refuse = [&](const std::string& why) {
    r.ok = false;
    r.reason = why;
    return r;
  };
  if (n.attr_int("training_mode", 0) != 0)
    return refuse("training_mode=1: batch statistics, not a fixed affine map");
  int outputs_used = 0;
  for (const std::string& o : n.outputs) outputs_used += o.empty() ? 0 : 1;
  if (outputs_used != 1)
    return refuse("training mode: " + std::to_string(outputs_used) +
                  " outputs (running statistics are produced), not a fixed affine map");
  if (n.has_attr("spatial") && n.attr_int("spatial", 1) == 0)
    return refuse("spatial=0: per-activation statistics are not per-channel");
  if (n.inputs.size() != 5) return refuse("has " + std::to_string(n.inputs.size()) + " inputs, expected 5");
  static const char* roles[] = {"X", "scale", "B", "mean", "var"};
  std::vector<double> p[5];
  for (int i = 1; i < 5; ++i) {
    auto c = constant_floats(g, n.inputs[i]);
    if (!c)
      return refuse(std::string("parameter ") + roles[i] + " '" + n.inputs[i] +
                    "' is not a constant float tensor");
    if (c->dims.size() != 1)
      return refuse(std::string("parameter ") + roles[i] + " '" + n.inputs[i] + "' is not a vector");
    p[i] = std::move(c->values);
  }
  const size_t channels = p[1].size();
  for (int i = 2; i < 5; ++i)
    if (p[i].size() != channels)
      return refuse(std::string("parameter ") + roles[i] + " '" + n.inputs[i] + "' has " +
                    std::to_string(p[i].size()) + " values, scale has " + std::to_string(channels));
  const double eps = n.attr_float("epsilon", 1e-5f);
  r.affine.epsilon = eps;
  r.affine.scale.resize(channels);
  r.affine.shift.resize(channels);
  for (size_t k = 0; k < channels; ++k) {
    const double denom = p[4][k] + eps;
    if (!(denom > 0.0)) {
      std::ostringstream os;
      os << "var + epsilon = " << denom << " on channel " << k << " is not positive";
      return refuse(os.str());
    }
    const double a = p[1][k] / std::sqrt(denom);
    r.affine.scale[k] = a;
    r.affine.shift[k] = p[2][k] - a * p[3][k];
  }
  r.ok = true;
  return r;
}

}  // namespace frugal::folding
