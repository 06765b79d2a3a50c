// frugal's one exception type inside the host and plugins (never across the C
// ABI). Messages name the file, node or argument at fault.
#pragma once

#include <stdexcept>
#include <string>

namespace frugal {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace frugal
