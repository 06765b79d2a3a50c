#include "planners.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <set>

#include "baselines.h"
#include "branch_reduction.h"
#include "chain_dp.h"
#include "linear_chain.h"
#include "memory_units.h"
#include "min_peak.h"
#include "plan_check.h"
#include "segment.h"
#include "segment_planner.h"

namespace frugal::planner {

using nlohmann::json;

namespace {

constexpr int kMaxRequest = 1024;
constexpr int kMaxUnits = 1 << 16;
constexpr double kMaxDpOperations = 2e10;  // about 10-20 s of planning
const std::set<std::string> kMethods{"extended", "reordered", "branches", "paper",
                                     "greedy",   "fbs",       "minpeak"};

uint64_t option_bytes(const json& v, const char* key) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() == std::floor(v.get<double>()) &&
      v.get<double>() < 9.0e18)
    return static_cast<uint64_t>(v.get<double>());
  throw Error(std::string("options: \"") + key + "\" must be a non-negative whole number of bytes (got " +
              v.dump() + ")");
}

bool within_latency(const PlanCheck& c, double latency_s) {
  return c.max_phase_s <= latency_s * (1.0 + 1e-9);
}

// One candidate plan, checked by the simulator.
struct Candidate {
  std::string method;
  std::string error;  // empty when the plan is usable
  std::vector<Step> steps;
  PlanCheck check;
  int fbs_batch = 0;
  double extra_s = 0;  // the caller's extra seconds per request (PlanOptions::extra_time_s), in check's times
  bool ok() const { return error.empty(); }
};

// Adds the caller's extra seconds for c's method to its times.
void add_extra_time(Candidate& c, const PlanOptions& opt) {
  const auto it = opt.extra_time_s.find(c.method);
  if (!c.ok() || it == opt.extra_time_s.end()) return;
  c.extra_s = it->second;
  c.check.time_total_s += c.extra_s;
  c.check.time_per_sample_s = c.check.time_total_s / opt.batch;
}

Candidate checked(const CostTable& costs, int r, uint64_t budget, double latency_s, std::string method,
                  std::vector<Step> steps) {
  Candidate c;
  c.method = std::move(method);
  c.steps = std::move(steps);
  c.check = check_plan(costs, r, c.steps);
  if (c.check.peak_bytes > budget)  // would be a planner bug: never hand such a plan out
    c.error = "internal error: plan needs " + std::to_string(c.check.peak_bytes) + " bytes, budget " +
              std::to_string(budget);
  else if (!within_latency(c.check, latency_s))
    c.error = "a phase takes " + std::to_string(c.check.max_phase_s) + " s, above the latency bound";
  return c;
}

Candidate from_baseline(const CostTable& costs, int r, double latency_s, std::string method, BaselinePlan b,
                        uint64_t budget) {
  if (!b.ok) {
    Candidate c;
    c.method = std::move(method);
    c.error = b.error;
    return c;
  }
  Candidate c = checked(costs, r, budget, latency_s, std::move(method), std::move(b.steps));
  c.fbs_batch = b.batch;
  return c;
}

json candidate_json(const CostTable& costs, const PlanOptions& opt, const Candidate& c) {
  if (!c.ok()) return {{"method", c.method}, {"error", c.error}};
  json j = {{"method", c.method},
            {"time_per_sample_s", c.check.time_per_sample_s},
            {"peak_bytes", c.check.peak_bytes},
            {"steps_count", c.steps.size()}};
  if (c.extra_s > 0) j["extra_time_s"] = c.extra_s;
  if (opt.candidate_steps) j["steps"] = steps_to_json(costs, c.steps);
  return j;
}

// Per layer: the batch of each of its steps and the memory it leaves unused
// (budget minus the most any of its steps needs): Figure 9 and Table III.
json layer_summary(const CostTable& costs, uint64_t budget, const Candidate& plan, const Candidate* fbs) {
  auto per_layer = [&](const Candidate& c, std::vector<json>& batches, std::vector<uint64_t>& peak) {
    batches.assign(costs.size(), json::array());
    peak.assign(costs.size(), 0);
    for (size_t i = 0; i < c.steps.size(); ++i) {
      batches[c.steps[i].layer].push_back(c.steps[i].count);
      peak[c.steps[i].layer] = std::max(peak[c.steps[i].layer], c.check.step_bytes[i]);
    }
  };
  std::vector<json> batches, fbs_batches;
  std::vector<uint64_t> peak, fbs_peak;
  per_layer(plan, batches, peak);
  if (fbs) per_layer(*fbs, fbs_batches, fbs_peak);
  json layers = json::array();
  for (int k = 0; k < costs.size(); ++k) {
    json l = {{"name", costs.layers[k].name},
              {"batches", batches[k]},
              {"peak_bytes", peak[k]},
              {"unused_bytes", budget - peak[k]}};
    if (fbs) {
      l["fbs_batches"] = fbs_batches[k];
      l["fbs_unused_bytes"] = budget - fbs_peak[k];
    }
    layers.push_back(std::move(l));
  }
  return layers;
}

