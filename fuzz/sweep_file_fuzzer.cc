// libFuzzer target for the sweep file reader (config/sweep.h): any bytes are read or refused with an
// InputError; a sweep that reads expands over a fixed base scenario (each point's overrides loaded
// or refused with an InputError), where its product is small enough to expand here.
//   scripts/fuzz.sh 600 sweep_file
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/loader.h"
#include "config/sweep.h"
#include "fuzz/finding.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace dtsim;
  config::Sweep sweep;
  if (!fuzz::reads_or_refuses("read_sweep_text", [&] { sweep = config::read_sweep_text(text, "fuzz-sweep.yaml"); })) return 0;
  double points = 1;
  for (const config::SweepAxis& a : sweep.axes) points *= static_cast<double>(a.values.size());
  if (points > 4096) return 0;
  static const std::string base = "cluster: {node: hgx-h100, nodes: 4}\n"
                                  "workload: {kind: training, model: llama3-8b, parallel: {tp: 8, dp: 4}}\n";
  const config::ScenarioLoader load = [](const std::string&, const std::vector<config::Override>& overrides) {
    return config::load_scenario_text(base, "base.yaml", overrides);
  };
  std::vector<config::SweepPoint> expanded;
  if (!fuzz::reads_or_refuses("expand_sweep", [&] { expanded = config::expand_sweep(sweep, load); })) return 0;
  for (const config::SweepPoint& p : expanded) {
    fuzz::reads_or_refuses("load_scenario_text (a sweep point)", [&] { (void)load("", p.overrides); });
  }
  return 0;
}
