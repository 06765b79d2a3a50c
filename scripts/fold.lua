-- frugal fold: fold BatchNorm layers into neighbouring convolutions (BaN-OFF or naive) and write the model
-- Prints each BatchNorm node: folded (into which nodes, in which direction) or
-- kept (and why), then a summary line comparing both methods.
local argparse = require("argparse")
local common = require("cli_common")
local fmt = require("textfmt")

local a = argparse.parse(arg, {
  arguments = {{"input", "the model: an ONNX file or zoo:NAME", metavar = "IN"},
               {"output", "where to write the folded model (.onnx)", metavar = "OUT"}},
  options = {
    {"method", "string", "banoff (every BN that can be removed exactly) or naive (only a BN right after a " ..
     "conv or Gemm)", default = "banoff", choices = {"banoff", "naive"}},
    {"report", "output", "write the chosen method's report as JSON, with both methods' counts",
     default_text = "not written"},
  },
})
common.check_writable(a.output, "OUT")

local m = common.load_model(a.input)
local results = {}
for _, method in ipairs({"banoff", "naive"}) do
  local folded, report = common.try(frugal.fold, m, {method = method})
  results[method] = {model = folded, report = report}
end
local chosen = results[a.method]
local report = chosen.report

local label = {banoff = "BaN-OFF", naive = "naive"}
local other = a.method == "banoff" and "naive" or "banoff"
local other_folded = {}
for _, n in ipairs(results[other].report.nodes) do other_folded[n.name] = n.folded end

local rows = {{"BatchNorm", label[a.method], label[other], "how (" .. label[a.method] .. ")"}}
for _, n in ipairs(report.nodes) do
  local what
  if n.folded then
    what = (n.direction or "") .. " into " .. table.concat(n.into or {}, ", ")
    if n.compensated and #n.compensated > 0 then what = what .. "; compensated in " .. table.concat(n.compensated, ", ") end
  else
    what = tostring(n.reason or "?"):gsub("^kept:%s*", "")
  end
  rows[#rows + 1] = {n.name, n.folded and "folded" or "kept", other_folded[n.name] and "folded" or "kept", what}
end
if #report.nodes > 0 then
  print(fmt.table(rows, nil, ""))
else
  print("no BatchNormalization node in " .. a.input)
end

common.try(chosen.model.save, chosen.model, a.output)
if a.report then
  local r = {}
  for k, v in pairs(report) do r[k] = v end
  r.input = a.input
  r.output = a.output
  r.comparison = {banoff = {bn_folded = results.banoff.report.bn_folded},
                  naive = {bn_folded = results.naive.report.bn_folded}}
  common.try(frugal.save_json, r, a.report)
end
print(string.format("summary: %d BatchNorm node%s; naive folds %d, BaN-OFF folds %d; wrote %s (%s: %d folded, %s -> %s learned parameters)",
  report.bn_total, report.bn_total == 1 and "" or "s", results.naive.report.bn_folded, results.banoff.report.bn_folded,
  a.output, label[a.method], report.bn_folded, fmt.commas(m:parameter_count()),
  fmt.commas(chosen.model:parameter_count())))
