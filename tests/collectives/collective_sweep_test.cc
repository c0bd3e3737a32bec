#include "workloads/collective_sweep.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "collectives/analytical_model.h"
#include "report/collective_sweep_writer.h"
#include "sim/error.h"
#include "topology/catalog.h"

namespace dtsim::workloads {
namespace {

struct Fixture {
  topology::ClusterSpec spec = [] {
    auto s = *topology::find_node_preset("hgx-h100");
    s.nodes = 2;
    return s;
  }();
  collectives::AnalyticalCollectiveModel model{spec, {}, {}};
};

CollectiveSweepSpec sweep(Bytes min, Bytes max, int step) {
  CollectiveSweepSpec s;
  s.min_bytes = min;
  s.max_bytes = max;
  s.step_factor = step;
  return s;
}

TEST(CollectiveSweep, HasOneRowPerSizeFromMinToMaxByStep) {
  Fixture f;
  const auto rows = run_collective_sweep(sweep(Bytes(8), Bytes(1024), 2), f.spec, f.model);
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows.front().bytes, Bytes(8));
  EXPECT_EQ(rows.back().bytes, Bytes(1024));
}

TEST(CollectiveSweep, StopsAtTheLastSizeNotAboveMax) {
  Fixture f;
  const auto rows = run_collective_sweep(sweep(Bytes(10), Bytes(1000), 4), f.spec, f.model);
  EXPECT_EQ(rows.back().bytes, Bytes(640));
}

TEST(CollectiveSweep, BusBandwidthUsesTheNcclTestsFactor) {
  Fixture f;
  const auto rows = run_collective_sweep(sweep(Bytes::mib(64), Bytes::mib(64), 2), f.spec, f.model);
  EXPECT_NEAR(rows[0].busbw_gbytes, rows[0].algbw_gbytes * 2 * 15 / 16.0, 1e-9);
  EXPECT_EQ(rows[0].ranks, 16);
}

TEST(CollectiveSweep, CountIsSizeOverTheDtypeSize) {
  Fixture f;
  auto s = sweep(Bytes(1024), Bytes(1024), 2);
  s.dtype = topology::Dtype::bf16;
  EXPECT_EQ(run_collective_sweep(s, f.spec, f.model)[0].count, 512);
}

TEST(CollectiveSweep, RejectsAStepFactorBelowTwo) {
  Fixture f;
  EXPECT_THROW(run_collective_sweep(sweep(Bytes(8), Bytes(64), 1), f.spec, f.model), InputError);
}

TEST(CollectiveSweep, RejectsMoreRanksThanTheClusterHas) {
  Fixture f;
  auto s = sweep(Bytes(8), Bytes(64), 2);
  s.ranks = 17;
  EXPECT_THROW(run_collective_sweep(s, f.spec, f.model), InputError);
}

TEST(CollectiveSweepWriter, CsvHasExactlyTheContractColumns) {
  Fixture f;
  std::ostringstream os;
  report::write_sweep(run_collective_sweep(sweep(Bytes(8), Bytes(16), 2), f.spec, f.model),
                      report::SweepFormat::csv, os);
  std::istringstream in(os.str());
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  EXPECT_EQ(header,
            "collective,size_bytes,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,network_time_us,floor_from");
  EXPECT_EQ(row.substr(0, 13), "all_reduce,8,");
  EXPECT_EQ(std::count(row.begin(), row.end(), ','), 8);
  // The closed form's own rows have no network model's time and no floor.
  EXPECT_EQ(row.substr(row.size() - 2), ",,");
}

TEST(CollectiveSweepWriter, TableHasNcclTestsColumnsAndOneLinePerSize) {
  Fixture f;
  std::ostringstream os;
  report::write_sweep(run_collective_sweep(sweep(Bytes(8), Bytes(64), 2), f.spec, f.model),
                      report::SweepFormat::table, os);
  const std::string t = os.str();
  for (const char* col : {"size", "count", "type", "redop", "root", "time", "algbw", "busbw",
                          "algorithm", "protocol"}) {
    EXPECT_NE(t.find(col), std::string::npos) << col;
  }
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 3 + 4);
}

TEST(CollectiveSweepWriter, JsonCarriesSchemaVersionAndEveryRow) {
  Fixture f;
  std::ostringstream os;
  report::write_sweep(run_collective_sweep(sweep(Bytes(8), Bytes(64), 2), f.spec, f.model),
                      report::SweepFormat::json, os);
  const auto j = nlohmann::json::parse(os.str());
  EXPECT_EQ(j["schema_version"], 1);
  ASSERT_EQ(j["rows"].size(), 4u);
  EXPECT_EQ(j["rows"][0]["size_bytes"], 8);
  EXPECT_TRUE(j["rows"][0].contains("busbw_GBps"));
}

}  // namespace
}  // namespace dtsim::workloads
