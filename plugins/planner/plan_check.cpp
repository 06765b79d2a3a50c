#include "plan_check.h"

#include <algorithm>

#include "frugal/error.h"

namespace frugal::planner {

using nlohmann::json;

std::string describe_step(const CostTable& costs, const std::vector<Step>& steps, size_t i) {
  const Step& s = steps[i];
  std::string layer = (s.layer >= 0 && s.layer < costs.size()) ? "'" + costs.layers[s.layer].name + "'"
                                                               : "#" + std::to_string(s.layer);
  return "step " + std::to_string(i) + " (layer " + layer + " on samples " + std::to_string(s.first) + ".." +
         std::to_string(s.first + s.count - 1) + ")";
}

namespace {

// Per-tensor sample bookkeeping: how many consumers still have to read each
// sample, and whether it is in memory.
struct TensorState {
  uint64_t per_sample = 0;
  int consumers = 0;            // 0: a network output, kept to the end
  std::vector<char> live;       // per sample
  std::vector<int> reads_left;  // per sample
};

}  // namespace

PlanCheck check_plan(const CostTable& costs, int batch, const std::vector<Step>& steps) {
  const int n = costs.size();
  if (batch < 1) throw Error("plan: batch must be at least 1 (got " + std::to_string(batch) + ")");

  // Tensor index: 0 is the network input, 1 + k the output of layer k.
  auto tensor_of = [](int t) { return t == kNetworkInput ? 0 : t + 1; };
  std::vector<TensorState> tensors(n + 1);
  for (int t = kNetworkInput; t < n; ++t) {
    TensorState& ts = tensors[tensor_of(t)];
    ts.per_sample = costs.tensor_per_sample(t);
    ts.consumers = static_cast<int>(costs.tensor_consumers(t).size());
    ts.live.assign(batch, 0);
    // A network output is never freed: no count of reads reaches zero.
    ts.reads_left.assign(batch, costs.kept_to_end(t) ? -1 : ts.consumers);
  }
  uint64_t held = 0;
  std::fill(tensors[0].live.begin(), tensors[0].live.end(), 1);
  held += tensors[0].per_sample * static_cast<uint64_t>(batch);

  std::vector<std::vector<char>> done(n, std::vector<char>(batch, 0));
  std::vector<int> next_sample(n, 0);      // per layer: where its next step must start
  std::vector<int> layers_done(batch, 0);  // per sample: layers that processed it
  int touched = 0, finished = 0;

  PlanCheck c;
  c.step_bytes.reserve(steps.size());
  Phase phase;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    if (s.layer < 0 || s.layer >= n)
      throw Error("plan: step " + std::to_string(i) + " names layer #" + std::to_string(s.layer) +
                  ", the table has " + std::to_string(n));
    const std::string where = "plan: " + describe_step(costs, steps, i);
    if (s.count < 1) throw Error(where + ": count must be at least 1");
    if (s.count > costs.batch_max)
      throw Error(where + ": batch " + std::to_string(s.count) + " is above the table's batch_max " +
                  std::to_string(costs.batch_max));
    if (s.first < 0 || s.first + s.count > batch)
      throw Error(where + ": samples outside the request of " + std::to_string(batch));
    const std::vector<int> inputs = costs.distinct_inputs(s.layer);
    for (int smp = s.first; smp < s.first + s.count; ++smp) {
      if (done[s.layer][smp])
        throw Error(where + ": sample " + std::to_string(smp) + " was already processed by this layer");
      if (smp == s.first && smp != next_sample[s.layer])
        throw Error(where +
                    ": a layer takes its samples in order (each step starts where its previous one "
                    "ended); the next sample of '" +
                    costs.layers[s.layer].name + "' is " + std::to_string(next_sample[s.layer]));
      for (int t : inputs)
        if (!tensors[tensor_of(t)].live[smp])
          throw Error(where + ": input '" +
                      (t == kNetworkInput ? std::string("<network input>") : costs.layers[t].name) +
                      "' of sample " + std::to_string(smp) + " does not exist yet");
    }

    const uint64_t step = held + costs.out(s.layer, s.count) + costs.ws(s.layer, s.count);
    c.step_bytes.push_back(step);
    if (step > c.peak_bytes || c.peak_step < 0) {
      c.peak_bytes = step;
      c.peak_step = static_cast<int>(i);
    }
    const double seconds = costs.time(s.layer, s.count) * s.count;
    c.time_total_s += seconds;
    if (phase.step_count == 0) phase.first_step = static_cast<int>(i);
    phase.step_count++;
    phase.seconds += seconds;

    next_sample[s.layer] = s.first + s.count;
    TensorState& out = tensors[tensor_of(s.layer)];
    for (int smp = s.first; smp < s.first + s.count; ++smp) {
      done[s.layer][smp] = 1;
      out.live[smp] = 1;
      held += out.per_sample;
      for (int t : inputs) {
        TensorState& ts = tensors[tensor_of(t)];
        if (--ts.reads_left[smp] == 0) {
          ts.live[smp] = 0;
          held -= ts.per_sample;
        }
      }
      if (layers_done[smp]++ == 0) ++touched;
      if (layers_done[smp] == n) {
        ++finished;
        if (phase.sample_count == 0 || smp < phase.first_sample) phase.first_sample = smp;
        phase.sample_count++;
      }
    }
    if (touched == finished) {  // every sample finished or untouched: a phase ends
      c.max_phase_s = std::max(c.max_phase_s, phase.seconds);
      c.phases.push_back(phase);
      phase = Phase();
    }
  }
  for (int k = 0; k < n; ++k)
    for (int smp = 0; smp < batch; ++smp)
      if (!done[k][smp])
        throw Error("plan: layer '" + costs.layers[k].name + "' never runs on sample " + std::to_string(smp) +
                    " of " + std::to_string(batch));
  c.time_total_s += costs.run_overhead_s + costs.run_overhead_per_sample_s * batch;
  c.time_per_sample_s = c.time_total_s / batch;
  return c;
}