json phases_json(const PlanCheck& c) {
  json a = json::array();
  for (const Phase& p : c.phases)
    a.push_back({{"first_step", p.first_step},
                 {"step_count", p.step_count},
                 {"first_sample", p.first_sample},
                 {"sample_count", p.sample_count},
                 {"seconds", p.seconds}});
  return a;
}

json plan_json(const std::string& planner, const CostTable& costs, const PlanOptions& opt, const Candidate& c,
               const Candidate* fbs) {
  json j = {{"planner", planner},
            {"method", c.method},
            {"model", costs.model},
            {"executor", costs.executor},
            {"batch", opt.batch},
            {"budget_bytes", opt.budget_bytes},
            {"time_per_sample_s", c.check.time_per_sample_s},
            {"time_total_s", c.check.time_total_s},
            {"peak_bytes", c.check.peak_bytes},
            {"max_phase_s", c.check.max_phase_s},
            {"steps", steps_to_json(costs, c.steps)},
            {"phases", phases_json(c.check)},
            {"layers", layer_summary(costs, opt.budget_bytes, c, fbs)}};
  if (std::isfinite(opt.latency_s)) j["latency_bound_s"] = opt.latency_s;
  if (c.fbs_batch > 0) j["fbs_batch"] = c.fbs_batch;
  if (c.extra_s > 0) j["extra_time_s"] = c.extra_s;
  return j;
}

// One budget to plan for: its best candidate, and (for the requested budget)
// every candidate for the report.
struct Query {
  uint64_t budget = 0;
  int units = 0;  // the DP entry used: budget in units, rounded down
  bool keep_all = false;
  std::vector<Candidate> all;
  std::optional<Candidate> best;
  const PlanOptions* extra = nullptr;  // the requested budget: the caller's extra times apply

  void consider(Candidate c) {
    if (extra) add_extra_time(c, *extra);
    if (c.ok() && (!best || c.check.time_per_sample_s < best->check.time_per_sample_s)) best = c;
    if (keep_all) all.push_back(std::move(c));
  }
};

Candidate failed(std::string method, std::string error) {
  Candidate c;
  c.method = std::move(method);
  c.error = std::move(error);
  return c;
}

// Plans a request for one or many budgets. One DP run serves every budget up to
// the requested one (table mode); the DPs are built one after another and
// dropped once their plans are out, so only one set of tables is alive at a time.
class VbsSolver {
 public:
  VbsSolver(const CostTable& costs, const PlanOptions& opt)
      : costs_(costs), opt_(opt), chain_(linearize(costs)) {
    const int r = opt.batch;
    flat_ = flat_segment(costs);
    collapsed_ = collapsed_segment(costs, &why_flat_);
    has_branches_ = collapsed_.size() != flat_.size();
    reordered_ = reordered_flat_segment(costs, collapsed_);
    new_order_ = reordered_.layers() != flat_.layers();
    units_ = choose_units();  // first: refuses requests too large to plan before any DP runs
    min_peak_ = min_peak_plan(costs, flat_, r);
    for (const Segment* s : {has_branches_ ? &collapsed_ : nullptr, new_order_ ? &reordered_ : nullptr}) {
      if (!s) continue;
      MinPeakPlan m = min_peak_plan(costs, *s, r);
      if (m.peak_bytes < min_peak_.peak_bytes) min_peak_ = std::move(m);
    }
    if (min_peak_.peak_bytes > opt.budget_bytes)
      throw BudgetError("budget_bytes " + std::to_string(opt.budget_bytes) +
                        " is below the smallest plan for a batch of " + std::to_string(r) +
                        ": it needs at least " + std::to_string(min_peak_.peak_bytes) + " bytes");
  }

