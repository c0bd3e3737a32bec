#include "report/chrome_trace.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace dtsim::report {
namespace {

using nlohmann::json;

Timeline sample() {
  Timeline t;
  const auto compute = t.track("node0/gpu0", "compute");
  const auto comm = t.track("node0/gpu0", "tp-comm");
  t.track("links", "idle-link");  // never used: must not appear
  const auto link = t.track("links", "leaf0->spine1");
  t.span(compute, "attn_fwd", Time::us(10), Time::us(35), "compute");
  t.span(compute, "mlp_fwd", Time::us(35), Time::ps(60'000'001), "compute");
  t.span(comm, "all_reduce", Time::us(20), Time::us(50), "tp");
  t.span(comm, "qkv_proj", Time::us(22), Time::us(30), "tp");  // nested inside all_reduce
  t.span(link, "flow 1", Time::us(0), Time::us(40), "dp");
  t.span(link, "flow 2", Time::us(30), Time::us(70), "dp");  // overlaps flow 1 without nesting
  t.counter(link, "utilisation", Time::us(0), 0.5);
  t.counter(link, "utilisation", Time::us(30), 1.0);
  return t;
}

json trace_of(const Timeline& t) {
  std::ostringstream os;
  write_chrome_trace(t, {"demo", "name: demo\nseed: 1\n"}, os);
  return json::parse(os.str());  // throws when the output is not JSON
}

std::vector<json> events(const json& j, const std::string& ph) {
  std::vector<json> out;
  for (const json& e : j.at("traceEvents")) {
    if (e.at("ph") == ph) out.push_back(e);
  }
  return out;
}

TEST(ChromeTrace, IsJsonWithTraceEventsAndSchemaVersion) {
  const json j = trace_of(sample());
  ASSERT_TRUE(j.at("traceEvents").is_array());
  EXPECT_EQ(j.at("otherData").at("schema_version"), kTraceSchemaVersion);
  EXPECT_EQ(j.at("otherData").at("scenario"), "name: demo\nseed: 1\n");
  EXPECT_EQ(j.at("displayTimeUnit"), "ns");
}

TEST(ChromeTrace, EverySpanIsACompleteEventInMicroseconds) {
  const auto xs = events(trace_of(sample()), "X");
  ASSERT_EQ(xs.size(), 6u);
  for (const json& e : xs) {
    EXPECT_TRUE(e.at("ts").is_number());
    EXPECT_TRUE(e.at("dur").is_number());
    EXPECT_GE(e.at("dur").get<double>(), 0);
    EXPECT_TRUE(e.at("pid").is_number_integer());
    EXPECT_TRUE(e.at("tid").is_number_integer());
  }
  EXPECT_EQ(xs[0].at("name"), "attn_fwd");
  EXPECT_DOUBLE_EQ(xs[0].at("ts").get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(xs[0].at("dur").get<double>(), 25.0);
}

TEST(ChromeTrace, TimestampsKeepPicoseconds) {
  EXPECT_EQ(trace_microseconds(Time::ps(60'000'001)), "60.000001");
  EXPECT_EQ(trace_microseconds(Time::us(1.5)), "1.5");
  EXPECT_EQ(trace_microseconds(Time::zero()), "0");
}

TEST(ChromeTrace, ProcessesAndThreadsAreNamedByMetadataEvents) {
  const json j = trace_of(sample());
  std::set<std::string> processes, threads;
  for (const json& e : events(j, "M")) {
    if (e.at("name") == "process_name")
      processes.insert(e.at("args").at("name").get<std::string>());
    if (e.at("name") == "thread_name") threads.insert(e.at("args").at("name").get<std::string>());
  }
  EXPECT_EQ(processes, (std::set<std::string>{"node0/gpu0", "links"}));
  EXPECT_TRUE(threads.count("compute"));
  EXPECT_TRUE(threads.count("tp-comm"));
  EXPECT_TRUE(threads.count("leaf0->spine1"));
}

TEST(ChromeTrace, TracksWithNothingOnThemAreLeftOut) {
  const json j = trace_of(sample());
  for (const json& e : events(j, "M")) {
    if (e.at("name") == "thread_name") {
      EXPECT_NE(e.at("args").at("name"), "idle-link");
    }
  }
}

TEST(ChromeTrace, CounterSamplesAreCounterEventsOnTheLinksProcess) {
  const json j = trace_of(sample());
  const auto cs = events(j, "C");
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[1].at("name"), "leaf0->spine1 utilisation");
  EXPECT_DOUBLE_EQ(cs[1].at("args").at("utilisation").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(cs[1].at("ts").get<double>(), 30.0);
}

// Perfetto's rule for JSON traces: complete events on one thread must nest; partial overlaps are
// not displayed correctly. Check it for every (pid, tid).
TEST(ChromeTrace, SlicesOnEachThreadNestOrAreDisjoint) {
  const json j = trace_of(sample());
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> by_thread;
  for (const json& e : events(j, "X")) {
    const double ts = e.at("ts").get<double>();
    by_thread[{e.at("pid").get<int>(), e.at("tid").get<int>()}].push_back(
        {ts, ts + e.at("dur").get<double>()});
  }
  for (const auto& [thread, slices] : by_thread) {
    for (const auto& a : slices) {
      for (const auto& b : slices) {
        const bool disjoint = a.second <= b.first || b.second <= a.first;
        const bool nested = (a.first <= b.first && b.second <= a.second) ||
                            (b.first <= a.first && a.second <= b.second);
        EXPECT_TRUE(disjoint || nested) << "pid " << thread.first << " tid " << thread.second;
      }
    }
  }
}

TEST(ChromeTrace, OverlappingSpansOfATrackGoToASecondThread) {
  const json j = trace_of(sample());
  std::set<std::string> threads;
  for (const json& e : events(j, "M")) {
    if (e.at("name") == "thread_name") threads.insert(e.at("args").at("name").get<std::string>());
  }
  EXPECT_TRUE(threads.count("leaf0->spine1 (2)"));
  EXPECT_FALSE(threads.count("tp-comm (2)"));  // nested spans share a thread
}

TEST(ChromeTrace, NamesWithQuotesAndNewlinesStayValidJson) {
  Timeline t;
  t.span(t.track("p\"1", "a\\b"), "x\n\"y\"", Time::us(1), Time::us(2));
  const json j = trace_of(t);
  EXPECT_EQ(events(j, "X").at(0).at("name"), "x\n\"y\"");
}

TEST(ChromeTrace, SameTimelineGivesTheSameBytes) {
  std::ostringstream a, b;
  write_chrome_trace(sample(), {"demo", ""}, a);
  write_chrome_trace(sample(), {"demo", ""}, b);
  EXPECT_EQ(a.str(), b.str());
}

}  // namespace
}  // namespace dtsim::report
