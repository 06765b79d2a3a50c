#include "frugal/model/op.h"

namespace frugal {

std::vector<ValueShape> Op::outputs(std::vector<ValueShape> outs) const {
  if (outs.size() < num_outputs_) {
    ValueShape first = outs.empty() ? ValueShape{} : outs.front();
    first.ints.reset();
    first.floats.reset();
    outs.resize(num_outputs_, first);
  }
  outs.resize(num_outputs_);
  return outs;
}

}  // namespace frugal
