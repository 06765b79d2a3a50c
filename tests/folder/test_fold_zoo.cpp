// Every zoo network folded by BaN-OFF and by the naive method: the counts match
// the literal Theorem-1 oracle (BaN-OFF) and never exceed it (naive), the
// folded networks (after an ONNX round trip, for all but the largest) compute what the originals do
// (float64 reference, batch 1), and inputs/outputs keep their names.
//
// To keep the suite short, networks are evaluated at 64x64 (every border case
// of every layer is still there; see prepare() for fixed-size classifiers); a
// naive result identical to BaN-OFF's is not evaluated twice; a network with
// nothing to fold must come back byte-identical.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "fold_check.h"
#include "folder/fold.h"
#include "frugal/error.h"
#include "frugal/model/onnx_export.h"
#include "frugal/model/onnx_import.h"
#include "reduced_run.h"
#include "zoo/zoo.h"

using namespace frugal;
using namespace frugal::fold_test;

namespace {

double mismatch(const RefValues& expected, const RefValues& got) {
  double worst = 0.0;
  for (const auto& kv : expected) {
    double scale = 0.0;
    for (double v : kv.second.data) scale = std::max(scale, std::fabs(v));
    worst = std::max(worst, max_abs_diff(got.at(kv.first), kv.second) / std::max(scale, 1e-30));
  }
  return worst;
}

// The nodes of `g` that `trunk` does not hold, with the initializers they read.
std::vector<std::pair<Node, std::vector<const TensorDesc*>>> head(const Graph& g, const Graph& trunk) {
  std::vector<std::pair<Node, std::vector<const TensorDesc*>>> h;
  for (const Node& n : g.nodes) {
    if (trunk.node_index(n.name) >= 0) continue;
    std::vector<const TensorDesc*> weights;
    for (const std::string& in : n.inputs)
      if (g.is_initializer(in)) weights.push_back(&g.tensor(in));
    h.emplace_back(n, weights);
  }
  return h;
}

bool same_head(const Graph& g, const Graph& gt, const Graph& f, const Graph& ft) {
  auto a = head(g, gt), b = head(f, ft);
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const Node &x = a[i].first, &y = b[i].first;
    if (x.op_type != y.op_type || x.inputs != y.inputs || x.outputs != y.outputs ||
        a[i].second.size() != b[i].second.size())
      return false;
    for (size_t k = 0; k < a[i].second.size(); ++k)
      if (a[i].second[k]->data != b[i].second[k]->data) return false;
  }
  return true;
}

// How far `folded` is from `g` on one random image. When the folded graph
// differs from the original only up to the first Flatten (the classifier after
// it is untouched), the trunk before it is compared, at 64x64; else the whole
// networks at 64x64 when they accept that size, else at their declared size.
double folded_mismatch(const Graph& g, const Graph& folded) {
  RefValues in{{g.inputs.at(0), random_ref_tensor({1, 3, 64, 64}, 3)}};
  auto flatten =
      std::find_if(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.op_type == "Flatten"; });
  if (flatten != g.nodes.end()) {
    const Graph trunk = truncate_at(g, flatten->inputs[0]);
    const Graph folded_trunk = truncate_at(folded, flatten->inputs[0]);
    if (same_head(g, trunk, folded, folded_trunk))
      return mismatch(reference_run(trunk, in), reference_run(folded_trunk, in));
  }
  bool fits = true;
  RefValues expected;
  try {
    expected = reference_run(g, in);
  } catch (const Error&) {
    fits = false;
  }
  if (fits) return mismatch(expected, reference_run(folded, in));
  in = random_inputs(g, 1, 3);
  return mismatch(reference_run(g, in), reference_run(folded, in));
}

// docs/FOLDING.md's fold-count table, network -> the other columns as written:
// BN, theorem, naive, BaN-OFF, compensated, parameters removed.
std::map<std::string, std::vector<std::string>> documented_counts() {
  std::ifstream f(FRUGAL_SOURCE_DIR "/docs/FOLDING.md");
  REQUIRE(f.good());
  std::map<std::string, std::vector<std::string>> rows;
  bool in_table = false;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("| network | BN | theorem | naive | BaN-OFF |", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table || line.rfind("| ---", 0) == 0) continue;
    if (line.rfind("|", 0) != 0) break;
    std::vector<std::string> cells;
    std::istringstream in(line.substr(1));
    for (std::string cell; std::getline(in, cell, '|');) {
      cell.erase(0, cell.find_first_not_of(' '));
      cell.erase(cell.find_last_not_of(' ') + 1);
      cells.push_back(cell);
    }
    if (cells.size() == 7) rows[cells[0]] = std::vector<std::string>(cells.begin() + 1, cells.end());
  }
  return rows;
}

std::vector<std::string> count_row(const Graph& g, const nlohmann::json& ours, const nlohmann::json& naive) {
  int compensated = 0;
  for (const auto& n : ours["nodes"]) compensated += n["compensated"].empty() ? 0 : 1;
  return {std::to_string(ours["bn_total"].get<int>()),
          std::to_string(theorem_foldable_count(g)),
          std::to_string(naive["bn_folded"].get<int>()),
          std::to_string(ours["bn_folded"].get<int>()),
          std::to_string(compensated),
          std::to_string(ours["parameters_removed"].get<int64_t>())};
}

}  // namespace

TEST_CASE("every zoo network folds exactly, as many BNs as the theorem allows", "[folder][zoo]") {
  const std::map<std::string, std::vector<std::string>> documented = documented_counts();
  REQUIRE(documented.size() == zoo_names().size());
  for (const std::string& name : zoo_names()) {
    if (frugal_test::left_out_when_reduced(name)) continue;
    DYNAMIC_SECTION(name) {
      const Graph g = build_zoo_model(name, 1);
      const int bn = count_op(g, "BatchNormalization");
      const int allowed = theorem_foldable_count(g);
      FoldResult ours = fold_banoff(g);
      INFO(ours.report.dump(1));
      // The row of docs/FOLDING.md's fold-count table.
      REQUIRE(documented.count(name) == 1);
      const std::vector<std::string>& row = documented.at(name);
      CHECK(ours.report["bn_total"] == bn);
      CHECK(ours.report["bn_folded"] == allowed);
      CHECK(count_op(ours.graph, "BatchNormalization") == bn - allowed);
      CHECK(ours.graph.inputs == g.inputs);
      CHECK(ours.graph.outputs == g.outputs);
      if (allowed == 0) {
        CHECK(same_graph(ours.graph, g));
        CHECK(row == count_row(g, ours.report, fold_naive(g).report));
        continue;
      }
      if (g.parameter_count() < 50'000'000) {  // as another tool would read it (VGG's 0.5 GB: skipped)
        const std::string bytes = save_onnx_bytes(ours.graph);
        ours.graph = Graph{};
        ours.graph = load_onnx_bytes(bytes.data(), bytes.size(), name + " folded");
      }
      CHECK(folded_mismatch(g, ours.graph) < 1e-5);
      const uint64_t ours_digest = graph_digest(ours.graph);
      ours.graph = Graph{};

      FoldResult naive = fold_naive(g);
      CHECK(naive.report["bn_folded"].get<int>() <= allowed);
      CHECK(row == count_row(g, ours.report, naive.report));
      if (graph_digest(naive.graph) != ours_digest) CHECK(folded_mismatch(g, naive.graph) < 1e-5);
    }
  }
}
