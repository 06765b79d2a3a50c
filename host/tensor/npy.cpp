#include "tensor/npy.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "frugal/error.h"

namespace frugal {

namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// NumPy's descr strings, for naming what a refused file holds.
std::string describe_descr(const std::string& d) {
  if (d.size() < 2) return "dtype '" + d + "'";
  char order = d[0];
  std::string kind = d.substr(1);
  static const struct {
    const char* code;
    const char* name;
  } names[] = {{"f2", "float16"}, {"f4", "float32"},   {"f8", "float64"},    {"f16", "float128"},
               {"i1", "int8"},    {"i2", "int16"},     {"i4", "int32"},      {"i8", "int64"},
               {"u1", "uint8"},   {"u2", "uint16"},    {"u4", "uint32"},     {"u8", "uint64"},
               {"b1", "bool"},    {"c8", "complex64"}, {"c16", "complex128"}};
  for (const auto& n : names)
    if (kind == n.code) {
      std::string s = n.name;
      if (order == '>' && kind != "i1" && kind != "u1" && kind != "b1") s = "big-endian " + s;
      return s;
    }
  return "dtype '" + d + "'";
}

// A tiny reader for the Python dict literal in the header:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& origin) : s_(text), origin_(origin) {}

  void parse(std::string* descr, bool* fortran, std::vector<int64_t>* shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') break;
      std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        *descr = string_literal();
        have_descr = true;
      } else if (key == "fortran_order") {
        *fortran = boolean();
        have_fortran = true;
      } else if (key == "shape") {
        *shape = tuple();
        have_shape = true;
      } else {
        fail("unexpected key '" + key + "'");
      }
      skip_ws();
      if (peek() == ',')
        ++pos_;
      else if (peek() != '}')
        fail("expected ',' or '}'");
    }
    if (!have_descr || !have_fortran || !have_shape)
      fail("header lacks one of 'descr', 'fortran_order', 'shape'");
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error("'" + origin_ + "': malformed .npy header (" + why + " at offset " + std::to_string(pos_) +
                "): " + s_);
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skip_ws();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string string_literal() {
    skip_ws();
    char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string");
    size_t end = s_.find(q, pos_ + 1);
    if (end == std::string::npos) fail("unterminated string");
    std::string out = s_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_ws();
    if (s_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (s_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    fail("expected True or False");
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> out;
    expect('(');
    while (true) {
      skip_ws();
      if (peek() == ')') {
        ++pos_;
        return out;
      }
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("expected a dimension");
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (v > (INT64_MAX - 9) / 10) fail("dimension too large");
        v = v * 10 + (s_[pos_++] - '0');
      }
      // Python's long suffix in files from NumPy on Python 2.
      if (peek() == 'L') ++pos_;
      out.push_back(v);
      skip_ws();
      if (peek() == ',')
        ++pos_;
      else if (peek() != ')')
        fail("expected ',' or ')'");
    }
  }

  const std::string& s_;
  const std::string& origin_;
  size_t pos_ = 0;
};

uint32_t read_le(const std::string& b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(b[at + i])) << (8 * i);
  return v;
}

bool host_is_little_endian() {
  const uint16_t one = 1;
  unsigned char first;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

}  // namespace

