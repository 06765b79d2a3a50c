#include "profiler/json_path.h"

#include <vector>

namespace frugal {

namespace {

using json = nlohmann::json;

// A SAX handler that builds nothing: it keeps the path of the value being
// parsed and stops at the first error.
class PathTracker {
 public:
  bool null() { return value_done(); }
  bool boolean(bool /*v*/) { return value_done(); }
  bool number_integer(json::number_integer_t /*v*/) { return value_done(); }
  bool number_unsigned(json::number_unsigned_t /*v*/) { return value_done(); }
  bool number_float(json::number_float_t /*v*/, const std::string& /*text*/) { return value_done(); }
  bool string(std::string& /*v*/) { return value_done(); }
  bool binary(json::binary_t& /*v*/) { return value_done(); }
  bool start_object(std::size_t /*n*/) { return open(false); }
  bool key(std::string& k) {
    frames_.back().key = k;
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t /*n*/) { return open(true); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string& last_token, const json::exception& /*e*/) {
    place_.found = true;
    position_ = position;
    place_.token = last_token;
    place_.path = path();
    return false;
  }

  JsonErrorPlace place(const std::string& text) const {
    JsonErrorPlace p = place_;
    if (!p.found) return p;
    p.line = 1;
    for (size_t i = 0; i + 1 < position_ && i < text.size(); ++i)
      if (text[i] == '\n') ++p.line;
    return p;
  }

 private:
  struct Frame {
    bool array = false;
    size_t index = 0;
    std::string key;
  };
  bool open(bool array) {
    frames_.push_back(Frame{array, 0, ""});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return value_done();
  }
  // A value ended: the next one in an array has the next index.
  bool value_done() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return true;
  }
  std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.array)
        p += "[" + std::to_string(f.index) + "]";
      else if (!f.key.empty())
        p += (p.empty() ? "" : ".") + f.key;
    }
    return p;
  }

  std::vector<Frame> frames_;
  JsonErrorPlace place_;
  size_t position_ = 0;
};

std::string null_in(const json& j, const std::string& at) {
  if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      std::string p = at + "[" + std::to_string(i) + "]";
      if (j[i].is_null()) return p;
      std::string inner = null_in(j[i], p);
      if (!inner.empty()) return inner;
    }
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      std::string inner = null_in(it.value(), at.empty() ? it.key() : at + "." + it.key());
      if (!inner.empty()) return inner;
    }
  }
  return "";
}

}  // namespace

JsonErrorPlace locate_json_error(const std::string& text) {
  PathTracker t;
  json::sax_parse(text, &t);
  return t.place(text);
}

std::string first_null_in_array(const json& j) { return null_in(j, ""); }

}  // namespace frugal
