// .npy reading and writing. The reference files are built byte by byte here
// from the format NumPy documents (magic, version, little-endian header length,
// a Python dict literal padded with spaces to a 64-byte boundary, then data).
#include "tensor/npy.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "frugal/error.h"
#include "lua_fixture.h"

using Catch::Matchers::Contains;

namespace {

// A .npy file as NumPy writes it: version (major), dict, raw data.
std::string npy_file(int major, const std::string& dict, const std::string& data) {
  size_t len_bytes = major == 1 ? 2 : 4;
  size_t total = 8 + len_bytes + dict.size() + 1;
  std::string header = dict + std::string(64 - total % 64, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < len_bytes; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string float_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

std::string temp_path(const std::string& name) {
  return std::string(FRUGAL_TEST_BINARY_DIR) + "/npy_test_" + std::to_string(getpid()) + "_" + name;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string load_error(const std::string& bytes, const std::string& name) {
  std::string path = temp_path(name);
  write_file(path, bytes);
  std::string msg;
  try {
    frugal::load_npy(path);
  } catch (const frugal::Error& e) {
    msg = e.what();
  }
  std::remove(path.c_str());
  CHECK_THAT(msg, Contains("'" + path + "'"));  // every message names the file
  return msg;
}

const std::string k2x3 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

}  // namespace

TEST_CASE("npy: reads NumPy's version 1, 2 and 3 files", "[npy]") {
  std::vector<float> v{1.5f, -2.f, 3.25f, 4.f, 5.f, -6.75f};
  for (int major : {1, 2, 3}) {
    frugal::Tensor t = frugal::parse_npy(npy_file(major, k2x3, float_bytes(v)), "mem.npy");
    CHECK(t.dims == std::vector<int64_t>{2, 3});
    CHECK(t.data == v);
  }
  // 1-D "(4,)", scalar "()", empty "(0, 5)", and keys in another order.
  auto one = frugal::parse_npy(
      npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", float_bytes({1, 2, 3, 4})),
      "m");
  CHECK(one.dims == std::vector<int64_t>{4});
  CHECK(one.data[3] == 4);
  auto scalar = frugal::parse_npy(
      npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", float_bytes({7})), "m");
  CHECK(scalar.dims.empty());
  CHECK(scalar.data == std::vector<float>{7});
  auto empty =
      frugal::parse_npy(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }", ""), "m");
  CHECK(empty.dims == std::vector<int64_t>{0, 5});
  auto reordered = frugal::parse_npy(
      npy_file(1, "{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}", float_bytes({8, 9})), "m");
  CHECK(reordered.data == std::vector<float>{8, 9});
}

TEST_CASE("npy: writes exactly NumPy's layout", "[npy]") {
  frugal::Tensor t({2, 3});
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = 0.5f * static_cast<float>(i) - 1;
  std::string bytes = frugal::npy_bytes(t);
  CHECK(bytes == npy_file(1, k2x3, float_bytes(t.data)));
  CHECK((bytes.size() - t.bytes()) % 64 == 0);
  frugal::Tensor v({5});
  CHECK(frugal::npy_bytes(v).find("'shape': (5,), }") != std::string::npos);
  frugal::Tensor s(std::vector<int64_t>{});
  CHECK(frugal::npy_bytes(s).find("'shape': (), }") != std::string::npos);
}

TEST_CASE("npy: file round trip, also from Lua", "[npy]") {
  frugal::Tensor t({3, 1, 4});
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<float>(i * i) / 7.0f;
  std::string path = temp_path("roundtrip.npy");
  frugal::save_npy(t, path);
  frugal::Tensor back = frugal::load_npy(path);
  CHECK(back.dims == t.dims);
  CHECK(back.data == t.data);

  LuaFixture f;
  f.run("t = frugal.load_npy('" + path + "'); t:set(3, 1, 4, 99); t:save_npy('" + path + "')");
  CHECK(f.number("t:get(2, 1, 1)") == Approx(t.data[4]));
  frugal::Tensor after = frugal::load_npy(path);
  CHECK(after.data.back() == 99);
  CHECK(std::equal(after.data.begin(), after.data.end() - 1, t.data.begin()));
  std::remove(path.c_str());
}

TEST_CASE("npy: refuses what frugal cannot use, naming the file", "[npy]") {
  std::string data6 = float_bytes({1, 2, 3, 4, 5, 6});
  CHECK_THAT(
      load_error(npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", data6 + data6),
                 "f64.npy"),
      Contains("holds float64; frugal needs float32"));
  CHECK_THAT(
      load_error(npy_file(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", data6), "i64.npy"),
      Contains("holds int64"));
  CHECK_THAT(
      load_error(npy_file(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }", data6), "be.npy"),
      Contains("holds big-endian float32"));
  CHECK_THAT(
      load_error(npy_file(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", data6), "f.npy"),
      Contains("Fortran order"));
  CHECK_THAT(load_error(npy_file(1, k2x3, data6.substr(0, 20)), "short.npy"),
             Contains("truncated: shape [2, 3] float32 needs 24 bytes of data, the file has 20"));
  CHECK_THAT(load_error(npy_file(1, k2x3, data6 + "xx"), "long.npy"), Contains("2 bytes after the data"));
  CHECK_THAT(load_error(npy_file(1, k2x3, data6).substr(0, 30), "cut.npy"), Contains("truncated"));
  CHECK_THAT(load_error("PK\x03\x04 not numpy", "zip.npy"), Contains("is not a .npy file"));
  CHECK_THAT(load_error("", "empty.npy"), Contains("is not a .npy file"));
  CHECK_THAT(
      load_error(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", data6), "h1.npy"),
      Contains("malformed .npy header"));
  CHECK_THAT(
      load_error(npy_file(1, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (6,), }", data6), "h2.npy"),
      Contains("malformed .npy header"));
  CHECK_THAT(load_error(npy_file(1, "{'descr': '<f4', 'shape': (6,), }", data6), "h3.npy"),
             Contains("header lacks"));
  CHECK_THAT(
      load_error(
          npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }",
                   data6),
          "huge.npy"),
      Contains("too many elements"));
  std::string v9 = npy_file(1, k2x3, data6);
  v9[6] = 9;
  CHECK_THAT(load_error(v9, "v9.npy"), Contains("format version 9"));

  std::string missing = temp_path("does-not-exist.npy");
  CHECK_THROWS_WITH(frugal::load_npy(missing), Contains("cannot open '" + missing + "'"));
  CHECK_THROWS_WITH(frugal::save_npy(frugal::Tensor({1}), "/nonexistent-dir/x.npy"),
                    Contains("cannot write '/nonexistent-dir/x.npy'"));
}

TEST_CASE("npy: NaN or Inf in a file is an error naming it, or a warning when asked", "[npy]") {
  frugal::Tensor t({2, 3});
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<float>(i);
  CHECK(frugal::nonfinite_summary(t).empty());
  t.data[4] = std::numeric_limits<float>::quiet_NaN();
  t.data[5] = -std::numeric_limits<float>::infinity();
  CHECK(frugal::nonfinite_summary(t) == "2 values are not finite (the first, NaN, at index [1, 1])");
  const std::string path = temp_path("nan.npy");
  frugal::save_npy(t, path);

  LuaFixture f;
  const std::string load = "frugal.load_npy('" + path + "'";
  f.run("ok, err = pcall(function() return " + load + ") end)");
  CHECK_FALSE(f.boolean("ok"));
  CHECK_THAT(f.string("err"),
             Contains("'" + path + "': 2 values are not finite (the first, NaN, at index [1, 1])"));
  CHECK_THAT(f.string("err"), Contains("nonfinite = \"warn\""));
  f.run("w = " + load + ", {nonfinite = 'warn'}); a = " + load + ", {nonfinite = 'allow'})");
  CHECK(f.number("w:get(1, 1)") == 0);
  CHECK(f.boolean("a:get(2, 2) ~= a:get(2, 2)"));  // the NaN came through
  f.run("ok, err = pcall(function() return " + load + ", {nonfinite = 'maybe'}) end)");
  CHECK_THAT(f.string("err"), Contains("nonfinite must be"));
  std::remove(path.c_str());
}
