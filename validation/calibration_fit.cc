#include "validation/calibration_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace dtsim::validation {
namespace {

// The fitter works in u-space: u = ln(value) for parameters bounded away from zero (so a step
// is a relative change and they never turn negative), u = value otherwise.
struct Space {
  std::vector<bool> log;
  std::vector<double> lo, hi, u0, scale;

  explicit Space(std::span<const FitParameter> ps) {
    for (const FitParameter& p : ps) {
      bool l = p.lower > 0;
      log.push_back(l);
      lo.push_back(l ? std::log(p.lower) : p.lower);
      hi.push_back(l ? std::log(p.upper) : p.upper);
      double init = std::clamp(p.initial, p.lower, p.upper);
      u0.push_back(l ? std::log(init) : init);
      scale.push_back(std::max(hi.back() - lo.back(), 1e-12));
    }
  }
  size_t size() const { return log.size(); }
  std::vector<double> values(const std::vector<double>& u) const {
    std::vector<double> v(u.size());
    for (size_t j = 0; j < u.size(); ++j) v[j] = log[j] ? std::exp(u[j]) : u[j];
    return v;
  }
  void clamp(std::vector<double>& u) const {
    for (size_t j = 0; j < u.size(); ++j) u[j] = std::clamp(u[j], lo[j], hi[j]);
  }
};

// ln(predicted / measured) for every point of every dataset, in a fixed order. A prediction of
// zero or less (a model that cannot run the case) is a large finite residual, not a NaN.
std::vector<double> residuals(std::span<const FitDataset> datasets, std::span<const double> v) {
  std::vector<double> r;
  for (const FitDataset& d : datasets) {
    std::vector<double> pred = d.predict_us(v);
    for (size_t i = 0; i < d.points.size(); ++i) {
      double x = i < pred.size() ? pred[i] : 0.0;
      r.push_back(x > 0 && std::isfinite(x) ? std::log(x / d.points[i].measured_us) : 10.0);
    }
  }
  return r;
}

double huber(double r, double delta) {
  double a = std::abs(r);
  return a <= delta ? 0.5 * r * r : delta * (a - 0.5 * delta);
}

double cost(const Space& s, const std::vector<double>& r, const std::vector<double>& u,
            const FitOptions& o) {
  double c = 0;
  for (double x : r) c += huber(x, o.huber_delta);
  for (size_t j = 0; j < s.size(); ++j) {
    double d = (u[j] - s.u0[j]) / s.scale[j];
    c += 0.5 * o.prior_weight * d * d;
  }
  return c;
}

// Solves A x = b in place by Gaussian elimination with partial pivoting; A is n x n row-major.
std::vector<double> solve(std::vector<double> a, std::vector<double> b) {
  const size_t n = b.size();
  for (size_t k = 0; k < n; ++k) {
    size_t piv = k;
    for (size_t i = k + 1; i < n; ++i)
      if (std::abs(a[i * n + k]) > std::abs(a[piv * n + k])) piv = i;
    if (std::abs(a[piv * n + k]) < 1e-300) continue;
    if (piv != k) {
      for (size_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[piv * n + j]);
      std::swap(b[k], b[piv]);
    }
    for (size_t i = k + 1; i < n; ++i) {
      double f = a[i * n + k] / a[k * n + k];
      if (f == 0) continue;
      for (size_t j = k; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
      b[i] -= f * b[k];
    }
  }
  std::vector<double> x(n, 0.0);
  for (size_t k = n; k-- > 0;) {
    if (std::abs(a[k * n + k]) < 1e-300) continue;
    double s = b[k];
    for (size_t j = k + 1; j < n; ++j) s -= a[k * n + j] * x[j];
    x[k] = s / a[k * n + k];
  }
  return x;
}

}  // namespace

FitResult fit_parameters(std::span<const FitParameter> parameters,
                         std::span<const FitDataset> datasets, const FitOptions& o) {
  for (const FitParameter& p : parameters)
    if (!(p.lower <= p.upper)) throw std::invalid_argument("fit parameter " + p.name + ": lower > upper");
  Space s(parameters);
  const size_t n = s.size();
  std::vector<double> u = s.u0;
  std::vector<double> r = residuals(datasets, s.values(u));
  const size_t m = r.size();
  double c = cost(s, r, u, o);
  FitResult result;
  result.initial_cost = c;
  double lambda = 1e-2;

  for (int it = 0; it < o.max_iterations; ++it) {
    result.iterations = it + 1;
    // Forward-difference Jacobian of the residuals in u-space. A step that hits a bound is
    // taken backwards instead so the derivative is still measured inside the box.
    std::vector<double> jac(m * n, 0.0);
    for (size_t j = 0; j < n; ++j) {
      if (s.hi[j] <= s.lo[j]) continue;  // a fixed parameter
      double h = 1e-4 * std::max(1.0, std::abs(u[j]));
      if (u[j] + h > s.hi[j]) h = -h;
      std::vector<double> up = u;
      up[j] += h;
      std::vector<double> rp = residuals(datasets, s.values(up));
      for (size_t i = 0; i < m; ++i) jac[i * n + j] = (rp[i] - r[i]) / h;
    }
    // Huber as iteratively reweighted least squares: weight 1 inside delta, delta/|r| outside.
    std::vector<double> jtj(n * n, 0.0), g(n, 0.0);
    for (size_t i = 0; i < m; ++i) {
      double a = std::abs(r[i]);
      double w = a <= o.huber_delta ? 1.0 : o.huber_delta / a;
      for (size_t j = 0; j < n; ++j) {
        double jij = jac[i * n + j];
        if (jij == 0) continue;
        g[j] += w * jij * r[i];
        for (size_t k = 0; k < n; ++k) jtj[j * n + k] += w * jij * jac[i * n + k];
      }
    }
    for (size_t j = 0; j < n; ++j) {
      double pw = o.prior_weight / (s.scale[j] * s.scale[j]);
      jtj[j * n + j] += pw;
      g[j] += pw * (u[j] - s.u0[j]);
    }

    bool improved = false;
    for (int tries = 0; tries < 12 && !improved; ++tries) {
      std::vector<double> a = jtj;
      for (size_t j = 0; j < n; ++j) a[j * n + j] += lambda * std::max(jtj[j * n + j], 1e-9);
      std::vector<double> neg_g(n);
      for (size_t j = 0; j < n; ++j) neg_g[j] = -g[j];
      std::vector<double> step = solve(a, neg_g);
      std::vector<double> un = u;
      for (size_t j = 0; j < n; ++j) un[j] += step[j];
      s.clamp(un);
      double largest = 0;
      for (size_t j = 0; j < n; ++j) largest = std::max(largest, std::abs(un[j] - u[j]));
      if (largest <= o.step_tolerance) {
        // Negligible: the tries left would only damp it further.
        result.converged = true;
        break;
      }
      std::vector<double> rn = residuals(datasets, s.values(un));
      double cn = cost(s, rn, un, o);
      if (cn < c) {
        double rel = (c - cn) / std::max(c, 1e-300);
        u = std::move(un);
        r = std::move(rn);
        c = cn;
        lambda = std::max(lambda / 3, 1e-9);
        improved = true;
        if (rel < o.tolerance) result.converged = true;
      } else {
        lambda *= 4;
      }
    }
    if (!improved || result.converged) {
      result.converged = true;
      break;
    }
  }
  result.values = s.values(u);
  result.final_cost = c;
  return result;
}

double mean_abs_error_pct(const FitDataset& dataset, std::span<const double> values) {
  if (dataset.points.empty()) return 0;
  double sum = 0;
  std::vector<double> pred = dataset.predict_us(values);
  for (size_t i = 0; i < dataset.points.size(); ++i) {
    const FitPoint& p = dataset.points[i];
    double x = i < pred.size() ? pred[i] : 0.0;
    sum += std::abs(x - p.measured_us) / p.measured_us * 100.0;
  }
  return sum / static_cast<double>(dataset.points.size());
}

CrossValidation cross_validate(std::span<const FitParameter> parameters,
                               std::span<const FitDataset> datasets, const FitOptions& options) {
  CrossValidation cv;
  cv.all = fit_parameters(parameters, datasets, options);
  std::vector<double> initial;
  for (const FitParameter& p : parameters) initial.push_back(std::clamp(p.initial, p.lower, p.upper));
  for (size_t k = 0; k < datasets.size(); ++k) {
    CrossValidationRow row;
    row.dataset = datasets[k].name;
    row.points = datasets[k].points.size();
    row.initial_pct = mean_abs_error_pct(datasets[k], initial);
    row.in_sample_pct = mean_abs_error_pct(datasets[k], cv.all.values);
    std::vector<FitDataset> rest;
    for (size_t i = 0; i < datasets.size(); ++i)
      if (i != k) rest.push_back(datasets[i]);
    row.held_out = rest.empty() ? FitResult{initial, 0, 0, 0, true} : fit_parameters(parameters, rest, options);
    row.leave_one_out_pct = mean_abs_error_pct(datasets[k], row.held_out.values);
    cv.rows.push_back(row);
  }
  return cv;
}

}  // namespace dtsim::validation
