#include "common/io_checks.h"

#include <algorithm>
#include <cstdio>

#include "frugal/error.h"

namespace frugal::exec {

std::string format_bytes(uint64_t bytes) {
  char buf[64];
  if (bytes >= 1000000)
    std::snprintf(buf, sizeof buf, "%.1f MB", double(bytes) / 1e6);
  else if (bytes >= 1000)
    std::snprintf(buf, sizeof buf, "%.1f kB", double(bytes) / 1e3);
  else
    return std::to_string(bytes) + " bytes";
  return std::string(buf) + " (" + std::to_string(bytes) + " bytes)";
}

nlohmann::json parse_options_object(const char* json, const char* example) {
  if (!json || !*json) return nlohmann::json::object();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("options: not valid JSON: ") + e.what());
  }
  if (j.is_null()) return nlohmann::json::object();
  if (!j.is_object()) throw Error(std::string("options: expected a JSON object such as ") + example);
  return j;
}

int64_t check_inputs(const LayerGraph& m, const frugal_tensor* inputs, size_t n,
                     std::vector<const frugal_tensor*>& ordered) {
  if (n != m.inputs().size())
    throw Error("run: the model has " + std::to_string(m.inputs().size()) + " input(s) (" +
                m.tensor_names(m.inputs()) + "), got " + std::to_string(n));
  if (n > 0 && !inputs) throw Error("run: inputs is NULL");
  ordered.assign(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    size_t k = i;
    if (inputs[i].name) {
      auto it = std::find_if(m.inputs().begin(), m.inputs().end(),
                             [&](int t) { return m.tensors()[size_t(t)].name == inputs[i].name; });
      if (it == m.inputs().end())
        throw Error(std::string("run: no input named '") + inputs[i].name +
                    "' (inputs: " + m.tensor_names(m.inputs()) + ")");
      k = size_t(it - m.inputs().begin());
    }
    if (ordered[k]) throw Error("run: input '" + m.tensors()[size_t(m.inputs()[k])].name + "' given twice");
    ordered[k] = &inputs[i];
  }
  int64_t batch = -1;
  for (size_t k = 0; k < n; ++k) {
    const frugal_tensor& t = *ordered[k];
    const ActivationTensor& a = m.tensors()[size_t(m.inputs()[k])];
    const std::string who = "run: input '" + a.name + "'";
    if (t.dtype != FRUGAL_DTYPE_FLOAT32)
      throw Error(who + " has dtype " + dtype_name(DType(t.dtype)) + ", expected float32");
    if (t.rank < 0 || (t.rank > 0 && !t.dims)) throw Error(who + " has no dims");
    const Dims dims(t.dims, t.dims + t.rank);
    const int64_t b = m.batched() && !dims.empty() ? dims[0] : 1;
    Dims expect = a.dims;
    if (m.batched()) expect[0] = b;
    if (dims != expect || b < 1) {
      std::string want = dims_string(a.dims);
      if (m.batched()) {  // "[B, 3, 224, 224]"
        std::string rest = dims_string(Dims(a.dims.begin() + 1, a.dims.end()));
        want = "[B" + (a.dims.size() > 1 ? ", " + rest.substr(1) : "]") + " with B >= 1";
      }
      throw Error(who + " has shape " + dims_string(dims) + ", expected " + want);
    }
    if (batch >= 0 && b != batch)
      throw Error(who + " has " + std::to_string(b) + " samples, the other inputs " + std::to_string(batch));
    batch = b;
    const uint64_t want = m.bytes(m.inputs()[k], b);
    if (t.bytes != want)
      throw Error(who + " has " + std::to_string(t.bytes) + " bytes, its shape needs " +
                  std::to_string(want));
    if (want > 0 && !t.data) throw Error(who + " has no data");
  }
  return batch < 0 ? 1 : batch;
}

void check_outputs(const LayerGraph& m, frugal_tensor* outputs, size_t n, int64_t batch,
                   std::vector<frugal_tensor*>& ordered) {
  if (n != m.outputs().size())
    throw Error("run: the model has " + std::to_string(m.outputs().size()) + " output(s) (" +
                m.tensor_names(m.outputs()) + "), got " + std::to_string(n));
  if (n > 0 && !outputs) throw Error("run: outputs is NULL");
  ordered.assign(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    size_t k = i;
    if (outputs[i].name) {
      auto it = std::find_if(m.outputs().begin(), m.outputs().end(),
                             [&](int t) { return m.tensors()[size_t(t)].name == outputs[i].name; });
      if (it == m.outputs().end())
        throw Error(std::string("run: no output named '") + outputs[i].name +
                    "' (outputs: " + m.tensor_names(m.outputs()) + ")");
      k = size_t(it - m.outputs().begin());
    }
    if (ordered[k]) throw Error("run: output '" + m.tensors()[size_t(m.outputs()[k])].name + "' given twice");
    ordered[k] = &outputs[i];
  }
  for (size_t k = 0; k < n; ++k) {
    const frugal_tensor& t = *ordered[k];
    const int id = m.outputs()[k];
    const std::string who = "run: output '" + m.tensors()[size_t(id)].name + "'";
    if (t.dtype != FRUGAL_DTYPE_FLOAT32)
      throw Error(who + " has dtype " + dtype_name(DType(t.dtype)) + ", expected float32");
    const Dims want = m.dims_at(id, batch);
    const Dims dims = t.rank > 0 && t.dims ? Dims(t.dims, t.dims + t.rank) : Dims{};
    if (dims != want)
      throw Error(who + " has shape " + dims_string(dims) + ", expected " + dims_string(want));
    if (t.bytes != m.bytes(id, batch))
      throw Error(who + " has " + std::to_string(t.bytes) + " bytes, its shape needs " +
                  std::to_string(m.bytes(id, batch)));
    if (t.bytes > 0 && !t.data) throw Error(who + " has no data");
  }
}

