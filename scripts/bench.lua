-- frugal bench: CPU executor throughput (images/s, GFLOP/s) next to OpenBLAS sgemm, measured in the same run
-- The table comes from the cpu_bench program (plugins/cpu/bench, built next to
-- the frugal executable): per network and batch, images/s and GFLOP/s
-- (2 x MACs / time) of a whole-graph run, the GFLOP/s of the conv layers alone
-- (their time_layer medians summed), and that rate as a share of OpenBLAS
-- sgemm on a typical conv GEMM measured in the same process (before the first
-- network and again at the end, so drift on a busy machine shows).
-- The headline: ResNet-50's conv layers at batch 8 against sgemm (target >= 60%).
local argparse = require("argparse")
local common = require("cli_common")
local bench = require("bench_common")

local a = argparse.parse(arg, {
  options = {
    {"nets", "string", "zoo networks, comma-separated, or \"all\" (a few minutes on 2 cores for the default)",
     default = "resnet50,resnet18,mobilenet_v2,squeezenet1_1", metavar = "L"},
    {"batches", "list", "batch sizes", default = {1, 8}, min = 1, max = 1024},
    {"repeat", "integer", "timed runs per network and batch size after a warm-up, median kept; also the " ..
     "repeats of each conv layer's time_layer", default = 5, min = 1},
    {"threads", "integer", "the CPU executor's threads", min = 1, default_text = "one per core"},
    {"per_op", "flag", "also the seconds of the last run summed by each layer's ops"},
  },
})
local nets = bench.nets(a.nets, {exclude_toys = true})

local exe = bench.sibling_program("cpu_bench")
local batches = {}
for i, b in ipairs(a.batches) do batches[i] = tostring(b) end
local cmd = {exe, "--models", table.concat(nets, ","), "--batches", table.concat(batches, ","),
             "--repeats", tostring(a["repeat"])}
if a.threads then cmd[#cmd + 1] = "--threads"; cmd[#cmd + 1] = tostring(a.threads) end
if a.per_op then cmd[#cmd + 1] = "--per-op" end

print("command     " .. table.concat(cmd, " "))
print(bench.machine_line())
local lines = bench.run_program(cmd)  -- echoes each line as it comes

-- Headline: conv GFLOP/s of resnet50 at batch 8 as a share of sgemm, from the table.
local sgemm_before, sgemm_after
local rows = {}
for _, line in ipairs(lines) do
  local g = line:match("^sgemm %S+ %(M x N x K, typical conv GEMM%): ([%d.]+) GFLOP/s")
  if g then sgemm_before = tonumber(g) end
  g = line:match("^sgemm %S+ again at the end: ([%d.]+) GFLOP/s")
  if g then sgemm_after = tonumber(g) end
  local net, batch, ips, gf, conv_gf, share = line:match("^(%S+)%s+(%d+)%s+([%d.]+)%s+([%d.]+)%s+([%d.]+)%s+(%d+)%%")
  if net then rows[#rows + 1] = {net = net, batch = tonumber(batch), conv_gflops = tonumber(conv_gf),
                                 share = tonumber(share) / 100} end
end
for _, r in ipairs(rows) do
  if r.net == "resnet50" and r.batch == 8 then
    local lo = math.min(sgemm_before or math.huge, sgemm_after or math.huge)
    local hi = math.max(sgemm_before or 0, sgemm_after or 0)
    print(string.format("headline    resnet50 conv layers at batch 8: %.1f GFLOP/s = %s of sgemm before " ..
      "(%s..%s against the sgemm rates before and after; target >= 60%%)", r.conv_gflops, common.percent(r.share),
      common.percent(r.conv_gflops / hi), common.percent(r.conv_gflops / lo)))
  end
end
