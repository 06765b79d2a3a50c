// Mutants of a real model (truncations, bit flips, corrupted length varints):
// each either loads into a consistent graph or throws frugal::Error naming the
// file. Never a crash (CI runs this under ASan + UBSan).
#include <catch2/catch.hpp>
#include <fstream>
#include <random>
#include <set>

#include "frugal/error.h"
#include "frugal/model/onnx_export.h"
#include "frugal/model/onnx_import.h"
#include "frugal/model/shape_inference.h"
#include "graphs_equal.h"
#include "test_models.h"

using namespace frugal;
using namespace frugal::test;

namespace {

// Offsets of the length varints of every length-delimited field, found by
// walking the protobuf wire format; recurses into payloads that parse as messages.
void find_length_fields(const std::string& b, size_t begin, size_t end, int depth, std::vector<size_t>& out) {
  auto varint = [&](size_t& p, uint64_t& v) {
    v = 0;
    for (int shift = 0; p < end && shift < 64; shift += 7) {
      uint8_t c = static_cast<uint8_t>(b[p++]);
      v |= static_cast<uint64_t>(c & 0x7f) << shift;
      if (!(c & 0x80)) return true;
    }
    return false;
  };
  size_t p = begin;
  while (p < end) {
    uint64_t key, v;
    if (!varint(p, key)) return;
    switch (key & 7) {
      case 0:
        if (!varint(p, v)) return;
        break;
      case 1:
        p += 8;
        break;
      case 5:
        p += 4;
        break;
      case 2: {
        size_t at = p;
        if (!varint(p, v) || v > end - p) return;
        out.push_back(at);
        if (depth < 6) find_length_fields(b, p, p + v, depth + 1, out);
        p += v;
        break;
      }
      default:
        return;
    }
  }
}

std::string encode_varint(uint64_t v) {
  std::string s;
  do {
    uint8_t c = v & 0x7f;
    v >>= 7;
    s.push_back(static_cast<char>(v ? c | 0x80 : c));
  } while (v);
  return s;
}

// A loaded mutant must be a consistent graph: values defined before use,
// initializers sized by their shapes, and it must survive export + re-import.
void check_consistent(Graph& g, const std::string& name) {
  std::set<std::string> defined(g.inputs.begin(), g.inputs.end());
  for (const auto& kv : g.tensors) {
    if (!kv.second.is_initializer) continue;
    defined.insert(kv.first);
    REQUIRE(kv.second.data.size() ==
            static_cast<size_t>(element_count(known_dims(kv.second.shape))) * dtype_size(kv.second.dtype));
  }
  for (const Node& n : g.nodes) {
    for (const std::string& i : n.inputs) REQUIRE((i.empty() || defined.count(i)));
    for (const std::string& o : n.outputs) {
      REQUIRE((o.empty() || g.has_tensor(o)));
      defined.insert(o);
    }
  }
  for (const std::string& o : g.outputs) REQUIRE(defined.count(o));
  try {
    infer_shapes_for_batch(g, 2);
  } catch (const Error&) {
    // a mutant may well have inconsistent shapes; it must only say so cleanly
  }
  const std::string bytes = save_onnx_bytes(g);
  Graph back = load_onnx_bytes(bytes.data(), bytes.size(), name);
  std::string why;
  REQUIRE(graphs_equal(g, back, &why));
}

struct Tally {
  int loaded = 0, refused = 0;
};

void try_mutant(const std::string& bytes, const std::string& name, Tally& t) {
  INFO("mutant " << name);
  try {
    Graph g = load_onnx_bytes(bytes.data(), bytes.size(), name);
    check_consistent(g, name);
    ++t.loaded;
  } catch (const Error& e) {
    REQUIRE_THAT(e.what(), Catch::Contains(name));
    ++t.refused;
  }
}

}  // namespace

TEST_CASE("mutated models load consistently or fail with an Error naming the file", "[onnx][fuzz]") {
  const std::string base = serialize(tiny_cnn_model(11));
  REQUIRE(base.size() > 1000);
  Tally t;
  std::mt19937 rng(20240601);  // fixed seed: reproducible mutants
  int made = 0;

  SECTION("truncations") {
    for (size_t len = 0; len < base.size(); len += 1 + base.size() / 160) {
      try_mutant(base.substr(0, len), "trunc_" + std::to_string(len) + ".onnx", t);
      ++made;
    }
    for (size_t cut = 1; cut <= 8; ++cut) {  // the very last bytes
      try_mutant(base.substr(0, base.size() - cut), "trunc_end_" + std::to_string(cut) + ".onnx", t);
      ++made;
    }
    CHECK(t.refused > 0);
  }
  SECTION("bit flips") {
    for (int i = 0; i < 300; ++i) {
      std::string m = base;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) m[rng() % m.size()] ^= static_cast<char>(1u << (rng() % 8));
      try_mutant(m, "flip_" + std::to_string(i) + ".onnx", t);
      ++made;
    }
    CHECK(t.loaded > 0);  // flips inside weight bytes load fine
    CHECK(t.refused > 0);
  }
  SECTION("corrupted length varints") {
    std::vector<size_t> at;
    find_length_fields(base, 0, base.size(), 0, at);
    REQUIRE(at.size() > 50);
    const uint64_t replacements[] = {0, 1, 0x7f, 0x80, 0x3fff, 0xffffffffull, 0xffffffffffffffffull};
    for (int i = 0; i < 200; ++i) {
      size_t pos = at[rng() % at.size()];
      size_t p = pos;
      uint64_t len = 0;
      for (int shift = 0; p < base.size(); shift += 7) {
        uint8_t c = static_cast<uint8_t>(base[p++]);
        len |= static_cast<uint64_t>(c & 0x7f) << shift;
        if (!(c & 0x80)) break;
      }
      uint64_t r = (i % 3 == 0) ? len + 1 : (i % 3 == 1 && len > 0) ? len - 1 : replacements[rng() % 7];
      std::string m = base.substr(0, pos) + encode_varint(r) + base.substr(p);
      try_mutant(m, "varint_" + std::to_string(i) + ".onnx", t);
      ++made;
    }
    CHECK(t.refused > 0);
  }
  WARN(made << " mutants: " << t.loaded << " loaded, " << t.refused << " refused");
}

TEST_CASE("a mutant on disk is refused with the path in the message", "[onnx][fuzz]") {
  const std::string dir = scratch_dir("fuzz_files");
  const std::string base = serialize(tiny_cnn_model(2));
  const std::string path = dir + "/half.onnx";
  std::ofstream(path, std::ios::binary) << base.substr(0, base.size() / 2);
  CHECK_THAT(error_of([&] { load_onnx_file(path); }), Catch::Contains(path));
}
