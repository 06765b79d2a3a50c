// A strict little XML reader for the figure tests: it accepts well-formed XML
// only (one root, every tag closed in order, quoted attributes, known
// entities, no stray '<' or '&') and gives the element tree, so a test can
// say "well-formed, with these elements" without an XML library.
#pragma once

#include <cctype>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::string text;  // character data directly inside, entities decoded
  std::vector<std::unique_ptr<XmlElement>> children;

  // Every element below (and including) this one named `n`, optionally with
  // `class` containing the word `cls`.
  void collect(const std::string& n, const std::string& cls, std::vector<const XmlElement*>* out) const {
    if (name == n && (cls.empty() || has_class(cls))) out->push_back(this);
    for (const auto& c : children) c->collect(n, cls, out);
  }
  std::vector<const XmlElement*> all(const std::string& n, const std::string& cls = "") const {
    std::vector<const XmlElement*> out;
    collect(n, cls, &out);
    return out;
  }
  bool has_class(const std::string& cls) const {
    const auto it = attributes.find("class");
    if (it == attributes.end()) return false;
    const std::string padded = " " + it->second + " ";
    return padded.find(" " + cls + " ") != std::string::npos;
  }
  std::string attr(const std::string& key) const {
    const auto it = attributes.find(key);
    return it == attributes.end() ? "" : it->second;
  }
};

class XmlReader {
 public:
  // Throws std::runtime_error with the byte offset at the first fault.
  static std::unique_ptr<XmlElement> parse(const std::string& text) {
    XmlReader r(text);
    r.skip_prolog();
    auto root = r.element();
    r.skip_misc();
    if (r.pos_ != text.size()) r.fail("content after the root element");
    return root;
  }

 private:
  explicit XmlReader(const std::string& s) : s_(s) {}
  const std::string& s_;
  size_t pos_ = 0;

  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error("not well-formed XML at byte " + std::to_string(pos_) + ": " + why);
  }
  bool at(const char* lit) const { return s_.compare(pos_, std::char_traits<char>::length(lit), lit) == 0; }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  void skip_past(const char* end) {
    const size_t e = s_.find(end, pos_);
    if (e == std::string::npos) fail(std::string("no closing ") + end);
    pos_ = e + std::char_traits<char>::length(end);
  }
  void skip_misc() {
    for (skip_space(); at("<!--") || at("<?"); skip_space()) skip_past(at("<!--") ? "-->" : "?>");
  }
  void skip_prolog() {
    skip_misc();
    if (at("<!DOCTYPE")) skip_past(">");
    skip_misc();
  }
  std::string name() {
    const size_t b = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '-' ||
                                s_[pos_] == '_' || s_[pos_] == ':' || s_[pos_] == '.'))
      ++pos_;
    if (b == pos_ || std::isdigit(static_cast<unsigned char>(s_[b]))) fail("expected a name");
    return s_.substr(b, pos_ - b);
  }
  std::string decode(const std::string& raw) {
    static const std::map<std::string, std::string> kEntities = {
        {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}};
    std::string out;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '<') fail("'<' in text or attribute");
      if (raw[i] != '&') {
        out += raw[i];
        continue;
      }
      const size_t semi = raw.find(';', i);
      if (semi == std::string::npos) fail("'&' without ';'");
      const std::string ent = raw.substr(i + 1, semi - i - 1);
      if (!ent.empty() && ent[0] == '#')
        out += static_cast<char>(
            std::stoi(ent[1] == 'x' ? ent.substr(2) : ent.substr(1), nullptr, ent[1] == 'x' ? 16 : 10));
      else if (kEntities.count(ent))
        out += kEntities.at(ent);
      else
        fail("unknown entity &" + ent + ";");
      i = semi;
    }
    return out;
  }
  std::unique_ptr<XmlElement> element() {
    if (!at("<")) fail("expected '<'");
    ++pos_;
    auto e = std::make_unique<XmlElement>();
    e->name = name();
    for (;;) {
      skip_space();
      if (at("/>")) {
        pos_ += 2;
        return e;
      }
      if (at(">")) {
        ++pos_;
        break;
      }
      const std::string key = name();
      skip_space();
      if (!at("=")) fail("attribute '" + key + "' without '='");
      ++pos_;
      skip_space();
      const char q = pos_ < s_.size() ? s_[pos_] : 0;
      if (q != '"' && q != '\'') fail("attribute '" + key + "' not quoted");
      const size_t end = s_.find(q, pos_ + 1);
      if (end == std::string::npos) fail("unterminated attribute");
      if (e->attributes.count(key)) fail("attribute '" + key + "' twice");
      e->attributes[key] = decode(s_.substr(pos_ + 1, end - pos_ - 1));
      pos_ = end + 1;
    }
    for (;;) {
      const size_t lt = s_.find('<', pos_);
      if (lt == std::string::npos) fail("element '" + e->name + "' not closed");
      e->text += decode(s_.substr(pos_, lt - pos_));
      pos_ = lt;
      if (at("<!--")) {
        skip_past("-->");
      } else if (at("</")) {
        pos_ += 2;
        if (name() != e->name) fail("closing tag does not match '" + e->name + "'");
        skip_space();
        if (!at(">")) fail("expected '>'");
        ++pos_;
        return e;
      } else {
        e->children.push_back(element());
      }
    }
  }
};
