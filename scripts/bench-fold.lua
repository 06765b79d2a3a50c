-- frugal bench-fold: BatchNorm folding on the zoo: BNs folded by naive and BaN-OFF, parameters removed, time saved
-- The BaN-OFF paper's Tables 1-3 in form: per network the BN count, the BNs each
-- method folds, the parameters each removes, and the time of the folded networks
-- against the unfolded one on the CPU executor (time reduction %). All variants
-- of one network run in the same process on the same random input, and their
-- outputs are checked against the unfolded network's.
-- The zoo's networks are torchvision layouts, where every BN follows a conv, so
-- naive folds as many as BaN-OFF. The last row is a graph built here in the shape
-- of the paper's Figure 2(c) -- a BN after an Add whose sum a second conv also
-- reads -- where naive folds nothing and BaN-OFF folds (with a compensation).
local argparse = require("argparse")
local common = require("cli_common")
local fmt = require("textfmt")
local bench = require("bench_common")

local a = argparse.parse(arg, {
  options = {
    {"nets", "string", "zoo networks, comma-separated, or \"all\" (toys included)", default = "all",
     metavar = "L"},
    {"batch", "integer", "samples per run", default = 1, min = 1, max = 1024},
    {"repeat", "integer", "timed rounds; each runs the unfolded, the naive and the BaN-OFF network once, in " ..
     "turn, after one warm-up round; medians", default = 5, min = 1},
    {"threads", "integer", "the CPU executor's threads", min = 1, default_text = "one per core"},
    {"no_toy", "flag", "skip the Figure 2(c) graph"},
  },
  progress = true,
})
local progress = require("progress").new(a.quiet)
local nets = bench.nets(a.nets)

