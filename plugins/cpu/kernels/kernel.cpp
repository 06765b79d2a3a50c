// The CPU executor's kernel registry; the kernels register themselves in their
// files (FRUGAL_CPU_KERNEL in kernels/*.cpp).
#include "kernels/kernel.h"

namespace frugal::cpu {

exec::KernelRegistry<Kernel>& kernels() {
  static exec::KernelRegistry<Kernel> registry;
  return registry;
}

}  // namespace frugal::cpu
