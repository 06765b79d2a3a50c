// Slow: every zoo network (except vgg16_bn, the slowest to evaluate in float64)
// through the cpu executor at batch 2 against the float64 reference; then a
// random plan on the same inputs gives the same outputs, with the measured peak
// equal to the memory model's prediction.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "cpu_plugin.h"
#include "memory_model.h"
#include "reduced_run.h"
#include "reference.h"
#include "zoo/zoo.h"

using cpu_test::HostTensor;

TEST_CASE("zoo networks match the float64 reference and plan runs match whole-batch runs",
          "[cpu][zoo][slow]") {
  for (const std::string& name : frugal::zoo_names()) {
    if (name == "vgg16_bn" || frugal_test::left_out_when_reduced(name)) continue;
    const frugal::Graph g = frugal::build_zoo_model(name, 11);
    cpu_test::Executor ex(g, "{\"threads\": 2}");
    INFO(name << ": " << ex.created.message);
    REQUIRE(ex.ok());
    cpu_test::MemoryModel mm(ex);
    const nlohmann::json d = mm.description();
    const int64_t batch = 2;
    std::vector<int64_t> dims = d["inputs"][0]["shape"].get<std::vector<int64_t>>();
    dims[0] = batch;
    int64_t n = 1;
    for (int64_t x : dims) n *= x;
    const std::vector<HostTensor> in = {
        HostTensor{d["inputs"][0]["name"], dims, cpu_test::random_floats(size_t(n), 3)}};
    std::vector<HostTensor> out;
    nlohmann::json report;
    REQUIRE(ex.run(in, out, nullptr, &report).ok());
    CHECK(report["peak_bytes"].get<uint64_t>() == mm.peak(mm.whole_batch(batch), batch));

    frugal::RefValues ref_in;
    ref_in[in[0].name] = frugal::RefTensor{dims, std::vector<double>(in[0].data.begin(), in[0].data.end())};
    const frugal::RefValues want = frugal::reference_run(g, ref_in);
    const frugal::RefTensor& r = want.at(out[0].name);
    REQUIRE(r.dims == out[0].dims);
    double scale = 0, worst = 0;
    for (double v : r.data) scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < r.data.size(); ++i)
      worst = std::max(worst, std::fabs(double(out[0].data[i]) - r.data[i]));
    INFO("max |cpu - reference| = " << worst << ", max |reference| = " << scale);
    // Relative to the output's largest magnitude (as the Vulkan agreement is):
    // a bound with a floor of 1 would let a 0.05-scale output be 2% wrong.
    REQUIRE(scale > 0);
    CHECK(worst <= 1e-4 * scale);

    std::mt19937_64 rng(9);
    const std::vector<cpu_test::Step> steps = mm.random_plan(batch, rng);
    std::vector<HostTensor> planned;
    REQUIRE(ex.run(in, planned, cpu_test::MemoryModel::to_json(steps, d), &report).ok());
    CHECK(report["peak_bytes"].get<uint64_t>() == mm.peak(steps, batch));
    double diff = 0;
    for (size_t i = 0; i < out[0].data.size(); ++i)
      diff = std::max(diff, double(std::fabs(out[0].data[i] - planned[0].data[i])));
    CHECK(diff <= 1e-5 * scale);
  }
}