  const MemoryUnits& units() const { return units_; }
  uint64_t min_peak() const { return min_peak_.peak_bytes; }
  std::string unit_note;

  void solve(std::vector<Query>& qs) {
    const int r = opt_.batch;
    auto from_dp = [&](const char* method, const ChainDP& dp) {
      for (Query& q : qs) {
        if (!(dp.top(r, q.units) < kInf)) {
          q.consider(failed(method, "no plan at " + std::to_string(q.units) + " units of " +
                                        std::to_string(units_.unit_bytes) + " bytes"));
          continue;
        }
        std::vector<LayerRun> runs;
        dp.trace_top(r, q.units, runs);
        q.consider(checked(costs_, r, q.budget, opt_.latency_s, method, assign_samples(runs, costs_.size())));
      }
    };
    auto segment_dp = [&](const char* method, const Segment& seg, bool applicable,
                          const std::string& why_not) {
      if (!wants(method)) return;
      if (!applicable) {
        for (Query& q : qs) q.consider(failed(method, why_not));
        return;
      }
      SegmentPlanner planner(costs_, seg, units_, r, opt_.latency_s);
      from_dp(method, planner.dp());
    };
    segment_dp("extended", flat_, true, "");
    segment_dp("reordered", reordered_, new_order_, "the table's order already is the memory-friendly one");
    segment_dp(
        "branches", collapsed_, has_branches_,
        why_flat_.empty() ? "no branches (the same chain as extended)" : "not applicable: " + why_flat_);
    if (wants("paper")) {
      PaperPlanner paper(costs_, chain_, units_, r, opt_.latency_s);
      if (paper.applicable())
        from_dp("paper", paper.dp());
      else
        for (Query& q : qs) q.consider(failed("paper", "not applicable: " + paper.why_not()));
    }
    for (Query& q : qs) {
      if (wants("greedy"))
        q.consider(from_baseline(costs_, r, opt_.latency_s, "greedy",
                                 plan_greedy(costs_, chain_, r, q.budget, opt_.latency_s), q.budget));
      if (wants("fbs"))
        q.consider(from_baseline(costs_, r, opt_.latency_s, "fbs",
                                 plan_fixed_batch(costs_, r, q.budget, opt_.latency_s), q.budget));
      if (wants("minpeak")) {
        if (min_peak_.peak_bytes <= q.budget)
          q.consider(checked(costs_, r, q.budget, opt_.latency_s, "minpeak", min_peak_.steps));
        else
          q.consider(failed("minpeak", "needs " + std::to_string(min_peak_.peak_bytes) + " bytes"));
      }
    }
  }

 private:
  bool wants(const std::string& m) const {
    return std::find(opt_.methods.begin(), opt_.methods.end(), m) != opt_.methods.end();
  }

  // The DP tables hold n(n+1)/2 * r * (units+1) floats (the paper DP's are
  // smaller): a default unit grows until they fit opt.max_table_bytes.
  MemoryUnits choose_units() {
    MemoryUnits u = make_memory_units(opt_.budget_bytes, opt_.unit_bytes, kMaxUnits);
    // (c) costs n^3/6 r M and (b) n^2/4 r^2 M min-operations: refuse what would take minutes.
    const double n = costs_.size(), r = opt_.batch, M = u.budget_units + 1.0;
    const double ops = n * n * n / 6 * r * M + n * n / 4 * r * r * M;
    if (ops > kMaxDpOperations)
      throw Error(
          "options: planning " + std::to_string(opt_.batch) + " samples over " +
          std::to_string(costs_.size()) + " layers with " + std::to_string(u.budget_units) +
          " memory units takes about " + std::to_string(static_cast<int64_t>(ops / 1e9)) +
          "e9 DP operations; choose a smaller batch (plan part of the request and repeat it) or a larger "
          "unit_bytes");
    const uint64_t bytes = ChainDP::table_bytes(costs_.size(), opt_.batch, u.budget_units);
    if (bytes <= opt_.max_table_bytes) return u;
    const uint64_t per_unit = ChainDP::table_bytes(costs_.size(), opt_.batch, 0);
    const uint64_t fit = opt_.max_table_bytes / per_unit;  // units + 1 that fit
    if (opt_.unit_bytes != 0 || fit < 2)
      throw Error("options: the DP tables would take " + std::to_string(bytes) +
                  " bytes, above max_table_bytes " + std::to_string(opt_.max_table_bytes) +
                  "; choose a larger unit_bytes or a smaller batch");
    const uint64_t units = fit - 1;
    u = make_memory_units(opt_.budget_bytes, (opt_.budget_bytes + units - 1) / units, kMaxUnits);
    unit_note = "unit enlarged to keep the DP tables within max_table_bytes";
    return u;
  }

