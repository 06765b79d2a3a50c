// frugal zoo --list builds every network (seconds, hundreds of MB): slow label.
#include <algorithm>

#include "workflow_test_util.h"
#include "zoo/zoo.h"

TEST_CASE("frugal zoo --list: every network, counts equal the built graphs'", "[workflow][slow]") {
  ScratchDir dir("zoolist");
  FrugalRun r = frugal_in(dir, "zoo --list");
  INFO(r.output);
  REQUIRE(r.code == 0);
  for (const std::string& name : frugal::zoo_names()) {
    INFO(name);
    std::smatch m;
    REQUIRE(std::regex_search(r.output, m, std::regex("\\n" + name + " +([0-9,]+) ")));
    std::string digits = m[1].str();
    digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
    if (name.rfind("toy_", 0) == 0 || name == "resnet18")  // building all again would double the time
      CHECK(std::stoll(digits) == frugal::build_zoo_model(name, 1).parameter_count());
  }
}
