// Informal timing: serialize a ResNet-50 from the zoo (~100 MB of weights), then
// time load_onnx_bytes, load_onnx_file, infer_shapes_for_batch and export.
// Usage: onnx_import_bench [zoo-name] [repeats]. Not a test: no assertions on time.
#include <chrono>
#include <cstdio>
#include <string>

#include "frugal/model/macs.h"
#include "frugal/model/onnx_export.h"
#include "frugal/model/onnx_import.h"
#include "frugal/model/shape_inference.h"
#include "zoo/zoo.h"

using namespace frugal;
using Clock = std::chrono::steady_clock;

static double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "resnet50";
  const int repeats = argc > 2 ? std::stoi(argv[2]) : 5;
  try {
    Graph zoo = build_zoo_model(name, 1);
    const std::string bytes = save_onnx_bytes(zoo);
    const std::string path = "/tmp/frugal_bench_" + name + ".onnx";
    save_onnx_file(zoo, path);
    std::printf("%s: %zu nodes, %.1f MB serialized\n", name.c_str(), zoo.nodes.size(), bytes.size() / 1e6);
    double best_bytes = 1e9, best_file = 1e9, best_infer = 1e9, best_export = 1e9;
    int64_t macs = 0;
    for (int r = 0; r < repeats; ++r) {
      auto t0 = Clock::now();
      Graph g = load_onnx_bytes(bytes.data(), bytes.size(), "<memory>");
      best_bytes = std::min(best_bytes, ms_since(t0));
      t0 = Clock::now();
      Graph gf = load_onnx_file(path);
      best_file = std::min(best_file, ms_since(t0));
      t0 = Clock::now();
      infer_shapes_for_batch(g, 1);
      best_infer = std::min(best_infer, ms_since(t0));
      macs = 0;
      for (const Node& n : g.nodes) macs += node_macs(g, n);
      t0 = Clock::now();
      std::string out = save_onnx_bytes(g);
      best_export = std::min(best_export, ms_since(t0));
    }
    std::printf(
        "best of %d: load_onnx_bytes %.1f ms, load_onnx_file %.1f ms, infer_shapes_for_batch(1) %.2f ms, "
        "save_onnx_bytes %.1f ms; %.3f GMACs per image\n",
        repeats, best_bytes, best_file, best_infer, best_export, macs / 1e9);
    std::remove(path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onnx_import_bench: %s\n", e.what());
    return 1;
  }
}
