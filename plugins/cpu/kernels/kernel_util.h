// The helpers the kernel factories use (messages that name the node, constant
// inputs, attribute arithmetic) are shared with the Vulkan executor
// (plugins/common/kernel_spec.h); this header brings them into frugal::cpu.
#pragma once

#include <cstdlib>
#include <cstring>

#include "common/kernel_spec.h"
#include "frugal/error.h"
#include "kernels/kernel.h"

namespace frugal::cpu {

using exec::constant_floats;
using exec::constant_ints;
using exec::dims_string;
using exec::fail;
using exec::has_input;
using exec::normalize_axis;
using exec::product;
using exec::require_float_activation;
using exec::required_input;
using exec::unsupported;

// An environment variable set to "0" turns a kernel path off (for comparisons).
inline bool switched_off(const char* name) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, "0") == 0;
}

}  // namespace frugal::cpu
