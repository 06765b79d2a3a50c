// The predictor file's reader: XGBoost's model is cut out of the text by
// structure (strings and nesting), frugal's part parsed; cases worked by hand.
#include <catch2/catch.hpp>
#include <string>

#include "frugal/error.h"
#include "layer_features.h"
#include "predictor_file.h"

using frugal::predictor::top_level_member;

namespace {

// The text of the member's value, or "(none)".
std::string member(const std::string& text, const std::string& key) {
  const auto [begin, end] = top_level_member(text, key);
  return begin == std::string::npos ? "(none)" : text.substr(begin, end - begin);
}

}  // namespace

TEST_CASE("predictor file: a top-level member's value is found by structure alone", "[predictor][unit]") {
  const std::string t = R"({"a": 1, "xgboost" : {"b": "}\"{", "c": [1, {"d": 2}]} , "z": null})";
  CHECK(member(t, "xgboost") == R"({"b": "}\"{", "c": [1, {"d": 2}]})");
  CHECK(member(t, "a") == "1");
  CHECK(member(t, "z") == "null");
  CHECK(member(t, "b") == "(none)");  // depth 2
  CHECK(member(R"({"a": {"xgboost": 1}})", "xgboost") == "(none)");
  CHECK(member(R"({"a": "\"xgboost\": 5", "b": [2]})", "xgboost") == "(none)");  // inside a string
  CHECK(member(R"({"xgboostx": 1, "xgboost": -2.5e3})", "xgboost") == "-2.5e3");
  CHECK(member("\n{\n \"xgboost\":\n  [[], {}]\n}\n", "xgboost") == "[[], {}]");
  CHECK(member(R"({"s": "a\\", "xgboost": "v"})", "xgboost") == R"("v")");  // escaped backslash ends "a\\"
  CHECK(member("[1, 2]", "xgboost") == "(none)");
  CHECK(member("", "xgboost") == "(none)");
  CHECK(member(R"({"xgboost": {"a": [1)", "xgboost") == R"({"a": [1)");  // unterminated: to the end
  CHECK(member(R"({"a" 1, "xgboost": 2})", "xgboost") == "(none)");      // no colon: not an object
}

TEST_CASE("predictor file: the header is parsed without the model, the model kept as text",
          "[predictor][unit]") {
  const std::string model = R"({"learner": {"x": [1, 2, {"y": "}"}]}, "version": [1, 7, 4]})";
  nlohmann::json h = {{"format", "frugal-predictor"},
                      {"format_version", frugal::predictor::kFormatVersion},
                      {"features", frugal::predictor::feature_names()},
                      {"families", {"conv"}},
                      {"kinds", {"Conv (im2col + sgemm)"}},
                      {"ranges", nlohmann::json::object()},
                      {"step_overhead", nlohmann::json::object()},
                      {"xgboost", nullptr}};
  std::string text = h.dump(1);
  const std::string null_value = "\"xgboost\": null";
  text.replace(text.find(null_value), null_value.size(), "\"xgboost\": " + model);
  const frugal::predictor::PredictorFile f = frugal::predictor::read_predictor_file(text, "p.json");
  CHECK(f.xgboost == model);
  CHECK(f.header["xgboost"].is_null());
  CHECK(f.header["families"] == nlohmann::json({"conv"}));
  h.erase("xgboost");
  CHECK_THROWS_WITH(frugal::predictor::read_predictor_file(h.dump(), "p.json"),
                    Catch::Contains("p.json: predictor file has no \"xgboost\""));
  h.erase("kinds");
  CHECK_THROWS_WITH(frugal::predictor::read_predictor_file(h.dump(), "p.json"),
                    Catch::Contains("p.json: predictor file has no \"kinds\""));
  CHECK_THROWS_WITH(frugal::predictor::read_predictor_file(R"({"xgboost": {"a": [1)", "p.json"),
                    Catch::Contains("p.json: not a JSON object"));
}
