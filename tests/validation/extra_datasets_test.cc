// Published nccl-tests measurements beyond validation/measured (validation/extra/, sources in each
// file's header; docs/validation-errors.md, "Outside the shared set"). Not used to fit anything:
// a net against regressions on hardware the calibration never saw. Every set must read and be
// predicted, and its large sizes (>= 64 MiB) stay within a loose 35% mean |error|.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "validation/comparison.h"
#include "validation/measurement_reader.h"
#include "validation/scenario_predictor.h"

namespace dtsim::validation {
namespace {

struct Pair {
  std::string scenario, measured;
};

std::vector<Pair> pairs() {
  const std::string root = DTSIM_SOURCE_DIR;
  std::ifstream in(root + "/validation/extra/datasets.txt");
  std::vector<Pair> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Pair p;
    fields >> p.scenario >> p.measured;
    out.push_back({root + "/" + p.scenario, root + "/" + p.measured});
  }
  return out;
}

TEST(ExtraDatasets, EverySetReadsAndItsLargeSizesStayWithin35Percent) {
  const auto list = pairs();
  ASSERT_GE(list.size(), 10u);
  int sets = 0;
  for (const Pair& p : list) {
    SCOPED_TRACE(p.measured);
    const ScenarioModel m = load_scenario_model(p.scenario, {}, std::nullopt);
    for (const MeasurementSet& s :
         read_measurements(p.measured, scenario_parse_options(m.scenario))) {
      const Comparison c =
          compare(s, ranks_for(s, m.scenario),
                  make_predictor(m.scenario, m.parameters, s.nodes, s.gpus_per_thread));
      ASSERT_FALSE(c.rows.empty());
      double sum = 0;
      int large = 0;
      for (const ComparisonRow& r : c.rows) {
        if (r.wrong || r.size_bytes < (int64_t{64} << 20)) continue;
        sum += std::abs(r.error_pct);
        ++large;
      }
      if (large > 0) {
        EXPECT_LE(sum / large, 35.0) << s.label << " " << collectives::name(s.collective);
      }
      ++sets;
    }
  }
  EXPECT_GE(sets, 15);
}

}  // namespace
}  // namespace dtsim::validation
