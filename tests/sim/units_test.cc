#include "sim/units.h"

#include <gtest/gtest.h>

namespace dtsim {
namespace {

TEST(ParseTime, AcceptsEveryUnit) {
  EXPECT_EQ(parse_time("7ps").ps(), 7);
  EXPECT_EQ(parse_time("500ns").ps(), 500'000);
  EXPECT_EQ(parse_time("1.5us").ps(), 1'500'000);
  EXPECT_EQ(parse_time("2 ms").ps(), 2'000'000'000);
  EXPECT_EQ(parse_time("3s").ps(), 3'000'000'000'000);
}

TEST(ParseTime, RejectsMissingOrUnknownUnit) {
  EXPECT_THROW(parse_time("5"), std::invalid_argument);
  EXPECT_THROW(parse_time("5 minutes"), std::invalid_argument);
  EXPECT_THROW(parse_time("us"), std::invalid_argument);
  EXPECT_THROW(parse_time("-1us"), std::invalid_argument);
}

TEST(ParseTime, OverflowIsAnError) {
  EXPECT_THROW(parse_time("1e9s"), std::overflow_error);
  EXPECT_THROW(parse_time("1e400s"), std::overflow_error);
}

TEST(ParseBytes, DecimalAndBinaryUnits) {
  EXPECT_EQ(parse_bytes("8").count(), 8);
  EXPECT_EQ(parse_bytes("8B").count(), 8);
  EXPECT_EQ(parse_bytes("1KB").count(), 1000);
  EXPECT_EQ(parse_bytes("1KiB").count(), 1024);
  EXPECT_EQ(parse_bytes("4MB").count(), 4'000'000);
  EXPECT_EQ(parse_bytes("32MiB").count(), 32 << 20);
  EXPECT_EQ(parse_bytes("1GB").count(), 1'000'000'000);
  EXPECT_EQ(parse_bytes("8GiB").count(), int64_t{8} << 30);
  EXPECT_EQ(parse_bytes("2TiB").count(), int64_t{2} << 40);
}

TEST(ParseBytes, RejectsBadInput) {
  EXPECT_THROW(parse_bytes("8Gb"), std::invalid_argument);
  EXPECT_THROW(parse_bytes("1.5B"), std::invalid_argument);
  EXPECT_THROW(parse_bytes("-4KiB"), std::invalid_argument);
  EXPECT_THROW(parse_bytes("lots"), std::invalid_argument);
  EXPECT_THROW(parse_bytes("1e10TiB"), std::overflow_error);
}

TEST(ParseBandwidth, BitsAndBytes) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("400Gbps").bytes_per_s(), 50e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1.6Tbps").bytes_per_s(), 200e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("450GB/s").bytes_per_s(), 450e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("100 MB/s").bytes_per_s(), 100e6);
  EXPECT_THROW(parse_bandwidth("400"), std::invalid_argument);
  EXPECT_THROW(parse_bandwidth("400G"), std::invalid_argument);
}

TEST(PrintUnits, RoundTripsThroughParse) {
  for (const char* s : {"1.5us", "500ns", "7ps", "3s", "1.000001ms", "123.456789us"}) {
    EXPECT_EQ(to_string(parse_time(s)), s);
  }
  for (const char* s : {"8GiB", "1KB", "4MB", "3B", "1000001B", "32MiB"}) {
    EXPECT_EQ(to_string(parse_bytes(s)), s);
  }
  for (const char* s : {"50GB/s", "1.6TB/s", "450.5GB/s", "12.5MB/s"}) {
    EXPECT_EQ(to_string(parse_bandwidth(s)), s);
  }
  for (const char* s : {"400Gbps", "1.6Tbps", "100Mbps"}) {
    EXPECT_EQ(to_string_bits(parse_bandwidth(s)), s);
  }
}

TEST(TimeArithmetic, OverflowThrows) {
  EXPECT_THROW(Time::max() + Time::ps(1), std::overflow_error);
  EXPECT_THROW(Time::ps(1) * (int64_t{1} << 62) * 4, std::overflow_error);
  EXPECT_EQ((Time::us(1) + Time::ns(1)).ps(), 1'001'000);
}

TEST(Bandwidth, TransferTimeRoundsUpToPicoseconds) {
  Bandwidth bw = Bandwidth::gbytes_per_s(50);  // 50 bytes per ns
  EXPECT_EQ(bw.transfer_time(Bytes(50)).ps(), 1000);
  EXPECT_EQ(bw.transfer_time(Bytes(1)).ps(), 20);
  EXPECT_EQ(bw.transfer_time(Bytes(3)).ps(), 60);
  EXPECT_EQ(Bandwidth::gbps(400).transfer_time(Bytes::gib(1)).ps(), 21'474'836'480);
  EXPECT_EQ(Bandwidth().transfer_time(Bytes(1)), Time::max());
}

}  // namespace
}  // namespace dtsim
