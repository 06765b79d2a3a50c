#include "frugal/model/macs.h"

#include "frugal/error.h"
#include "frugal/model/ops.h"

namespace frugal {

namespace {

ValueShape shape_of(const Graph& g, const Node& n, const std::string& name) {
  ValueShape v;
  if (name.empty()) return v;
  auto it = g.tensors.find(name);
  if (it == g.tensors.end() || !it->second.has_shape || !shape_is_known(it->second.shape))
    throw Error(n.op_type + " node '" + n.name + "': shape of '" + name +
                "' is not known; run infer_shapes before counting MACs");
  v.name = name;
  v.present = true;
  v.dims = known_dims(it->second.shape);
  v.dtype = it->second.dtype;
  return v;
}

}  // namespace

int64_t node_macs(const Graph& g, const Node& n) {
  if (!find_op(n)) throw Error(n.op_type + " node '" + n.name + "': op is not known, cannot count its MACs");
  const std::unique_ptr<Op> op = make_op(n, default_opset(g));
  if (!op->counts_macs()) return 0;
  std::vector<ValueShape> in;
  for (const std::string& i : n.inputs) in.push_back(shape_of(g, n, i));
  try {
    // Outputs recomputed from the inputs: validates them, and stale output shapes cannot mislead.
    const std::vector<ValueShape> out = op->shape(in);
    return op->macs(in, out);
  } catch (const std::exception& e) {
    throw Error(n.op_type + " node '" + n.name + "': " + e.what());
  }
}

}  // namespace frugal
