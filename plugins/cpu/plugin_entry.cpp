// The C face of the CPU executor: its descriptor. The executor table is the
// SDK's (executor_sdk.hpp), generated from frugal::cpu::Executor.
#include "executor.h"
#include "frugal/executor_sdk.hpp"

FRUGAL_DEFINE_PLUGIN(
    FRUGAL_KIND_EXECUTOR, "cpu", "0.1.0",
    "Reference CPU executor: im2col + OpenBLAS sgemm, direct depthwise, one arena of exactly the budget",
    frugal::sdk::executor_api<frugal::cpu::Executor>())
