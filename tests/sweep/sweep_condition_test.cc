#include <gtest/gtest.h>

#include <map>

#include "config/sweep.h"

namespace dtsim::config {
namespace {

bool holds(const std::string& text,
           const std::map<std::string, SweepValue, std::less<>>& names = {}) {
  return SweepCondition::parse(text).holds([&](std::string_view n) -> std::optional<SweepValue> {
    if (auto it = names.find(n); it != names.end()) return it->second;
    return std::nullopt;
  });
}

TEST(SweepCondition, MultiplicationBindsTighterThanAddition) {
  EXPECT_TRUE(holds("1 + 2 * 3 == 7"));
  EXPECT_TRUE(holds("(1 + 2) * 3 == 9"));
}

TEST(SweepCondition, ProductOfParallelDegreesMatchesGpus) {
  EXPECT_TRUE(holds("tp*pp*dp == gpus", {{"tp", 8.0}, {"pp", 4.0}, {"dp", 2.0}, {"gpus", 64.0}}));
  EXPECT_FALSE(holds("tp*pp*dp == gpus", {{"tp", 8.0}, {"pp", 4.0}, {"dp", 4.0}, {"gpus", 64.0}}));
}

TEST(SweepCondition, AndBindsTighterThanOr) {
  EXPECT_TRUE(holds("1 || 0 && 0"));
  EXPECT_FALSE(holds("(1 || 0) && 0"));
}

TEST(SweepCondition, ComparisonsAndNegation) {
  EXPECT_TRUE(holds("3 <= 3 && 3 >= 3 && 2 < 3 && 3 > 2 && 2 != 3"));
  EXPECT_TRUE(holds("!(2 > 3)"));
  EXPECT_TRUE(holds("-2 + 5 == 3"));
  EXPECT_TRUE(holds("7 % 4 == 3 && 8 / 2 == 4"));
}

TEST(SweepCondition, StringsCompareForEquality) {
  EXPECT_TRUE(holds("kind == \"rail-optimized\"", {{"kind", std::string("rail-optimized")}}));
  EXPECT_TRUE(holds("kind != \"fat-tree\"", {{"kind", std::string("rail-optimized")}}));
}

TEST(SweepCondition, OrderingAStringIsAnError) {
  EXPECT_THROW(holds("kind < 3", {{"kind", std::string("x")}}), std::invalid_argument);
}

TEST(SweepCondition, UnknownNameIsAnErrorNamingIt) {
  try {
    holds("tpp == 8");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tpp"), std::string::npos);
  }
}

TEST(SweepCondition, ParseErrorNamesTheColumn) {
  try {
    SweepCondition::parse("tp * * pp");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("column 6"), std::string::npos) << e.what();
  }
}

TEST(SweepCondition, UnclosedParenthesisIsAParseError) {
  EXPECT_THROW(SweepCondition::parse("(tp == 8"), std::invalid_argument);
}

TEST(SweepCondition, DivisionByZeroIsAnError) {
  EXPECT_THROW(holds("1 / 0 == 1"), std::invalid_argument);
}

TEST(SweepCondition, DottedNamesAreOneName) {
  EXPECT_TRUE(holds("cluster.nodes * 8 == 64", {{"cluster.nodes", 8.0}}));
}

}  // namespace
}  // namespace dtsim::config