PlanCheck check_plan_within(const CostTable& costs, int batch, const std::vector<Step>& steps,
                            uint64_t budget_bytes) {
  PlanCheck c = check_plan(costs, batch, steps);
  if (c.peak_bytes > budget_bytes)
    throw Error("plan needs " + std::to_string(c.peak_bytes) + " bytes at " +
                describe_step(costs, steps, c.peak_step) + ", budget is " + std::to_string(budget_bytes) +
                " bytes");
  return c;
}

std::vector<Step> steps_from_json(const CostTable& costs, const json& plan) {
  if (!plan.is_object()) throw Error("plan: not a JSON object");
  auto it = plan.find("steps");
  if (it == plan.end() || !it->is_array()) throw Error("plan: no \"steps\" array");
  std::vector<Step> steps;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& s = (*it)[i];
    const std::string where = "plan: step " + std::to_string(i);
    if (!s.is_object()) throw Error(where + " is not a JSON object");
    if (!s.contains("layer") || !s["layer"].is_string()) throw Error(where + " has no \"layer\" name");
    int k = costs.find(s["layer"].get<std::string>());
    if (k < 0)
      throw Error(where + " names layer '" + s["layer"].get<std::string>() +
                  "', which is not in the cost table");
    for (const char* key : {"first", "count"})
      if (!s.contains(key) || !s[key].is_number_integer())
        throw Error(where + " (layer '" + costs.layers[k].name + "') has no integer \"" + key + "\"");
    int64_t first = s["first"].get<int64_t>(), count = s["count"].get<int64_t>();
    if (first < 0 || first > (1 << 30) || count < 0 || count > (1 << 30))
      throw Error(where + " (layer '" + costs.layers[k].name + "') has first/count out of range");
    steps.push_back({k, static_cast<int>(first), static_cast<int>(count)});
  }
  return steps;
}

json steps_to_json(const CostTable& costs, const std::vector<Step>& steps) {
  json a = json::array();
  for (const Step& s : steps)
    a.push_back({{"layer", costs.layers[s.layer].name}, {"first", s.first}, {"count", s.count}});
  return a;
}

json plan_check_to_json(const PlanCheck& c) {
  json phases = json::array();
  for (const Phase& p : c.phases)
    phases.push_back({{"first_step", p.first_step},
                      {"step_count", p.step_count},
                      {"first_sample", p.first_sample},
                      {"sample_count", p.sample_count},
                      {"seconds", p.seconds}});
  return {{"peak_bytes", c.peak_bytes},
          {"peak_step", c.peak_step},
          {"time_per_sample_s", c.time_per_sample_s},
          {"time_total_s", c.time_total_s},
          {"max_phase_s", c.max_phase_s},
          {"phases", phases},
          {"step_bytes", c.step_bytes}};
}

json validate_plan(const json& costs_json, const json& plan) {
  CostTable costs = parse_cost_table(costs_json);
  std::vector<Step> steps = steps_from_json(costs, plan);
  if (!plan.contains("batch") || !plan["batch"].is_number_integer())
    throw Error("plan: no integer \"batch\" (the request size)");
  int64_t batch = plan["batch"].get<int64_t>();
  if (batch < 1 || batch > (1 << 20))
    throw Error("plan: \"batch\" " + std::to_string(batch) + " is out of range");
  if (!plan.contains("budget_bytes") || plan["budget_bytes"].is_null())
    return plan_check_to_json(check_plan(costs, static_cast<int>(batch), steps));
  const json& b = plan["budget_bytes"];
  if (!b.is_number_integer() || b.get<int64_t>() < 0)
    throw Error("plan: \"budget_bytes\" must be a non-negative integer (got " + b.dump() + ")");
  return plan_check_to_json(check_plan_within(costs, static_cast<int>(batch), steps, b.get<uint64_t>()));
}

}  // namespace frugal::planner
