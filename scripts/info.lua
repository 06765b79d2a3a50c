-- frugal info: describe a model: inputs, outputs, op histogram, parameters, per-layer shapes and MACs
-- Unknown ops are listed together in one warning; everything else is still shown.
local argparse = require("argparse")
local common = require("cli_common")
local fmt = require("textfmt")

local a = argparse.parse(arg, {
  arguments = {{"model", "an ONNX file, or zoo:NAME for a network of the built-in zoo"}},
  options = {
    {"batch", "integer", "batch size for shapes and MACs: sets dimension 1 of every graph input", min = 1,
     default_text = "the model's own input shapes when they are fixed, else 1"},
  },
  json = "print everything as one JSON object",
})

local m = common.load_model(a.model)
local meta = m:metadata()

-- Shapes: at the asked batch, else at the declared shapes, else at batch 1.
local function all_known(values)
  for _, v in ipairs(values) do
    if not v.shape then return false end
    for _, d in ipairs(v.shape) do
      if math.type(d) ~= "integer" then return false end
    end
  end
  return true
end
local declared_inputs = m:inputs()
local batch_note, ok, err
if a.batch then
  ok, err = pcall(m.infer_shapes, m, a.batch)
  batch_note = "batch " .. a.batch
elseif all_known(declared_inputs) then
  ok, err = pcall(m.infer_shapes, m, {})
  batch_note = "the declared input shapes"
else
  ok, err = pcall(m.infer_shapes, m, 1)
  batch_note = "batch 1"
end
local shape_error = not ok and common.message(err) or nil

-- Op histogram, most frequent first.
local nodes = m:nodes()
local counts, ops = {}, {}
for _, n in ipairs(nodes) do
  local op = n.domain ~= "" and n.domain .. "." .. n.op or n.op
  if not counts[op] then ops[#ops + 1] = op end
  counts[op] = (counts[op] or 0) + 1
end
table.sort(ops, function(x, y) return counts[x] > counts[y] or (counts[x] == counts[y] and x < y) end)

-- Per layer: name, op, output shape(s), MACs.
local per_node, total, missing = m:macs()
local layers = {}
for i, n in ipairs(nodes) do
  local shapes = {}
  for _, out in ipairs(n.outputs) do
    if out ~= "" then
      local t = m:tensor(out)
      shapes[#shapes + 1] = t and t.shape or nil
    end
  end
  layers[i] = {name = n.name, op = n.op, output_shapes = shapes, macs = per_node[i].macs}
end
local unknown = m:unknown_ops()
local gating = m:gates()

if a.json then
  local histogram = {}
  for _, op in ipairs(ops) do histogram[#histogram + 1] = {op = op, count = counts[op]} end
  print(frugal.json_encode({
    model = a.model, graph = meta, inputs = declared_inputs, outputs = m:outputs(), shapes_at = batch_note,
    parameters = m:parameter_count(), initializer_values = m:initializer_value_count(), ops = histogram,
    layers = layers, gates = gating.gates, gate_near_misses = gating.near_misses, total_macs = total, nodes_without_macs = missing, unknown_ops = unknown,
    shape_inference_error = shape_error}, 1))
  return
end

local opsets = {}
for _, o in ipairs(meta.opsets) do
  opsets[#opsets + 1] = (o.domain == "" and "ai.onnx" or o.domain) .. " " .. o.version
end
print("model       " .. m:origin())
print("graph       '" .. meta.name .. "', IR " .. meta.ir_version .. ", opset " .. table.concat(opsets, ", ") ..
      (meta.producer_name ~= "" and ", from " .. (meta.producer_name .. " " .. meta.producer_version):gsub("%s+$", "") or ""))
local function value_rows(values)
  local rows = {}
  for _, v in ipairs(values) do rows[#rows + 1] = {v.name, v.dtype or "?", fmt.shape(v.shape)} end
  return fmt.table(rows, nil, "  ")
end
print("inputs (declared)")
print(value_rows(declared_inputs))
print("outputs" .. (ok and " (at " .. batch_note .. ")" or ""))
print(value_rows(m:outputs()))
print("parameters  " .. fmt.commas(m:parameter_count()) .. " learned (weights, biases, BatchNorm scale and shift); " ..
      fmt.commas(m:initializer_value_count()) .. " values stored in initializers")
local hist = {}
for _, op in ipairs(ops) do hist[#hist + 1] = {op, tostring(counts[op])} end
print("ops         " .. #nodes .. " nodes, " .. #ops .. " op types")
print(fmt.table(hist, {nil, "r"}, "  "))
-- Unknown ops first among the problems: all of them, in one block.
if #unknown > 0 then
  print("warning: " .. #unknown .. " node(s) use ops frugal does not know; they get no shapes or MACs:")
  for _, u in ipairs(unknown) do print("  " .. u) end
end
if shape_error then
  print("warning: shape inference failed, shapes below are the ones declared in the file:")
  print("  " .. shape_error)
end
local rows = {{"#", "name", "op", "output shape", "MACs"}}
for i, l in ipairs(layers) do
  local shapes = {}
  for k, s in ipairs(l.output_shapes) do shapes[k] = fmt.shape(s) end
  rows[#rows + 1] = {tostring(i), l.name, l.op, table.concat(shapes, " "), l.macs and fmt.commas(l.macs) or "?"}
end
print("layers (at " .. batch_note .. ")")
print(fmt.table(rows, {"r", nil, nil, nil, "r"}, "  "))
print("total MACs  " .. fmt.commas(total) .. " (" .. fmt.si(total) .. ") at " .. batch_note ..
      (missing > 0 and ", not counting " .. missing .. " node(s) without a count" or ""))
if #gating.gates > 0 then
  print("gates       " .. #gating.gates .. " gated conv layer(s) (docs/GATING.md; the cpu and vulkan executors " ..
        "run only their switched-on kernels)")
  local rows = {{"gated conv", "switched by", "threshold", "channels", "consumers that skip off channels"}}
  for _, gt in ipairs(gating.gates) do
    rows[#rows + 1] = {gt.conv, gt.mul, (gt.strict and "> " or ">= ") .. string.format("%.4g", gt.threshold),
                       tostring(gt.channels), #gt.consumers > 0 and table.concat(gt.consumers, ", ") or "-"}
  end
  print(fmt.table(rows, {nil, nil, "r", "r"}, "  "))
end
if #gating.near_misses > 0 then
  print("not gated   " .. #gating.near_misses .. " Mul node(s) look like a gate but run densely:")
  for _, nm in ipairs(gating.near_misses) do print("  " .. nm.mul .. ": " .. nm.reason) end
end