-- ---- A minimal ONNX writer (protobuf wire format), for the Figure 2(c) graph ----
-- The Lua module loads models but does not build them; the graph below is
-- small enough to write field by field.
local function varint(n)
  local out = {}
  repeat
    local b = n & 0x7f
    n = n >> 7  -- logical shift: negative int64 values take 10 bytes, as protobuf wants
    out[#out + 1] = string.char(n ~= 0 and (b | 0x80) or b)
  until n == 0
  return table.concat(out)
end
local function field_varint(num, v) return varint(num << 3) .. varint(v) end
local function field_bytes(num, s) return varint((num << 3) | 2) .. varint(#s) .. s end
local function concat_fields(list) return table.concat(list) end

local function tensor_proto(name, dims, values)
  local f = {}
  for _, d in ipairs(dims) do f[#f + 1] = field_varint(1, d) end
  f[#f + 1] = field_varint(2, 1)  -- FLOAT
  f[#f + 1] = field_bytes(8, name)
  local raw = {}
  for i, v in ipairs(values) do raw[i] = string.pack("<f", v) end
  f[#f + 1] = field_bytes(9, table.concat(raw))
  return concat_fields(f)
end

local function value_info(name, dims)  -- dims: integers or strings (symbolic)
  local shape = {}
  for _, d in ipairs(dims) do
    shape[#shape + 1] = field_bytes(1, type(d) == "string" and field_bytes(2, d) or field_varint(1, d))
  end
  local tensor_type = field_varint(1, 1) .. field_bytes(2, concat_fields(shape))
  return field_bytes(1, name) .. field_bytes(2, field_bytes(1, tensor_type))
end

local function ints_attribute(name, values)
  local f = {field_bytes(1, name)}
  for _, v in ipairs(values) do f[#f + 1] = field_varint(8, v) end
  f[#f + 1] = field_varint(20, 7)  -- INTS
  return concat_fields(f)
end

local function node_proto(op, name, inputs, outputs, attributes)
  local f = {}
  for _, i in ipairs(inputs) do f[#f + 1] = field_bytes(1, i) end
  for _, o in ipairs(outputs) do f[#f + 1] = field_bytes(2, o) end
  f[#f + 1] = field_bytes(3, name)
  f[#f + 1] = field_bytes(4, op)
  for _, at in ipairs(attributes or {}) do f[#f + 1] = field_bytes(5, at) end
  return concat_fields(f)
end

-- [N,C,H,W] -> [N,C,H,W]:
--   r = Relu(stem(x));  s = Add(conv_a(r), conv_b(r))
--   y = Add(Relu(BN(s)), conv_c(s))          (conv_c: 1x1, reads the sum too)
-- Naive cannot fold the BN: its input is an Add (not a chain) and its output
-- goes through a Relu. BaN-OFF folds it backward into conv_a and conv_b and
-- compensates conv_c (1x1, unpadded, so it can take the shift).
local function figure_2c_model(C, H, seed)
  local rng_state = seed
  local function rand()  -- uniform [0, 1), deterministic (LCG), independent of math.random's state
    rng_state = (rng_state * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
    return (rng_state >> 11) / (1 << 52)
  end
  local function uniform(n, lo, hi)
    local t = {}
    for i = 1, n do t[i] = lo + (hi - lo) * rand() end
    return t
  end
  local inits, nodes = {}, {}
  local function conv(name, x, cin, cout, k)
    local bound = math.sqrt(6 / (cin * k * k))
    inits[#inits + 1] = tensor_proto(name .. ".weight", {cout, cin, k, k}, uniform(cout * cin * k * k, -bound, bound))
    inits[#inits + 1] = tensor_proto(name .. ".bias", {cout}, uniform(cout, -0.1, 0.1))
    local p = (k - 1) // 2
    nodes[#nodes + 1] = node_proto("Conv", name, {x, name .. ".weight", name .. ".bias"}, {name},
      {ints_attribute("kernel_shape", {k, k}), ints_attribute("pads", {p, p, p, p})})
    return name
  end
  local function op(kind, name, inputs)
    nodes[#nodes + 1] = node_proto(kind, name, inputs, {name})
    return name
  end
  local r = op("Relu", "stem.relu", {conv("stem", "input", 3, C, 3)})
  local s = op("Add", "sum", {conv("conv_a", r, C, C, 3), conv("conv_b", r, C, C, 1)})
  local bn = {"bn.scale", "bn.bias", "bn.mean", "bn.var"}
  local ranges = {{0.5, 1.5}, {-0.5, 0.5}, {-0.5, 0.5}, {0.5, 1.5}}
  for i, n in ipairs(bn) do inits[#inits + 1] = tensor_proto(n, {C}, uniform(C, ranges[i][1], ranges[i][2])) end
  nodes[#nodes + 1] = node_proto("BatchNormalization", "bn", {s, bn[1], bn[2], bn[3], bn[4]}, {"bn"})
  local y = op("Add", "output", {op("Relu", "bn.relu", {"bn"}), conv("conv_c", s, C, C, 1)})
  local graph = {}
  for _, n in ipairs(nodes) do graph[#graph + 1] = field_bytes(1, n) end
  graph[#graph + 1] = field_bytes(2, "figure_2c")
  for _, t in ipairs(inits) do graph[#graph + 1] = field_bytes(5, t) end
  graph[#graph + 1] = field_bytes(11, value_info("input", {"N", 3, H, H}))
  graph[#graph + 1] = field_bytes(12, value_info(y, {"N", C, H, H}))
  local opset = field_bytes(1, "") .. field_varint(2, 13)
  local model = field_varint(1, 8) .. field_bytes(2, "frugal bench-fold") .. field_bytes(8, opset) ..
                field_bytes(7, concat_fields(graph))
  local path = os.tmpname() .. ".onnx"
  local f = assert(io.open(path, "wb"))
  f:write(model)
  f:close()
  local ok, m = pcall(frugal.load, path)
  os.remove(path)
  if not ok then common.fail("the Figure 2(c) graph did not load: " .. common.message(m)) end
  return m
end

-- ---- The benchmark -------------------------------------------------------------

local function max_rel_diff(y, ref)
  local scale = math.max(1, math.abs(ref:max()), math.abs(ref:min()))
  if type(y) == "table" then
    local d = 0
    for name, t in pairs(y) do d = math.max(d, t:max_abs_diff(ref[name]) / scale) end
    return d
  end
  return y:max_abs_diff(ref) / scale
end

local function bench_network(label, original)
  progress:stage(label .. ": folding")
  local variants = {{name = "unfolded", model = original}}
  for _, method in ipairs({"naive", "banoff"}) do
    local folded, report = common.try(frugal.fold, original, {method = method})
    variants[#variants + 1] = {name = method, model = folded, report = report}
  end
  local x = common.try(frugal.random_input, original, a.batch, 0)
  for _, v in ipairs(variants) do
    v.ex = common.try(frugal.executor, v.model, {executor = "cpu", threads = a.threads})
    v.run = function()
      local y, rep = common.try(v.ex.run, v.ex, x)
      v.output = y
      return rep.seconds
    end
    v.name = label .. ": " .. v.name
  end
  bench.interleave(variants, a["repeat"], progress)
  progress:done()
  local u, n, b = variants[1], variants[2], variants[3]
  local diff = math.max(max_rel_diff(n.output, u.output), max_rel_diff(b.output, u.output))
  local function comp(r) local c = 0 for _, nd in ipairs(r.nodes) do c = c + #(nd.compensated or {}) end return c end
  return {label, tostring(b.report.bn_total), tostring(n.report.bn_folded), tostring(b.report.bn_folded),
          tostring(comp(b.report)), fmt.commas(n.report.parameters_removed), fmt.commas(b.report.parameters_removed),
          common.seconds(u.median), common.seconds(n.median), common.seconds(b.median),
          common.percent(1 - n.median / u.median), common.percent(1 - b.median / u.median),
          string.format("%.1e", diff)},
         diff
end

print(bench.machine_line())
print(string.format("runs        batch %d, CPU executor%s; %d timed rounds after a warm-up round, each round running " ..
  "unfolded, naive, BaN-OFF in turn; medians", a.batch, a.threads and (", " .. a.threads .. " threads") or "",
  a["repeat"]))
local row = bench.row_printer({-23, 3, 5, 7, 5, 13, 15, 9, 9, 9, 11, 13, 12})
row({"network", "BN", "naive", "BaN-OFF", "comp.", "params -naive", "params -BaN-OFF", "unfolded", "naive",
     "BaN-OFF", "saved naive", "saved BaN-OFF", "max rel diff"})
local worst = 0
local t0 = frugal.clock()
local function add(label, model)
  local cells, diff = bench_network(label, model)
  row(cells)
  worst = math.max(worst, diff)
end
for _, name in ipairs(nets) do add(name, common.load_model("zoo:" .. name)) end
if not a.no_toy then add("figure_2c (64ch, 56x56)", figure_2c_model(64, 56, 1)) end
print("columns     BN: BatchNorm nodes; naive / BaN-OFF: BNs folded; comp.: layers BaN-OFF compensated; params -X: " ..
      "initializer values removed by X (BatchNorm scale, shift and statistics); unfolded / naive / BaN-OFF: median time per run; saved X: time reduction of X against " ..
      "unfolded; max rel diff: largest |folded - unfolded| output difference over max(1, |output|)")
print(string.format("done in %s; outputs of folded networks agree with the unfolded ones to %.1e (relative)",
  common.seconds(frugal.clock() - t0), worst))
if worst > 1e-3 then common.fail("a folded network's output differs from the unfolded one by " .. worst) end