Request check_io(const LayerGraph& m, const frugal_tensor* inputs, size_t n_inputs, frugal_tensor* outputs,
                 size_t n_outputs) {
  Request r;
  r.batch = check_inputs(m, inputs, n_inputs, r.inputs);
  check_outputs(m, outputs, n_outputs, r.batch, r.outputs);
  return r;
}

Request check_request(const LayerGraph& m, const char* plan_json, const frugal_tensor* inputs,
                      size_t n_inputs, frugal_tensor* outputs, size_t n_outputs) {
  Request r = check_io(m, inputs, n_inputs, outputs, n_outputs);
  r.plan = plan_json ? parse_plan(plan_json, m) : whole_batch_plan(m, r.batch);
  return r;
}

void check_layer_and_batch(const LayerGraph& m, const char* what, int layer, int batch) {
  if (layer < 0 || size_t(layer) >= m.layers().size())
    throw Error(std::string(what) + ": layer index " + std::to_string(layer) +
                " is out of range (the model has " + std::to_string(m.layers().size()) + " layers)");
  if (batch < 1) throw Error(std::string(what) + ": batch must be >= 1, got " + std::to_string(batch));
}

void check_time_layer(const LayerGraph& m, int layer, int batch, int repeats) {
  check_layer_and_batch(m, "time_layer", layer, batch);
  if (!m.batched() && batch != 1)
    throw Error("time_layer: the model is not batched (" + m.not_batched_reason() +
                "), only batch 1 can be timed");
  if (repeats < 1) throw Error("time_layer: repeats must be >= 1, got " + std::to_string(repeats));
}

void median_and_spread(std::vector<double>& times, double& median, double& spread) {
  std::sort(times.begin(), times.end());
  const size_t h = times.size() / 2;
  median = times.size() % 2 ? times[h] : 0.5 * (times[h - 1] + times[h]);
  spread = times.back() - times.front();
}

nlohmann::json describe_graph(const LayerGraph& m, const std::function<std::string(int)>& algorithm) {
  using nlohmann::json;
  json d;
  d["batched"] = m.batched();
  if (!m.batched()) d["not_batched_reason"] = m.not_batched_reason();
  json layers = json::array();
  for (size_t l = 0; l < m.layers().size(); ++l) {
    const Layer& L = m.layers()[l];
    json in_layers = json::array(), in_tensors = json::array();
    for (int t : L.inputs) {
      const int p = m.tensors()[size_t(t)].producer;
      in_layers.push_back(p < 0 ? std::string() : m.layers()[size_t(p)].name);
      in_tensors.push_back(m.tensors()[size_t(t)].name);
    }
    const frugal_layer_bytes b = m.layer_bytes(int(l), 1);
    json entry = {{"name", L.name},
                  {"ops", L.ops},
                  {"nodes", L.nodes},
                  {"inputs", in_layers},
                  {"input_tensors", in_tensors},
                  {"output_tensor", m.tensors()[size_t(L.output)].name},
                  {"output_shape", m.tensors()[size_t(L.output)].dims},
                  {"macs_per_sample", L.macs_per_sample},
                  {"in_bytes_per_sample", b.in_bytes},
                  {"out_bytes_per_sample", b.out_bytes},
                  {"ws_bytes", b.ws_bytes}};
    if (algorithm) entry["algorithm"] = algorithm(int(l));
    if (L.gate_kernels > 0)
      entry["gate"] = {{"kernels", L.gate_kernels},
                       {"threshold", L.gate_threshold},
                       {"macs_per_sample", L.gate_macs_per_sample}};
    if (L.skips_off_channels) entry["skips_off_channels"] = true;
    layers.push_back(entry);
  }
  d["layers"] = layers;
  for (const char* key : {"inputs", "outputs"}) {
    json list = json::array();
    for (int t : (std::string(key) == "inputs" ? m.inputs() : m.outputs()))
      list.push_back({{"name", m.tensors()[size_t(t)].name}, {"shape", m.tensors()[size_t(t)].dims}});
    d[key] = list;
  }
  return d;
}

}  // namespace frugal::exec
