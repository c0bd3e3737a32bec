#include "config/yaml_tree.h"

#include <gtest/gtest.h>

namespace dtsim::config {
namespace {

TEST(YamlTree, RemembersLineAndColumnOfValuesAndKeys) {
  YamlNode root = parse_yaml_tree("a:\n  b: 42\n", "f.yaml");
  const YamlEntry* a = root.find_entry("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->key_where.line, 1);
  const YamlEntry* b = a->value.find_entry("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->value.scalar, "42");
  EXPECT_EQ(b->value.where.file, "f.yaml");
  EXPECT_EQ(b->value.where.line, 2);
  EXPECT_EQ(b->value.where.column, 6);
}

TEST(YamlTree, DuplicateKeysAreRejected) {
  EXPECT_THROW(parse_yaml_tree("a: 1\na: 2\n", "f.yaml"), InputError);
}

TEST(YamlTree, SyntaxErrorsAreInputErrorsWithAPosition) {
  try {
    parse_yaml_tree("a: [1, 2\n", "f.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_GT(e.where().line, 0);
  }
}

TEST(YamlTree, SelfReferencingAliasesAreRejectedNotFollowedForever) {
  EXPECT_THROW(parse_yaml_tree("a: &x [*x, *x]\n", "f.yaml"), InputError);
}

TEST(YamlTree, AliasBombsAreRejected) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'j'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" +
            prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n";
    prev = c;
  }
  EXPECT_THROW(parse_yaml_tree(bomb, "f.yaml"), InputError);
}

TEST(YamlTree, EmptyTextIsNull) {
  EXPECT_TRUE(parse_yaml_tree("", "f.yaml").is_null());
  EXPECT_TRUE(parse_yaml_tree("# only a comment\n", "f.yaml").is_null());
}

}  // namespace
}  // namespace dtsim::config

namespace dtsim::config {
namespace {

// yaml-cpp 0.7 would loop forever on these; they must be syntax errors with a position.
TEST(YamlTree, CommaWhereTheRootNodeBelongsIsASyntaxError) {
  for (const char* text : {",", ",a", " ,", "[a],", "{a: 1}\n\n,", "\"a\",", "'a' ,", "&x ,", "!!str ,",
                           "a: 1\n---\n,", "a: 1\n...\n,", "--- ,",
                           "&a, x", "# c\n  &a:b, c", "!t, x",
                           "  a: 1\n  b: 2\n,  c: 3\n"}) {
    try {
      parse_yaml_tree(text, "f.yaml");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_GT(e.where().line, 0) << text;
    }
  }
}

TEST(YamlTree, ControlCharactersAreSyntaxErrors) {
  EXPECT_THROW(parse_yaml_tree(std::string("\0,,,", 4), "f.yaml"), InputError);
  EXPECT_THROW(parse_yaml_tree("a: b\x01\n", "f.yaml"), InputError);
}

TEST(YamlTree, CommasInsideValuesAreKept) {
  EXPECT_EQ(parse_yaml_tree("a: x, y\n", "f.yaml").find("a")->scalar, "x, y");
  EXPECT_EQ(parse_yaml_tree("a: \"x, y\"\n", "f.yaml").find("a")->scalar, "x, y");
  EXPECT_EQ(parse_yaml_tree("a: b] ,c\n", "f.yaml").find("a")->scalar, "b] ,c");
  EXPECT_EQ(parse_yaml_tree("a: [1, 2]\n", "f.yaml").find("a")->items.size(), 2u);
  EXPECT_EQ(parse_yaml_tree("a: 'it''s, here'\n", "f.yaml").find("a")->scalar, "it's, here");
}

}  // namespace
}  // namespace dtsim::config
