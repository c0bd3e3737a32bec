// The accuracy contract of the analytical model: for every real measurement in
// validation/measured, the scenario describing its hardware predicts time_us within 15%
// mean absolute percentage error over all sizes and 10% over sizes >= 64 MiB.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/collectives/validation_cases.h"

namespace dtsim::collectives::validation {
namespace {

const std::vector<Dataset>& datasets() {
  static const std::vector<Dataset> kData = load_datasets(DTSIM_SOURCE_DIR);
  return kData;
}

class MeasuredDataset : public ::testing::TestWithParam<size_t> {};

TEST_P(MeasuredDataset, PredictsMeasuredTimesWithinBounds) {
  const Dataset& d = datasets().at(GetParam());
  const CaseError e = evaluate(d, ModelParameters{});
  SCOPED_TRACE(d.source.scenario + " vs " + d.source.measured + " " + d.source.label);
  EXPECT_LE(e.mape_all, 0.15) << "choices: " << e.algorithms;
  if (e.large_sizes > 0) {
    EXPECT_LE(e.mape_large, 0.10) << "choices: " << e.algorithms;
  }
}

INSTANTIATE_TEST_SUITE_P(AllDatasets, MeasuredDataset, ::testing::Range<size_t>(0, cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& param_info) {
                           std::string n = cases()[param_info.param].scenario;
                           n = n.substr(0, n.find('.'));
                           return n;
                         });

TEST(MeasuredData, EveryMeasuredFileExceptReferencePointsHasACase) {
  const std::string dir = measured_dir(DTSIM_SOURCE_DIR);
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    if (entry.path().extension() != ".csv" || file == "reference_points_from_issues.csv") continue;
    bool covered = false;
    for (const auto& c : cases()) covered = covered || c.measured == file;
    EXPECT_TRUE(covered) << file << " has no validation scenario";
  }
}

TEST(MeasuredData, EveryConfigurationOfTheSmallConfigsFileHasItsOwnScenario) {
  int configs = 0;
  for (const auto& c : cases())
    configs += c.measured == "a40_and_dgxa100_small_configs_allreduce.csv";
  EXPECT_EQ(configs, 5);
}

}  // namespace
}  // namespace dtsim::collectives::validation
