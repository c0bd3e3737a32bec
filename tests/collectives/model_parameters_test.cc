#include "collectives/model_parameters.h"

#include <gtest/gtest.h>

#include <sstream>

#include "sim/error.h"

namespace dtsim::collectives {
namespace {

TEST(ModelParameters, FlatVectorHasOneEntryPerDescriptorInOrder) {
  const ModelParameters p;
  const auto v = p.to_vector();
  ASSERT_EQ(v.size(), ModelParameters::descriptors().size());
  EXPECT_DOUBLE_EQ(v[0], p.get(ModelParameters::descriptors()[0].name));
}

TEST(ModelParameters, FromVectorSetsEveryValue) {
  ModelParameters p;
  auto v = p.to_vector();
  for (auto& x : v) x *= 1.5;
  p.from_vector(v);
  EXPECT_DOUBLE_EQ(p.nvlink_efficiency, ModelParameters{}.nvlink_efficiency * 1.5);
}

TEST(ModelParameters, DefaultsLieWithinTheirBounds) {
  const ModelParameters p;
  for (const auto& d : ModelParameters::descriptors()) {
    EXPECT_GE(p.*d.field, d.lower) << d.name;
    EXPECT_LE(p.*d.field, d.upper) << d.name;
  }
}

TEST(ModelParameters, SetByUnknownNameThrowsInputErrorListingNames) {
  ModelParameters p;
  try {
    p.set("nvlink_eficiency", 0.5);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nvlink_efficiency"), std::string::npos);
  }
}

TEST(ModelParameters, CalibrationFileRoundTripsEveryValue) {
  ModelParameters p;
  p.nvls_latency = 31.25;
  p.slice_bytes_simple = 262144;
  p.socket_bandwidth = 9.5;
  std::ostringstream os;
  write_calibration(p, os);
  const ModelParameters q = parse_calibration(os.str(), "calibration.yaml");
  const auto a = p.to_vector();
  const auto b = q.to_vector();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6 * std::abs(a[i]) + 1e-9) << i;
}

TEST(ModelParameters, CalibrationValuesCarryUnits) {
  const auto p =
      parse_calibration("parameters:\n  nvls_latency: 0.05ms\n  slice_bytes_ll: 8KiB\n", "c.yaml");
  EXPECT_DOUBLE_EQ(p.nvls_latency, 50);
  EXPECT_DOUBLE_EQ(p.slice_bytes_ll, 8192);
}

TEST(ModelParameters, CalibrationRejectsALatencyWithoutUnit) {
  EXPECT_THROW(parse_calibration("parameters:\n  nvls_latency: 20\n", "c.yaml"), InputError);
  // A complex key (YAML's "? key") is a line, not yaml-cpp's "bad conversion".
  EXPECT_THROW(parse_calibration("parameters:\n  ? nvls_latency: 2us\n", "c.yaml"), InputError);
  EXPECT_THROW(parse_calibration("? [a, b]\n", "c.yaml"), InputError);
}

TEST(ModelParameters, CalibrationRejectsUnknownParameterWithFileAndLine) {
  try {
    parse_calibration("parameters:\n  nvls_latencyy: 20us\n", "c.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "c.yaml");
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.key(), "parameters.nvls_latencyy");
  }
}

TEST(ModelParameters, CalibrationRejectsValueOutsideBounds) {
  EXPECT_THROW(parse_calibration("parameters:\n  nvlink_efficiency: 1.7\n", "c.yaml"), InputError);
}

TEST(ModelParameters, CalibrationKeepsDefaultsForKeysNotGiven) {
  const auto p = parse_calibration("parameters:\n  nvls_latency: 20us\n", "c.yaml");
  EXPECT_DOUBLE_EQ(p.p2p_latency, ModelParameters{}.p2p_latency);
}

}  // namespace
}  // namespace dtsim::collectives
