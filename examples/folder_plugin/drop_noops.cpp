// drop_noops: an out-of-tree frugal folder plugin built on the installed model
// library (frugal::model: the graph IR and ONNX in and out).
//
// At inference, Identity and Dropout pass their input through unchanged. This
// folder removes every such node whose output is not a graph output and points
// its consumers at its input. It folds no BatchNorm, so its report says
// bn_total 0, bn_folded 0, and lists the nodes it removed.
#include <frugal/model/graph.h>
#include <frugal/model/onnx_export.h>
#include <frugal/model/onnx_import.h>

#include <frugal/plugin_sdk.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

bool is_noop(const frugal::Graph& g, const frugal::Node& n) {
  if (n.op_type != "Identity" && n.op_type != "Dropout") return false;
  if (n.inputs.empty() || n.inputs[0].empty() || n.outputs.empty()) return false;
  for (size_t i = 1; i < n.outputs.size(); ++i)  // Dropout's mask: only when nobody reads it
    if (!n.outputs[i].empty() && !g.consumers(n.outputs[i]).empty()) return false;
  for (const std::string& o : g.outputs)
    if (o == n.outputs[0]) return false;  // a graph output keeps its name
  return true;
}

// Removes the no-op nodes; returns their names.
std::vector<std::string> drop_noops(frugal::Graph& g) {
  std::vector<std::string> removed;
  for (size_t i = 0; i < g.nodes.size();) {
    const frugal::Node n = g.nodes[i];
    if (!is_noop(g, n)) {
      ++i;
      continue;
    }
    for (frugal::Node& c : g.nodes)
      for (std::string& in : c.inputs)
        if (in == n.outputs[0]) in = n.inputs[0];
    g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
    for (const std::string& o : n.outputs) g.tensors.erase(o);
    removed.push_back(n.name);
  }
  g.remove_unused_tensors();
  return removed;
}

frugal_status fold(const void* onnx, size_t size, const char*, frugal_blob* out_onnx, frugal_blob* out_report,
                   frugal_error* err) {
  return frugal::sdk::guard(err, [&] {
    frugal::Graph g = frugal::load_onnx_bytes(onnx, size, "model");
    const std::vector<std::string> removed = drop_noops(g);
    frugal::sdk::put_blob(out_onnx, frugal::save_onnx_bytes(g));
    frugal::sdk::put_blob(out_report,
                          nlohmann::json{{"bn_total", 0}, {"bn_folded", 0}, {"removed", removed}}.dump());
  });
}

const frugal_folder_api kApi = {sizeof(frugal_folder_api), &fold};

}  // namespace

FRUGAL_DEFINE_PLUGIN(FRUGAL_KIND_FOLDER, "drop_noops", "1.0",
                     "example: removes Identity and Dropout nodes (no-ops at inference)", kApi)
