#include "sim/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

namespace dtsim {
namespace detail {

void throw_overflow(const char* what) {
  throw std::overflow_error(std::string(what) + " overflows its 64-bit range");
}

int64_t checked_round(double v, const char* what) {
  // 2^63 is exactly representable; anything at or beyond it cannot be held.
  if (!std::isfinite(v) || v >= 9.2233720368547758e18 || v < -9.2233720368547758e18) {
    throw_overflow(what);
  }
  return static_cast<int64_t>(std::llround(v));
}

}  // namespace detail

namespace {

struct NumberAndUnit {
  double value = 0;
  std::string_view unit;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

NumberAndUnit split(std::string_view text, const char* expected) {
  std::string_view s = trim(text);
  NumberAndUnit out;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(begin, end, out.value);
  if (ec == std::errc::result_out_of_range) {
    throw std::overflow_error("\"" + std::string(text) + "\" is out of range");
  }
  if (ec != std::errc() || !std::isfinite(out.value)) {
    throw std::invalid_argument("expected " + std::string(expected) + ", got \"" +
                                std::string(text) + "\"");
  }
  out.unit = trim(std::string_view(ptr, static_cast<size_t>(end - ptr)));
  return out;
}

[[noreturn]] void bad_unit(std::string_view text, const char* expected) {
  throw std::invalid_argument("expected " + std::string(expected) + ", got \"" +
                              std::string(text) + "\"");
}

// Formats v with up to 12 significant digits and no trailing zeros.
std::string compact(double v) { return fmt::format("{:.12g}", v); }

}  // namespace

Time Bandwidth::transfer_time(Bytes b) const {
  if (b.count() <= 0) return Time::zero();
  if (v_ <= 0) return Time::max();
  double ps = std::ceil(b.as_double() / v_ * 1e12 - 1e-6);
  return Time::ps(detail::checked_round(ps, "Time"));
}

Time parse_time(std::string_view text) {
  static constexpr const char* kExpected = "a duration with a unit (ps, ns, us, ms, s), like 1.5us";
  auto [v, unit] = split(text, kExpected);
  double scale;
  if (unit == "ps") scale = 1;
  else if (unit == "ns") scale = 1e3;
  else if (unit == "us") scale = 1e6;
  else if (unit == "ms") scale = 1e9;
  else if (unit == "s") scale = 1e12;
  else bad_unit(text, kExpected);
  if (v < 0) throw std::invalid_argument("expected a non-negative duration, got \"" + std::string(text) + "\"");
  return Time::ps(detail::checked_round(v * scale, "duration"));
}

Bytes parse_bytes(std::string_view text) {
  static constexpr const char* kExpected =
      "a size in bytes (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), like 8GiB";
  auto [v, unit] = split(text, kExpected);
  double scale;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "KB" || unit == "kB") scale = 1e3;
  else if (unit == "MB") scale = 1e6;
  else if (unit == "GB") scale = 1e9;
  else if (unit == "TB") scale = 1e12;
  else if (unit == "KiB") scale = 1024.0;
  else if (unit == "MiB") scale = 1024.0 * 1024;
  else if (unit == "GiB") scale = 1024.0 * 1024 * 1024;
  else if (unit == "TiB") scale = 1024.0 * 1024 * 1024 * 1024;
  else bad_unit(text, kExpected);
  if (v < 0) throw std::invalid_argument("expected a non-negative size, got \"" + std::string(text) + "\"");
  double bytes = v * scale;
  if (bytes != std::floor(bytes)) {
    throw std::invalid_argument("expected a whole number of bytes, got \"" + std::string(text) + "\"");
  }
  return Bytes(detail::checked_round(bytes, "size"));
}

Bandwidth parse_bandwidth(std::string_view text) {
  static constexpr const char* kExpected =
      "a bandwidth with a unit (Mbps, Gbps, Tbps, MB/s, GB/s, TB/s), like 400Gbps";
  auto [v, unit] = split(text, kExpected);
  double bytes_per_s;
  if (unit == "Mbps") bytes_per_s = v * 1e6 / 8;
  else if (unit == "Gbps") bytes_per_s = v * 1e9 / 8;
  else if (unit == "Tbps") bytes_per_s = v * 1e12 / 8;
  else if (unit == "MB/s") bytes_per_s = v * 1e6;
  else if (unit == "GB/s") bytes_per_s = v * 1e9;
  else if (unit == "TB/s") bytes_per_s = v * 1e12;
  else bad_unit(text, kExpected);
  if (v < 0) throw std::invalid_argument("expected a non-negative bandwidth, got \"" + std::string(text) + "\"");
  if (!std::isfinite(bytes_per_s) || bytes_per_s > 1e18) {
    throw std::overflow_error("bandwidth \"" + std::string(text) + "\" is out of range");
  }
  return Bandwidth::bytes_per_s(bytes_per_s);
}

std::string to_string(Time t) {
  // Exact: the integer part in the largest unit that keeps it non-zero, then the remaining
  // picoseconds as a decimal fraction without trailing zeros.
  int64_t ps = t.ps();
  std::string sign = ps < 0 ? "-" : "";
  uint64_t a = ps < 0 ? 0 - static_cast<uint64_t>(ps) : static_cast<uint64_t>(ps);
  struct Unit { uint64_t size; int digits; const char* name; };
  static constexpr Unit kUnits[] = {{1'000'000'000'000, 12, "s"}, {1'000'000'000, 9, "ms"},
                                    {1'000'000, 6, "us"}, {1'000, 3, "ns"}};
  for (const auto& u : kUnits) {
    if (a >= u.size) {
      std::string frac = fmt::format("{:0{}d}", a % u.size, u.digits);
      while (!frac.empty() && frac.back() == '0') frac.pop_back();
      return sign + std::to_string(a / u.size) + (frac.empty() ? "" : "." + frac) + u.name;
    }
  }
  return sign + std::to_string(a) + "ps";
}

std::string to_string(Bytes b) {
  int64_t v = b.count();
  struct Unit { int64_t size; const char* name; };
  static constexpr Unit kBinary[] = {{int64_t{1} << 40, "TiB"}, {int64_t{1} << 30, "GiB"},
                                     {int64_t{1} << 20, "MiB"}, {int64_t{1} << 10, "KiB"}};
  static constexpr Unit kDecimal[] = {{1'000'000'000'000, "TB"}, {1'000'000'000, "GB"},
                                      {1'000'000, "MB"}, {1'000, "KB"}};
  for (const auto& u : kBinary) {
    if (v != 0 && v % u.size == 0) return std::to_string(v / u.size) + u.name;
  }
  for (const auto& u : kDecimal) {
    if (v != 0 && v % u.size == 0) return std::to_string(v / u.size) + u.name;
  }
  return std::to_string(v) + "B";
}

std::string to_string(Bandwidth bw) {
  double gBps = bw.gbytes_per_s();
  if (gBps >= 1000) return compact(gBps / 1000) + "TB/s";
  if (gBps >= 1) return compact(gBps) + "GB/s";
  return compact(bw.bytes_per_s() / 1e6) + "MB/s";
}

std::string to_string_bits(Bandwidth bw) {
  double gbps = bw.gbps();
  if (gbps >= 1000) return compact(gbps / 1000) + "Tbps";
  if (gbps >= 1) return compact(gbps) + "Gbps";
  return compact(gbps * 1000) + "Mbps";
}

}  // namespace dtsim