  const CostTable& costs_;
  const PlanOptions& opt_;
  LinearChain chain_;
  Segment flat_, collapsed_, reordered_;
  std::string why_flat_;
  bool has_branches_ = false, new_order_ = false;
  MinPeakPlan min_peak_;
  MemoryUnits units_;
};

const Candidate* find_method(const std::vector<Candidate>& cs, const std::string& m) {
  for (const Candidate& c : cs)
    if (c.method == m) return c.ok() ? &c : nullptr;
  return nullptr;
}

json baseline_json(const Candidate* c, const std::vector<Candidate>& all, const std::string& method) {
  if (c) {
    json j = {{"time_per_sample_s", c->check.time_per_sample_s}, {"peak_bytes", c->check.peak_bytes}};
    if (method == "fbs") j["batch"] = c->fbs_batch;
    return j;
  }
  for (const Candidate& x : all)
    if (x.method == method) return {{"error", x.error}};
  return nullptr;
}

}  // namespace

namespace {

// {"method": seconds >= 0, ...}
std::map<std::string, double> parse_extra_times(const json& j) {
  if (!j.is_object()) throw Error("options: \"extra_time_s\" must be an object {method: seconds}");
  std::map<std::string, double> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_number() || !(it.value().get<double>() >= 0) ||
        !std::isfinite(it.value().get<double>()))
      throw Error("options: \"extra_time_s\" of \"" + it.key() + "\" must be a number of seconds >= 0 (got " +
                  it.value().dump() + ")");
    out[it.key()] = it.value().get<double>();
  }
  return out;
}

}  // namespace

PlanOptions parse_plan_options(const json& j, const std::string& planner) {
  if (!j.is_object()) throw Error("options: not a JSON object");
  static const std::set<std::string> known{"budget_bytes",    "batch",   "unit_bytes",      "latency_bound_s",
                                           "table",           "methods", "max_table_bytes", "extra_time_s",
                                           "candidate_steps", "min_gain"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!known.count(it.key()))
      throw Error(
          "options: unknown option \"" + it.key() +
          "\" (known: budget_bytes, batch, unit_bytes, latency_bound_s, table, methods, max_table_bytes, "
          "extra_time_s, candidate_steps, min_gain)");
  PlanOptions o;
  if (!j.contains("budget_bytes")) throw Error("options: \"budget_bytes\" is required");
  o.budget_bytes = option_bytes(j["budget_bytes"], "budget_bytes");
  if (o.budget_bytes == 0) throw Error("options: \"budget_bytes\" must be positive");
  if (!j.contains("batch"))
    throw Error("options: \"batch\" (the number of samples in the request) is required");
  if (!j["batch"].is_number_integer() || j["batch"].get<int64_t>() < 1)
    throw Error("options: \"batch\" must be a positive integer (got " + j["batch"].dump() + ")");
  if (j["batch"].get<int64_t>() > kMaxRequest)
    throw Error("options: \"batch\" " + j["batch"].dump() + " is above the supported " +
                std::to_string(kMaxRequest));
  o.batch = static_cast<int>(j["batch"].get<int64_t>());
  if (j.contains("unit_bytes")) {
    o.unit_bytes = option_bytes(j["unit_bytes"], "unit_bytes");
    if (o.unit_bytes == 0) throw Error("options: \"unit_bytes\" must be positive");
  }
  if (j.contains("latency_bound_s") && !j["latency_bound_s"].is_null()) {
    const json& l = j["latency_bound_s"];
    if (!l.is_number() || !(l.get<double>() > 0) || !std::isfinite(l.get<double>()))
      throw Error("options: \"latency_bound_s\" must be a positive number of seconds (got " + l.dump() + ")");
    o.latency_s = l.get<double>();
  }
  if (j.contains("table")) {
    if (!j["table"].is_boolean()) throw Error("options: \"table\" must be true or false");
    o.table = j["table"].get<bool>();
  }
  if (j.contains("methods")) {
    if (planner != "vbs") throw Error("options: \"methods\" applies to the vbs planner only");
    const json& m = j["methods"];
    if (!m.is_array() || m.empty()) throw Error("options: \"methods\" must be a non-empty array of names");
    o.methods.clear();
    for (const json& x : m) {
      if (!x.is_string() || !kMethods.count(x.get<std::string>()))
        throw Error("options: unknown method " + x.dump() +
                    " (known: extended, paper, greedy, fbs, minpeak)");
      o.methods.push_back(x.get<std::string>());
    }
  }
  if (j.contains("max_table_bytes"))
    o.max_table_bytes = option_bytes(j["max_table_bytes"], "max_table_bytes");
  if (j.contains("extra_time_s")) o.extra_time_s = parse_extra_times(j["extra_time_s"]);
  if (j.contains("candidate_steps")) {
    if (!j["candidate_steps"].is_boolean()) throw Error("options: \"candidate_steps\" must be true or false");
    o.candidate_steps = j["candidate_steps"].get<bool>();
  }
  if (j.contains("min_gain")) {
    const json& g = j["min_gain"];
    if (!g.is_number() || !(g.get<double>() >= 0 && g.get<double>() < 1))
      throw Error("options: \"min_gain\" must be a fraction in [0, 1) (got " + g.dump() + ")");
    o.min_gain = g.get<double>();
  }
  return o;
}

