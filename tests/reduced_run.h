// Slow tests in their reduced form: with FRUGAL_TEST_REDUCED=1 (the sanitizer
// build sets it for tests labelled slow) they run only the zoo toys and
// squeezenet1_1, so that ASan + UBSan cover their code paths in minutes.
#pragma once

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace frugal_test {

inline bool reduced_run() {
  const char* v = std::getenv("FRUGAL_TEST_REDUCED");
  return v && std::strcmp(v, "1") == 0;
}

// True when zoo network `name` is left out of this (reduced) run; says so.
inline bool left_out_when_reduced(const std::string& name) {
  if (!reduced_run() || name.rfind("toy_", 0) == 0 || name == "squeezenet1_1") return false;
  std::cout << "reduced run (FRUGAL_TEST_REDUCED=1): " << name << " left out\n";
  return true;
}

}  // namespace frugal_test
