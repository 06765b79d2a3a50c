// Memory sizes as people write them: "20MB", "64MiB", "1.5GB", "1048576".
// Decimal units are powers of 1000 (kB/KB, MB, GB, TB), binary ones powers of
// 1024 (KiB, MiB, GiB, TiB); a bare number, or one ending in "B", is bytes.
#pragma once

#include <cstdint>
#include <string>

namespace frugal {

// Throws frugal::Error naming the text when it is not a size. Fractions round
// down to whole bytes (a budget must never grow by rounding).
int64_t parse_bytes(const std::string& text);
// "20.0 MB", "64.0 MiB" style (decimal units unless binary = true); "512 B" below 1 kB.
std::string format_bytes(int64_t bytes, bool binary = false);

}  // namespace frugal