// `best`, or the faster of fbs and greedy when best is another plan and not at
// least `min_gain` faster than it: a gain inside the table's error is no gain,
// whether the other plan has more steps (each priced with its error) or fewer
// (steps at batch sizes whose in-run cache state the table does not see).
const Candidate& simplest_within_gain(const Candidate& best, const std::vector<Candidate>& cands,
                                      double min_gain) {
  const Candidate* simple = nullptr;
  for (const char* m : {"fbs", "greedy"}) {
    const Candidate* c = find_method(cands, m);
    if (c && c->ok() && (!simple || c->check.time_per_sample_s < simple->check.time_per_sample_s)) simple = c;
  }
  if (min_gain <= 0 || !simple || simple->steps == best.steps) return best;
  const double gain = 1.0 - best.check.time_per_sample_s / simple->check.time_per_sample_s;
  return gain < min_gain ? *simple : best;
}

json plan_vbs(const CostTable& costs, const PlanOptions& opt) {
  VbsSolver solver(costs, opt);
  const MemoryUnits& u = solver.units();
  std::vector<Query> qs(1);
  qs[0].budget = opt.budget_bytes;
  qs[0].units = u.budget_units;
  qs[0].keep_all = true;
  qs[0].extra = &opt;
  if (opt.table)
    for (int m = 1; m <= u.budget_units; ++m)
      if (u.bytes(m) >= solver.min_peak()) qs.push_back({u.bytes(m), m, false, {}, std::nullopt, nullptr});
  solver.solve(qs);

  const std::vector<Candidate>& cands = qs[0].all;
  if (!qs[0].best) {
    std::string why;
    for (const Candidate& c : cands) why += "; " + c.method + ": " + c.error;
    throw Error("vbs: no plan for a batch of " + std::to_string(opt.batch) + " within " +
                std::to_string(opt.budget_bytes) + " bytes" +
                (std::isfinite(opt.latency_s)
                     ? " and a latency bound of " + std::to_string(opt.latency_s) + " s"
                     : "") +
                why);
  }
  const Candidate& best = simplest_within_gain(*qs[0].best, cands, opt.min_gain);
  const Candidate* fbs = find_method(cands, "fbs");
  json j = plan_json("vbs", costs, opt, best, fbs);
  if (&best != &*qs[0].best) {
    j["min_gain_fallback"] = {{"method", qs[0].best->method},
                              {"time_per_sample_s", qs[0].best->check.time_per_sample_s},
                              {"steps", qs[0].best->steps.size()}};
  }
  j["memory_unit_bytes"] = u.unit_bytes;
  j["budget_units"] = u.budget_units;
  if (!solver.unit_note.empty()) j["memory_unit_note"] = solver.unit_note;
  j["min_budget_bytes"] = solver.min_peak();
  j["baselines"] = {{"fbs", baseline_json(fbs, cands, "fbs")},
                    {"greedy", baseline_json(find_method(cands, "greedy"), cands, "greedy")}};
  if (fbs) j["gain_vs_fbs"] = 1.0 - best.check.time_per_sample_s / fbs->check.time_per_sample_s;
  json cj = json::array();
  for (const Candidate& c : cands) cj.push_back(candidate_json(costs, opt, c));
  j["candidates"] = cj;

  if (opt.table) {
    // Entry e holds from its budget_bytes up to the next entry's: look up the
    // last entry whose budget_bytes fits the memory available. A larger budget
    // keeps the previous plan unless it finds a faster one.
    json table = json::array();
    double last_time = std::numeric_limits<double>::infinity();
    for (size_t q = 1; q < qs.size(); ++q) {
      const std::optional<Candidate>& b = qs[q].best;
      if (!b || !(b->check.time_per_sample_s < last_time)) continue;
      last_time = b->check.time_per_sample_s;
      table.push_back({{"budget_bytes", qs[q].budget},
                       {"method", b->method},
                       {"time_per_sample_s", b->check.time_per_sample_s},
                       {"peak_bytes", b->check.peak_bytes},
                       {"steps", steps_to_json(costs, b->steps)}});
    }
    j["table"] = table;
  }
  return j;
}

