// The paper's treatment of branched networks: layers that every path from the
// network input to its output passes through form the main path; the layers
// between two consecutive main-path layers x and y form branches (each a simple
// chain from x to y, possibly empty, as in ResNet shortcuts) that collapse into
// one "special layer" s. OPTExact[s,s,b,mem] runs the branches one after
// another on all b samples, each with mem' = mem - (x's output + y's inputs for b
// samples), its first input and last output counted as zero, using the paper's
// recurrences inside each branch. Graphs outside this shape (nested branches,
// several outputs) are reported as not applicable.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "chain_dp.h"
#include "cost_table.h"
#include "linear_chain.h"
#include "memory_units.h"

namespace frugal::planner {

struct MainPathElement {
  int layer = -1;                          // a main-path layer, or -1 for a special layer
  std::vector<std::vector<int>> branches;  // special layer: each branch's layers in order (may be empty)
  uint64_t in_per_sample = 0;              // bytes per sample waiting at its input
  uint64_t out_per_sample = 0;             // ... and at its output
  uint64_t reserved_per_sample = 0;        // special layer: x's output + y's inputs (distinct tensors)
};

struct BranchReduction {
  bool applicable = false;
  std::string why_not;
  std::vector<MainPathElement> elements;
};

BranchReduction reduce_branches(const CostTable& costs, const LinearChain& chain);

// The paper's planner: recurrences (1)-(3) on the main path, special layers as
// above. Owns the branch DPs the main DP's trace-back calls into.
class PaperPlanner {
 public:
  PaperPlanner(const CostTable& costs, const LinearChain& chain, const MemoryUnits& units, int samples,
               double latency_s);
  PaperPlanner(const PaperPlanner&) = delete;  // the DP's trace-back refers back to this object
  PaperPlanner& operator=(const PaperPlanner&) = delete;
  bool applicable() const { return reduction_.applicable; }
  const std::string& why_not() const { return reduction_.why_not; }
  const BranchReduction& reduction() const { return reduction_; }
  const ChainDP& dp() const { return *main_; }  // only when applicable()

 private:
  BranchReduction reduction_;
  MemoryUnits units_;
  std::vector<std::vector<std::unique_ptr<ChainDP>>> branch_dps_;  // per element, per non-empty branch
  std::unique_ptr<ChainDP> main_;
};

}  // namespace frugal::planner
