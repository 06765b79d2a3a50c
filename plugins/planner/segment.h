// The shapes the DPs plan over. A Segment is a chain of elements with the bytes
// one sample holds at each boundary between them (exact under the executor's
// memory model: a sample that has passed elements 0..k-1 holds every tensor
// produced so far that a later element, or nobody, still needs).
//
// An element is a layer, or a branch region collapsed into a special layer (the
// paper's reduction): the layers strictly between two consecutive main-path
// layers x and y. Its branches (the connected pieces of the region) may be laid
// out in several orders; each order is a flat Segment of its own ("variant"),
// and a special layer on b samples takes the variant that suits that (b, memory)
// best. Within a variant, the extended recurrences run the branches one after
// another on all b samples, or in phases that span several branches.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost_table.h"

namespace frugal::planner {

struct Segment;

struct SegmentElement {
  int layer = -1;                 // a layer, or -1 for a special layer
  std::vector<Segment> variants;  // special layer: the region's layers in different orders
};

struct Segment {
  std::vector<SegmentElement> elements;
  std::vector<uint64_t> boundary;  // elements.size() + 1 entries, bytes per sample

  int size() const { return static_cast<int>(elements.size()); }
  std::vector<int> layers() const;  // flat segments only
};

// The layers of `order` as a flat chain entered through tensor `entry` (the
// network input, or x's output for a region); tensors read after the chain, or
// by nobody, are held to its end.
Segment chain_segment(const CostTable& costs, const std::vector<int>& order, int entry);

// Every layer in the table's order (the linearised network).
Segment flat_segment(const CostTable& costs);

// Main-path layers and special layers. Falls back to the flat segment, with
// `why_flat` saying why, when the network has several outputs.
Segment collapsed_segment(const CostTable& costs, std::string* why_flat = nullptr);

// The whole network flat, each region in the variant with the smallest
// single-sample peak (a memory-friendly alternative to the table's order).
Segment reordered_flat_segment(const CostTable& costs, const Segment& collapsed);

// Bytes while layer element e of `s` runs on b samples, all waiting at its input.
uint64_t layer_step_need(const CostTable& costs, const Segment& s, int e, int b);

}  // namespace frugal::planner
