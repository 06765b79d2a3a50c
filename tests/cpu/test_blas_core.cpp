// The forced BLAS runs (labels avx2, avx512) are forced for real: with
// OPENBLAS_CORETYPE set, OpenBLAS reports that core; without it, whatever it
// chose for this CPU is printed (the default run's kernels).
#include <catch2/catch.hpp>
#ifdef FRUGAL_HAVE_DNNL
#include <dnnl.hpp>
#endif
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

#ifdef FRUGAL_HAVE_DNNL
// Likewise oneDNN: ONEDNN_MAX_CPU_ISA=AVX2 keeps it to AVX2 kernels even where the CPU has AVX-512.
TEST_CASE("oneDNN runs the kernels ONEDNN_MAX_CPU_ISA allows", "[cpu][blas]") {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  std::cout << "oneDNN effective ISA: 0x" << std::hex << int(isa) << std::dec << "\n";
  const char* forced = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (!forced || !*forced) return;  // the default run: nothing forced, nothing to check
  INFO("ONEDNN_MAX_CPU_ISA=" << forced);
  if (std::string(forced) == "AVX2") CHECK(isa == dnnl::cpu_isa::avx2);
  if (std::string(forced) == "AVX512_CORE") CHECK(isa == dnnl::cpu_isa::avx512_core);
}
#endif