json plan_fbs(const CostTable& costs, const PlanOptions& opt) {
  BaselinePlan b = plan_fixed_batch(costs, opt.batch, opt.budget_bytes, opt.latency_s);
  if (!b.ok) {
    const uint64_t need = check_plan(costs, opt.batch, fixed_batch_steps(costs, opt.batch, 1)).peak_bytes;
    if (need > opt.budget_bytes)
      throw BudgetError("budget_bytes " + std::to_string(opt.budget_bytes) +
                        " is below the smallest fixed-batch plan: batch 1 needs " + std::to_string(need) +
                        " bytes");
    throw Error(b.error);
  }
  Candidate c = from_baseline(costs, opt.batch, opt.latency_s, "fbs", std::move(b), opt.budget_bytes);
  add_extra_time(c, opt);
  json j = plan_json("fbs", costs, opt, c, &c);
  if (opt.candidate_steps) j["candidates"] = json::array({candidate_json(costs, opt, c)});
  return j;
}

json plan_greedy(const CostTable& costs, const PlanOptions& opt) {
  const LinearChain chain = linearize(costs);
  BaselinePlan b = plan_greedy(costs, chain, opt.batch, opt.budget_bytes, opt.latency_s);
  if (!b.ok) {
    // Greedy's floor: every layer at batch 1 while all r samples are held.
    std::vector<Step> ones;
    for (int k = 0; k < costs.size(); ++k)
      for (int s = 0; s < opt.batch; ++s) ones.push_back({k, s, 1});
    const uint64_t need = check_plan(costs, opt.batch, ones).peak_bytes;
    if (need > opt.budget_bytes)
      throw BudgetError("budget_bytes " + std::to_string(opt.budget_bytes) +
                        " is below the smallest greedy plan: it needs " + std::to_string(need) + " bytes (" +
                        b.error + ")");
    throw Error(b.error);
  }
  Candidate c = from_baseline(costs, opt.batch, opt.latency_s, "greedy", std::move(b), opt.budget_bytes);
  add_extra_time(c, opt);
  BaselinePlan f = plan_fixed_batch(costs, opt.batch, opt.budget_bytes, opt.latency_s);
  std::optional<Candidate> fc;
  if (f.ok) fc = from_baseline(costs, opt.batch, opt.latency_s, "fbs", std::move(f), opt.budget_bytes);
  json j = plan_json("greedy", costs, opt, c, fc ? &*fc : nullptr);
  if (opt.candidate_steps) j["candidates"] = json::array({candidate_json(costs, opt, c)});
  return j;
}

json run_planner(const std::string& planner, const std::string& costs_json, const std::string& options_json) {
  CostTable costs = parse_cost_table_text(costs_json, "cost table");
  json oj;
  try {
    oj = options_json.empty() ? json::object() : json::parse(options_json);
  } catch (const json::parse_error& e) {
    throw Error(std::string("options: not valid JSON: ") + e.what());
  }
  PlanOptions opt = parse_plan_options(oj, planner);
  if (planner == "vbs") return plan_vbs(costs, opt);
  if (planner == "fbs") return plan_fbs(costs, opt);
  if (planner == "greedy") return plan_greedy(costs, opt);
  throw Error("unknown planner '" + planner + "'");
}

}  // namespace frugal::planner
