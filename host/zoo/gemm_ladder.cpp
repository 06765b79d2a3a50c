// gemm_ladder: a training network for the time predictor (docs/PREDICTOR.md),
// not a torchvision model. A chain of linear layers (Gemm + ReLU) whose weights
// span 0.5 MB to 176 MB, so that the predictor's basis holds Gemms that read
// their weights from cache and Gemms that stream them from memory (AlexNet's
// and VGG's classifiers: 16 to 411 MB). The widths are not those of any
// evaluated network. [N,3,32,32] -> flatten (3072) -> 512 -> 256 -> 3584 ->
// 2560 -> 7168 -> 6144 -> 1000: 80,351,976 parameters.
#include "zoo/graph_builder.h"
#include "zoo/networks.h"

namespace frugal::zoo {

Graph build_gemm_ladder(uint64_t seed) {
  GraphBuilder b("gemm_ladder", seed);
  std::string x = b.flatten(b.input(3, 32, 32), "flatten");
  const int64_t widths[] = {512, 256, 3584, 2560, 7168, 6144};
  int i = 0;
  for (const int64_t w : widths) {
    const std::string p = "fc." + std::to_string(i++);
    x = b.relu(b.gemm(x, p, w), p + ".relu");
  }
  return b.finish(b.gemm(x, "fc." + std::to_string(i), 1000));
}

}  // namespace frugal::zoo
