// The forced BLAS runs (labels avx2, avx512) are forced for real: with
// OPENBLAS_CORETYPE set, OpenBLAS reports that core; without it, whatever it
// chose for this CPU is printed (the default run's kernels).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <string>

extern "C" char* openblas_get_corename(void);
extern "C" char* openblas_get_config(void);

TEST_CASE("OpenBLAS runs the kernels OPENBLAS_CORETYPE asks for", "[cpu][blas]") {
  const std::string core = openblas_get_corename();
  std::cout << "OpenBLAS core: " << core << " (" << openblas_get_config() << ")\n";
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  if (!forced || !*forced) return;  // the default run: nothing forced, nothing to check
  std::string want = forced, got = core;
  for (char& c : want) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (char& c : got) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  INFO("OPENBLAS_CORETYPE=" << forced << " (OpenBLAS built without DYNAMIC_ARCH ignores it)");
  CHECK(got == want);
}
