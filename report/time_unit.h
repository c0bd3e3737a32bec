// The unit a table prints times in: seconds, or ms / us when the time that picks it is short (a
// small trace's iteration, a short job), so that four decimals keep three significant digits.
//   const TimeUnit u = time_unit(iteration_s);
//   out << fmt::format("{:.4f} {}", t_s * u.per_second, u.name);
#pragma once

namespace dtsim::report {

struct TimeUnit {
  const char* name;
  double per_second;
};

inline TimeUnit time_unit(double seconds) {
  if (seconds >= 0.1 || seconds <= 0) return {"s", 1};
  if (seconds >= 1e-4) return {"ms", 1e3};
  return {"us", 1e6};
}

}  // namespace dtsim::report
