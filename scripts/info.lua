-- frugal info: describe a model: inputs, outputs, op histogram, parameters, per-layer shapes and MACs
-- usage: frugal info MODEL.onnx [--batch N]
--   MODEL.onnx   an ONNX model file, or zoo:NAME for a network of the built-in zoo
--   --batch N    batch size for shapes and MACs: sets dimension 0 of every graph
--                input (default: the model's own input shapes when they are
--                fixed, else batch 1)
-- Unknown ops are listed together in one warning; everything else is still shown.
local argparse = require("argparse")
local fmt = require("textfmt")

local a = argparse.parse(arg, {
  usage = "frugal info MODEL.onnx [--batch N]",
  positional = {"model"},
  options = {batch = "integer"},
})
if a.batch and a.batch < 1 then
  io.stderr:write("frugal: --batch must be >= 1, got " .. a.batch .. "\n")
  os.exit(2)
end

local m
local zoo_name = a.model:match("^zoo:(.+)$")
if zoo_name then m = frugal.zoo(zoo_name) else m = frugal.load(a.model) end

local meta = m:metadata()
local opsets = {}
for _, o in ipairs(meta.opsets) do
  opsets[#opsets + 1] = (o.domain == "" and "ai.onnx" or o.domain) .. " " .. o.version
end
print("model       " .. m:origin())
print("graph       '" .. meta.name .. "', IR " .. meta.ir_version .. ", opset " .. table.concat(opsets, ", ") ..
      (meta.producer_name ~= "" and ", from " .. (meta.producer_name .. " " .. meta.producer_version):gsub("%s+$", "") or ""))

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
local batch_note
local ok, err
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

local function value_rows(values)
  local rows = {}
  for _, v in ipairs(values) do rows[#rows + 1] = {v.name, v.dtype or "?", fmt.shape(v.shape)} end
  return fmt.table(rows, nil, "  ")
end
print("inputs (declared)")
print(value_rows(declared_inputs))
print("outputs" .. (ok and " (at " .. batch_note .. ")" or ""))
print(value_rows(m:outputs()))
print("parameters  " .. fmt.commas(m:parameter_count()))

-- Op histogram, most frequent first.
local nodes = m:nodes()
local counts, ops = {}, {}
for _, n in ipairs(nodes) do
  local op = n.domain ~= "" and n.domain .. "." .. n.op or n.op
  if not counts[op] then ops[#ops + 1] = op end
  counts[op] = (counts[op] or 0) + 1
end
table.sort(ops, function(x, y) return counts[x] > counts[y] or (counts[x] == counts[y] and x < y) end)
local hist = {}
for _, op in ipairs(ops) do hist[#hist + 1] = {op, tostring(counts[op])} end
print("ops         " .. #nodes .. " nodes, " .. #ops .. " op types")
print(fmt.table(hist, {nil, "r"}, "  "))

-- Unknown ops first among the problems: all of them, in one block.
local unknown = m:unknown_ops()
if #unknown > 0 then
  print("warning: " .. #unknown .. " node(s) use ops frugal does not know; they get no shapes or MACs:")
  for _, u in ipairs(unknown) do print("  " .. u) end
end
if not ok then
  print("warning: shape inference failed, shapes below are the ones declared in the file:")
  print("  " .. tostring(err):gsub("^model:infer_shapes: ", ""))
end

-- Per layer: name, op, output shape(s), MACs.
local per_node, total, missing = m:macs()
local rows = {{"#", "name", "op", "output shape", "MACs"}}
for i, n in ipairs(nodes) do
  local shapes = {}
  for _, out in ipairs(n.outputs) do
    if out ~= "" then
      local t = m:tensor(out)
      shapes[#shapes + 1] = fmt.shape(t and t.shape)
    end
  end
  local macs = per_node[i].macs
  rows[#rows + 1] = {tostring(i), n.name, n.op, table.concat(shapes, " "), macs and fmt.commas(macs) or "?"}
end
print("layers (at " .. batch_note .. ")")
print(fmt.table(rows, {"r", nil, nil, nil, "r"}, "  "))
print("total MACs  " .. fmt.commas(total) .. " (" .. fmt.si(total) .. ") at " .. batch_note ..
      (missing > 0 and ", not counting " .. missing .. " node(s) without a count" or ""))
