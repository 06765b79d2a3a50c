#include "cli/byte_size.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "frugal/error.h"

namespace frugal {

namespace {
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

int64_t parse_bytes(const std::string& text) {
  const std::string usage = " (write e.g. 20MB, 64MiB, 1.5GB or 1048576; MB = 10^6 bytes, MiB = 2^20)";
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  size_t num_start = i;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  std::string number = text.substr(num_start, i - num_start);
  if (number.empty() || number == "." || number.find('.') != number.rfind('.'))
    throw Error("'" + text + "' is not a memory size" + usage);
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  size_t unit_end = text.size();
  while (unit_end > i && std::isspace(static_cast<unsigned char>(text[unit_end - 1]))) --unit_end;
  std::string unit = lower(text.substr(i, unit_end - i));

  double scale;
  if (unit.empty() || unit == "b")
    scale = 1;
  else if (unit == "kb" || unit == "k")
    scale = 1e3;
  else if (unit == "mb" || unit == "m")
    scale = 1e6;
  else if (unit == "gb" || unit == "g")
    scale = 1e9;
  else if (unit == "tb" || unit == "t")
    scale = 1e12;
  else if (unit == "kib")
    scale = 1024.0;
  else if (unit == "mib")
    scale = 1024.0 * 1024;
  else if (unit == "gib")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "tib")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else
    throw Error("'" + text + "': unknown unit '" + text.substr(i, unit_end - i) + "'" + usage);

  // Whole numbers are parsed exactly; fractions through double (53 bits: exact
  // for any realistic size).
  if (number.find('.') == std::string::npos) {
    errno = 0;
    unsigned long long whole = std::strtoull(number.c_str(), nullptr, 10);
    double total = static_cast<double>(whole) * scale;
    if (errno == ERANGE || total >= 9.2e18) throw Error("'" + text + "' is too large a memory size");
    uint64_t s = static_cast<uint64_t>(scale);
    return static_cast<int64_t>(whole * s);
  }
  double v = std::strtod(number.c_str(), nullptr) * scale;
  if (!std::isfinite(v) || v >= 9.2e18) throw Error("'" + text + "' is too large a memory size");
  // Round down, but absorb the representation error of products like 1.1 * 1e6.
  return static_cast<int64_t>(std::floor(v + 1e-6));
}

std::string format_bytes(int64_t bytes, bool binary) {
  const char* dec[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  const char* bin[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double base = binary ? 1024.0 : 1000.0;
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::fabs(v) >= base && u < 5) {
    v /= base;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, binary ? bin[u] : dec[u]);
  return buf;
}

}  // namespace frugal
