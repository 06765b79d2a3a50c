#include "folder/affine_ops.h"

#include <algorithm>
#include <optional>
#include <sstream>

#include "folder/constants.h"
#include "frugal/model/ops.h"

namespace frugal::folding {

namespace {

std::string ints_str(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  os << "]";
  return os.str();
}

bool default_domain(const Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }

bool output_used(const Graph& g, const Node& n, size_t i) {
  if (i >= n.outputs.size() || n.outputs[i].empty()) return false;
  return use_count(g, n.outputs[i]) > 0;
}

OpInteraction non_affine(const Node& n, const std::string& why) {
  return {Interaction::NonAffine, describe_node(n) + ", which " + why};
}

OpInteraction classify_conv(const Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || !is_float32_constant(g, n.inputs[1]))
    return non_affine(n, "has weights that are not a float32 constant");
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && !is_float32_constant(g, n.inputs[2]))
    return non_affine(n, "has a bias that is not a float32 constant");
  return {Interaction::Expressive, ""};
}

OpInteraction classify_gemm(const Graph& g, const Node& n) {
  if (n.attr_int("transA", 0) != 0)
    return non_affine(n, "has transA=1 (its input's axis 1 is not the feature axis)");
  if (n.inputs.size() < 2 || !is_float32_constant(g, n.inputs[1]))
    return non_affine(n, "has a B matrix that is not a float32 constant");
  if (n.inputs.size() > 2 && !n.inputs[2].empty() && !is_float32_constant(g, n.inputs[2]))
    return non_affine(n, "has a C that is not a float32 constant");
  return {Interaction::Expressive, ""};
}

OpInteraction classify_matmul(const Graph& g, const Node& n, const ShapeMap& shapes) {
  if (n.inputs.size() != 2 || !is_float32_constant(g, n.inputs[1]))
    return non_affine(n, "has a right operand that is not a float32 constant");
  auto a = shape_of(shapes, n.inputs[0]);
  auto b = constant_dims(g, n.inputs[1]);
  if (!a || !b || a->size() != 2 || b->size() != 2)
    return non_affine(n, "is not a 2-D product (features are on axis 1 only for [M,K] x [K,N])");
  return {Interaction::Expressive, ""};
}

OpInteraction classify_average_pool(const Node& n, const ShapeMap& shapes) {
  if (n.attr_int("count_include_pad", 0) == 0) return {Interaction::Commutes, ""};
  std::string pad = zero_padding(n, shapes);
  if (pad.empty() && n.attr_int("ceil_mode", 0) != 0) pad = "ceil_mode=1";
  if (pad.empty()) return {Interaction::Commutes, ""};
  return {Interaction::CommutesScaleOnly, describe_node(n) + " averages zero padding (" + pad +
                                              ", count_include_pad=1), so a non-zero shift does not pass"};
}

OpInteraction classify_pad(const Graph& g, const Node& n) {
  const std::string mode = n.attr_string("mode", "constant");
  std::vector<int64_t> pads;
  if (n.has_attr("pads")) {
    pads = n.attr_ints("pads", {});
  } else if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    auto it = g.tensors.find(n.inputs[1]);
    if (it == g.tensors.end() || !it->second.is_initializer)
      return non_affine(n, "has pads that are not a constant");
    pads = it->second.as_int64();
  }
  if (n.inputs.size() > 3 && !n.inputs[3].empty()) return non_affine(n, "pads selected axes only");
  const size_t r = pads.size() / 2;
  if (r < 2 || pads[0] != 0 || pads[1] != 0 || pads[r] != 0 || pads[r + 1] != 0)
    return non_affine(n, "pads the batch or channel axis");
  if (mode == "reflect" || mode == "edge") return {Interaction::Commutes, ""};
  if (mode != "constant") return non_affine(n, "has pad mode '" + mode + "'");
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    auto v = constant_floats(g, n.inputs[2]);
    if (!v || v->values.size() != 1 || v->values[0] != 0.0)
      return non_affine(n, "pads with a non-zero constant");
  }
  return {Interaction::CommutesScaleOnly, describe_node(n) + " pads with zeros (pads=" + ints_str(pads) +
                                              "), so a non-zero shift does not pass"};
}

// The int64 values of initializer `name`, if it is one.
std::optional<std::vector<int64_t>> constant_ints(const Graph& g, const std::string& name) {
  auto it = g.tensors.find(name);
  if (it == g.tensors.end() || !it->second.is_initializer ||
      (it->second.dtype != DType::Int64 && it->second.dtype != DType::Int32))
    return std::nullopt;
  return it->second.as_int64();
}

bool present(const Node& n, size_t i) { return i < n.inputs.size() && !n.inputs[i].empty(); }