Tensor parse_npy(const std::string& b, const std::string& origin) {
  if (!host_is_little_endian()) throw Error("'" + origin + "': .npy support needs a little-endian host");
  if (b.size() < kMagicLen + 2 || b.compare(0, kMagicLen, kMagic, kMagicLen) != 0)
    throw Error("'" + origin + "' is not a .npy file (it does not start with \\x93NUMPY)");
  int major = static_cast<unsigned char>(b[6]);
  size_t len_bytes;
  if (major == 1)
    len_bytes = 2;
  else if (major == 2 || major == 3)
    len_bytes = 4;
  else
    throw Error("'" + origin + "' is .npy format version " + std::to_string(major) +
                "; frugal reads 1, 2 and 3");
  if (b.size() < 8 + len_bytes) throw Error("'" + origin + "' is truncated inside the .npy header");
  size_t header_len = read_le(b, 8, len_bytes);
  size_t data_start = 8 + len_bytes + header_len;
  if (b.size() < data_start)
    throw Error("'" + origin + "' is truncated: the .npy header claims " + std::to_string(header_len) +
                " bytes but the file has " + std::to_string(b.size()));
  std::string header = b.substr(8 + len_bytes, header_len);

  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  HeaderParser(header, origin).parse(&descr, &fortran, &shape);

  if (descr != "<f4" && descr != "=f4")
    throw Error("'" + origin + "' holds " + describe_descr(descr) +
                "; frugal needs float32 (little-endian '<f4')");
  if (fortran)
    throw Error("'" + origin +
                "' is in Fortran order; frugal reads C order only "
                "(save it with numpy.ascontiguousarray)");

  int64_t count = 0;
  try {
    count = checked_element_count(shape);
  } catch (const Error& e) {
    throw Error("'" + origin + "': " + e.what());
  }
  if (count > INT64_MAX / 4) throw Error("'" + origin + "': shape has too many elements");
  size_t want = static_cast<size_t>(count) * sizeof(float);
  size_t have = b.size() - data_start;
  Tensor probe;
  probe.dims = shape;
  if (have < want)
    throw Error("'" + origin + "' is truncated: shape " + probe.shape_string() + " float32 needs " +
                std::to_string(want) + " bytes of data, the file has " + std::to_string(have));
  if (have > want)
    throw Error("'" + origin + "' has " + std::to_string(have - want) + " bytes after the data of shape " +
                probe.shape_string() + " (corrupted or not a single array)");

  Tensor t(shape);
  if (want) std::memcpy(t.data.data(), b.data() + data_start, want);
  return t;
}

Tensor load_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot open '" + path + "': " + std::strerror(errno));
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw Error("cannot read '" + path + "'");
  return parse_npy(ss.str(), path);
}

std::string nonfinite_summary(const Tensor& t) {
  size_t count = 0, first = 0;
  for (size_t i = 0; i < t.data.size(); ++i)
    if (!std::isfinite(t.data[i]) && count++ == 0) first = i;
  if (count == 0) return "";
  const float v = t.data[first];
  std::vector<int64_t> index(t.dims.size());
  size_t rest = first;
  for (size_t a = t.dims.size(); a-- > 0;) {
    const size_t d = static_cast<size_t>(std::max<int64_t>(t.dims[a], 1));
    index[a] = static_cast<int64_t>(rest % d);
    rest /= d;
  }
  std::string where;
  for (size_t a = 0; a < index.size(); ++a) where += (a ? ", " : "") + std::to_string(index[a]);
  return std::to_string(count) + (count == 1 ? " value is" : " values are") + " not finite (the first, " +
         (std::isnan(v) ? "NaN"
          : v > 0       ? "+Inf"
                        : "-Inf") +
         ", at index [" + where + "])";
}

std::string npy_bytes(const Tensor& t) {
  if (!host_is_little_endian()) throw Error(".npy writing needs a little-endian host");
  if (static_cast<int64_t>(t.data.size()) != t.numel())
    throw Error("tensor " + t.shape_string() + " holds " + std::to_string(t.data.size()) + " values");
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.dims.size(); ++i) dict += std::to_string(t.dims[i]) + ", ";
  if (t.dims.size() > 1)
    dict.resize(dict.size() - 2);  // NumPy writes (2, 3) but (5,) and ()
  else if (t.dims.size() == 1)
    dict.resize(dict.size() - 1);
  dict += "), }";

  // Pad with spaces and end with '\n' so the data starts on a 64-byte boundary
  // (NumPy's rule, which pads 1 to 64 spaces).
  auto padded = [&](size_t prefix) {
    size_t total = prefix + dict.size() + 1;
    size_t pad = 64 - total % 64;
    return dict + std::string(pad, ' ') + "\n";
  };
  std::string header = padded(10);
  std::string out(kMagic, kMagicLen);
  if (header.size() <= 65535) {
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>((header.size() >> 8) & 0xff);
  } else {
    header = padded(12);
    out += '\x02';
    out += '\x00';
    for (int i = 0; i < 4; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  }
  out += header;
  out.append(reinterpret_cast<const char*>(t.data.data()), t.bytes());
  return out;
}

void save_npy(const Tensor& t, const std::string& path) {
  std::string bytes = npy_bytes(t);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error("cannot write '" + path + "': " + std::strerror(errno));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw Error("cannot write '" + path + "' (disk full?)");
}

}  // namespace frugal
