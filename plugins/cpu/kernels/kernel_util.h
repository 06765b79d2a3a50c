// Small helpers shared by the kernel factories: messages that name the node,
// constant inputs, attribute arithmetic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "util/error.h"

namespace frugal::cpu {

// frugal::Error "<Op> node '<name>': msg" (malformed model: invalid argument).
[[noreturn]] void fail(const KernelSpec& s, const std::string& msg);
// sdk::Failure(FRUGAL_ERR_UNSUPPORTED) "<Op> node '<name>': msg".
[[noreturn]] void unsupported(const KernelSpec& s, const std::string& msg);

// Input i, which must be present (else fail naming its role).
const InputInfo& required_input(const KernelSpec& s, size_t i, const char* role);
bool has_input(const KernelSpec& s, size_t i);
// Values of constant input i as floats / int64; unsupported() when it is computed
// at run time (this executor prepares weights and shapes at compile time).
std::vector<float> constant_floats(const KernelSpec& s, size_t i, const char* role);
std::vector<int64_t> constant_ints(const KernelSpec& s, size_t i, const char* role);
// The activation input i must be a float32 run-time tensor.
void require_float_activation(const KernelSpec& s, size_t i, const char* role);

int64_t product(const Dims& d, size_t from = 0, size_t to = SIZE_MAX);
std::string dims_string(const Dims& d);
// Axis in [-rank, rank) -> [0, rank); fail otherwise.
int64_t normalize_axis(const KernelSpec& s, int64_t axis, int64_t rank, const char* what = "axis");

}  // namespace frugal::cpu
