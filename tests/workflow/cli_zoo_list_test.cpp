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
    REQUIRE(std::regex_search(r.output, m, std::regex("\\n" + name + " +([0-9,]+) +([0-9,]+) ")));
    auto number = [&](int k) {
      std::string digits = m[k].str();
      digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
      return std::stoll(digits);
    };
    if (name == "resnet18") CHECK(number(1) == 11689512);    // torchvision's resnet18
    if (name == "resnet50") CHECK(number(1) == 25557032);    // torchvision's resnet50
    if (name.rfind("toy_", 0) == 0 || name == "resnet18") {  // building all again would double the time
      const frugal::Graph g = frugal::build_zoo_model(name, 1);
      CHECK(number(1) == frugal::torchvision_parameter_count(g));
      CHECK(number(2) == g.parameter_count());
    }
  }
}

TEST_CASE("frugal zoo --list --json: the same counts as JSON", "[workflow][slow]") {
  ScratchDir dir("zoolistjson");
  FrugalRun r = frugal_in(dir, "zoo --list --json --quiet");
  REQUIRE(r.code == 0);
  const nlohmann::json list = nlohmann::json::parse(r.output);
  REQUIRE(list.size() == frugal::zoo_names().size());
  for (const auto& n : list) {
    const std::string name = n["name"].get<std::string>();
    INFO(name);
    if (name == "resnet18") CHECK(n["parameters"] == 11689512);
    if (name.rfind("toy_", 0) == 0) {
      const frugal::Graph g = frugal::build_zoo_model(name, 1);
      CHECK(n["parameters"] == frugal::torchvision_parameter_count(g));
      CHECK(n["initializer_values"] == g.parameter_count());
      CHECK(n["input"][1] == 3);
    }
  }
}
