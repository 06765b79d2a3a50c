// parse_bytes / format_bytes against sizes worked out by hand.
#include "cli/byte_size.h"

#include <catch2/catch.hpp>

#include "frugal/error.h"

using Catch::Matchers::Contains;

TEST_CASE("parse_bytes: decimal and binary units", "[bytes]") {
  CHECK(frugal::parse_bytes("1048576") == 1048576);
  CHECK(frugal::parse_bytes("20MB") == 20000000);
  CHECK(frugal::parse_bytes("20 MB") == 20000000);
  CHECK(frugal::parse_bytes("20mb") == 20000000);
  CHECK(frugal::parse_bytes("64MiB") == 67108864);
  CHECK(frugal::parse_bytes("1.5GB") == 1500000000);
  CHECK(frugal::parse_bytes("1.5GiB") == 1610612736);
  CHECK(frugal::parse_bytes("512B") == 512);
  CHECK(frugal::parse_bytes("4kB") == 4000);
  CHECK(frugal::parse_bytes("4KiB") == 4096);
  CHECK(frugal::parse_bytes("2TB") == 2000000000000);
  CHECK(frugal::parse_bytes("1.1MB") == 1100000);  // no 1099999 from binary rounding
  CHECK(frugal::parse_bytes("0.5KiB") == 512);
  CHECK(frugal::parse_bytes("1.0000001KB") == 1000);  // fractions of a byte round down
  CHECK(frugal::parse_bytes("0") == 0);
}

TEST_CASE("parse_bytes: refuses what is not a size", "[bytes]") {
  CHECK_THROWS_WITH(frugal::parse_bytes(""), Contains("'' is not a memory size"));
  CHECK_THROWS_WITH(frugal::parse_bytes("MB"), Contains("is not a memory size"));
  CHECK_THROWS_WITH(frugal::parse_bytes("-5MB"), Contains("'-5MB' is not a memory size"));
  CHECK_THROWS_WITH(frugal::parse_bytes("1.2.3MB"), Contains("is not a memory size"));
  CHECK_THROWS_WITH(frugal::parse_bytes("5XB"), Contains("unknown unit 'XB'"));
  CHECK_THROWS_WITH(frugal::parse_bytes("5 MB extra"), Contains("unknown unit"));
  CHECK_THROWS_WITH(frugal::parse_bytes("99999999999999999999"), Contains("too large"));
  CHECK_THROWS_WITH(frugal::parse_bytes("10000000TB"), Contains("too large"));
}

TEST_CASE("format_bytes", "[bytes]") {
  CHECK(frugal::format_bytes(512) == "512 B");
  CHECK(frugal::format_bytes(20000000) == "20.0 MB");
  CHECK(frugal::format_bytes(1500000000) == "1.5 GB");
  CHECK(frugal::format_bytes(67108864, true) == "64.0 MiB");
  CHECK(frugal::format_bytes(1536, true) == "1.5 KiB");
}
