// The C face of the CPU executor: its descriptor and the placement extension
// (FRUGAL_EXT_PLACEMENT: the moves a plan makes in the arena, and their cost).
// The executor table is the SDK's (executor_sdk.hpp), generated from
// frugal::cpu::Executor.
#include <cstring>

#include "executor.h"
#include "frugal/executor_sdk.hpp"

namespace {

const void* get_extension(const char* id) {
  if (id && std::strcmp(id, FRUGAL_EXT_PLACEMENT) == 0)
    return &frugal::sdk::placement_extension<frugal::cpu::Executor>();
  if (id && std::strcmp(id, FRUGAL_EXT_HOST_WEIGHTS) == 0)
    return &frugal::sdk::host_weights_extension<frugal::cpu::Executor>();
  return nullptr;
}

}  // namespace

FRUGAL_DEFINE_PLUGIN_EXT(
    FRUGAL_KIND_EXECUTOR, "cpu", "0.1.0",
    "Reference CPU executor: im2col + OpenBLAS sgemm, direct depthwise, one arena of exactly the budget",
    frugal::sdk::executor_api<frugal::cpu::Executor>(), &get_extension)