// Resize / Upsample in mode nearest copy pixels, so they commute with any
// per-channel map, provided the batch and channel axes keep their sizes:
// scales[0] = scales[1] = 1, or sizes[0..1] equal to the input's (known) dims.
// Linear and cubic modes interpolate; the folder does not fold through them.
OpInteraction classify_resize(const Graph& g, const Node& n, const ShapeMap& shapes) {
  const std::string mode = n.attr_string("mode", "nearest");
  if (mode != "nearest")
    return non_affine(n, "interpolates (mode '" + mode + "'); the folder folds through mode 'nearest' only");
  if (n.attr_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
    return non_affine(n, "extrapolates with a constant (tf_crop_and_resize)");
  if (n.has_attr("axes") || n.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")
    return non_affine(n, "uses axes or keep_aspect_ratio_policy (opset 18), which the folder does not check");
  const bool old_form = n.op_type == "Upsample" || n.inputs.size() == 2;  // X, scales
  std::vector<double> scales;
  if (const Attribute* a = n.attr("scales")) scales.assign(a->floats.begin(), a->floats.end());
  const size_t scales_at = old_form ? 1 : 2;
  if (present(n, scales_at)) {
    auto c = constant_floats(g, n.inputs[scales_at]);
    if (!c) return non_affine(n, "has scales that are not a float constant");
    scales = c->values;
  }
  if (!old_form && present(n, 3) && scales.empty()) {
    auto sizes = constant_ints(g, n.inputs[3]);
    if (!sizes) return non_affine(n, "has sizes that are not a constant");
    auto x = shape_of(shapes, n.inputs[0]);
    if (!x) return non_affine(n, "has sizes, and the shape of its input '" + n.inputs[0] + "' is unknown");
    if (sizes->size() != x->size() || x->size() < 2 || (*sizes)[0] != (*x)[0] || (*sizes)[1] != (*x)[1])
      return non_affine(n, "resizes the batch or channel axis (sizes=" + ints_str(*sizes) + ")");
    return {Interaction::Commutes, ""};
  }
  if (scales.size() < 2 || scales[0] != 1.0 || scales[1] != 1.0) {
    std::ostringstream os;
    for (size_t i = 0; i < scales.size(); ++i) os << (i ? "," : "") << scales[i];
    return non_affine(n, "resizes the batch or channel axis (scales=[" + os.str() + "])");
  }
  return {Interaction::Commutes, ""};
}

}  // namespace

const char* interaction_name(Interaction i) {
  switch (i) {
    case Interaction::Expressive:
      return "expressive";
    case Interaction::Commutes:
      return "commutes";
    case Interaction::CommutesIfScaleNonNegative:
      return "commutes if scale >= 0";
    case Interaction::CommutesScaleOnly:
      return "commutes with the scale only";
    case Interaction::Sums:
      return "sums (shift into one input)";
    case Interaction::ChannelRemap:
      return "channel remap";
    case Interaction::NonAffine:
      return "non-affine";
  }
  return "?";
}

std::string describe_node(const Node& n) { return "'" + n.name + "' (" + n.op_type + ")"; }

std::vector<size_t> data_inputs(const Node& n) {
  if (n.op_type == "Add" || n.op_type == "Concat") {
    std::vector<size_t> all;
    for (size_t i = 0; i < n.inputs.size(); ++i) all.push_back(i);
    return all;
  }
  return {0};
}

OpInteraction classify(const Graph& g, const Node& n, const ShapeMap& shapes) {
  if (!default_domain(n)) return non_affine(n, "is in domain '" + n.domain + "', unknown to the folder");
  const std::string& op = n.op_type;
  const OpInfo* row = op_info(op);
  if (!row) return non_affine(n, "is not in the op registry, so it is treated as non-affine");
  if (row->fold == Interaction::NonAffine)
    return non_affine(n, std::string("is non-affine (") + row->fold_rule + ")");
  // Nodes whose extra outputs are in use do more than the map-carrying output.
  if ((op == "Dropout" || op == "MaxPool") && output_used(g, n, 1))
    return non_affine(
        n, "has its second output (" + std::string(op == "Dropout" ? "mask" : "Indices") + ") in use");
  if (op != "Dropout" && op != "MaxPool" && n.outputs.size() != 1)
    return non_affine(n, "has " + std::to_string(n.outputs.size()) + " outputs");
  if (op == "Dropout" && n.inputs.size() > 2 && !n.inputs[2].empty()) {
    auto t = g.tensors.find(n.inputs[2]);
    if (t == g.tensors.end() || !t->second.is_initializer || t->second.data.empty() || t->second.data[0] != 0)
      return non_affine(n, "may run in training mode (training_mode input '" + n.inputs[2] + "')");
  }
  if (op == "Conv") return classify_conv(g, n);
  if (op == "Gemm") return classify_gemm(g, n);
  if (op == "MatMul") return classify_matmul(g, n, shapes);
  if (op == "AveragePool") return classify_average_pool(n, shapes);
  if (op == "Pad") return classify_pad(g, n);
  if (op == "Resize" || op == "Upsample") return classify_resize(g, n, shapes);
  if (op == "MaxPool" || op == "GlobalMaxPool")
    return {Interaction::CommutesIfScaleNonNegative, describe_node(n) + " takes a maximum"};
  return {row->fold, ""};
}

std::string zero_padding(const Node& n, const ShapeMap& shapes) {
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "VALID") return "";
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    auto x = shape_of(shapes, n.inputs[0]);
    std::vector<int64_t> kernel = n.attr_ints("kernel_shape", {});
    if (kernel.empty() && n.inputs.size() > 1)
      if (auto w = shape_of(shapes, n.inputs[1]); w && w->size() > 2) kernel.assign(w->begin() + 2, w->end());
    if (!x || x->size() != kernel.size() + 2) return "auto_pad=" + auto_pad + " (input size unknown)";
    const size_t ns = kernel.size();
    std::vector<int64_t> strides = n.attr_ints("strides", std::vector<int64_t>(ns, 1));
    std::vector<int64_t> dil = n.attr_ints("dilations", std::vector<int64_t>(ns, 1));
    for (size_t i = 0; i < ns && i < strides.size() && i < dil.size(); ++i) {
      const int64_t in = (*x)[2 + i], s = strides[i];
      const int64_t out = (in + s - 1) / s;
      const int64_t total = (out - 1) * s + (kernel[i] - 1) * dil[i] + 1 - in;
      if (total > 0) return "auto_pad=" + auto_pad;
    }
    return "";
  }
  std::vector<int64_t> pads = n.attr_ints("pads", {});
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; }))
    return "pads=" + ints_str(pads);
  return "";
}

}  // namespace frugal::folding
