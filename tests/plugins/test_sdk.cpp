// plugin_sdk.hpp: exceptions map to the documented status codes, messages are
// truncated safely, and blobs own a copy of their bytes.
#include <catch2/catch.hpp>
#include <cstring>
#include <new>

#include "frugal/error.h"
#include "frugal/plugin_sdk.hpp"

using frugal::sdk::guard;

namespace {

template <class Body>
std::pair<frugal_status, std::string> run_guard(Body&& body) {
  frugal_error err;
  std::memset(err.message, 'x', sizeof err.message);  // garbage before the call
  const frugal_status s = guard(&err, body);
  return {s, s == FRUGAL_OK ? std::string() : std::string(err.message)};
}

}  // namespace

TEST_CASE("guard maps each exception type to its status", "[plugins][unit]") {
  using R = std::pair<frugal_status, std::string>;
  CHECK(run_guard([] {}) == R{FRUGAL_OK, ""});
  CHECK(run_guard([] { return FRUGAL_ERR_DEVICE; }) == R{FRUGAL_ERR_DEVICE, ""});
  CHECK(run_guard([] { frugal::sdk::fail_budget("needs 10 bytes"); }) ==
        R{FRUGAL_ERR_BUDGET, "needs 10 bytes"});
  CHECK(run_guard([] { frugal::sdk::fail_unsupported("op X"); }) == R{FRUGAL_ERR_UNSUPPORTED, "op X"});
  CHECK(run_guard([] { throw std::bad_alloc(); }) == R{FRUGAL_ERR_OUT_OF_MEMORY, "out of memory"});
  CHECK(run_guard([] { throw frugal::Error("model.onnx: node 'c1': bad pads"); }) ==
        R{FRUGAL_ERR_INVALID_ARGUMENT, "model.onnx: node 'c1': bad pads"});
  CHECK(run_guard([] {
          const auto j = nlohmann::json::parse("{oops");
          (void)j;
        }).first == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK(run_guard([] {
          const auto j = nlohmann::json::object().at("batch");
          (void)j;
        }).first == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK(run_guard([] { throw std::invalid_argument("bad"); }) == R{FRUGAL_ERR_INVALID_ARGUMENT, "bad"});
  CHECK(run_guard([] { throw std::runtime_error("boom"); }) == R{FRUGAL_ERR_INTERNAL, "boom"});
  CHECK(run_guard([] { throw 42; }) == R{FRUGAL_ERR_INTERNAL, "unknown exception"});
}

TEST_CASE("error messages are truncated to the buffer and always terminated", "[plugins][unit]") {
  const std::string long_message(5000, 'm');
  auto [status, message] = run_guard([&] { throw std::runtime_error(long_message); });
  CHECK(status == FRUGAL_ERR_INTERNAL);
  CHECK(message == long_message.substr(0, FRUGAL_ERROR_CAPACITY - 1));
  CHECK(guard(nullptr, [] { throw std::runtime_error("no buffer"); }) == FRUGAL_ERR_INTERNAL);  // no crash
}

TEST_CASE("blobs hold a copy of their bytes and release it once", "[plugins][unit]") {
  std::string text = "{\"steps\":[]}";
  frugal_blob b = frugal::sdk::make_blob(text);
  text[0] = '#';  // the blob does not alias the string
  REQUIRE(b.data != nullptr);
  CHECK(std::string(static_cast<const char*>(b.data), b.size) == "{\"steps\":[]}");
  REQUIRE(b.release != nullptr);
  b.release(b.data);  // ASan checks this frees exactly what was allocated

  const std::vector<float> v = {1.5f, -2.0f};
  frugal_blob vb = frugal::sdk::make_blob(v);
  CHECK(vb.size == 2 * sizeof(float));
  CHECK(static_cast<const float*>(vb.data)[1] == -2.0f);
  vb.release(vb.data);

  const frugal_blob empty = frugal::sdk::make_blob(std::string());
  CHECK(empty.data == nullptr);
  CHECK(empty.size == 0);
  CHECK(empty.release == nullptr);

  CHECK(guard(nullptr, [] { frugal::sdk::put_blob(nullptr, std::string("x")); }) ==
        FRUGAL_ERR_INVALID_ARGUMENT);
}
