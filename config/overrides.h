// Overrides: `--set cluster.nodes=64` (or a sweep point's values) applied to the scenario's YAML
// tree before it is converted to typed values, so a bad override is reported exactly like a bad
// key in the file, with the flag as its source:
//   --set cluster.nodez=4: cluster.nodez: unknown key; did you mean 'nodes'?
#pragma once

#include <string>
#include <vector>

#include "config/loader.h"
#include "config/yaml_tree.h"

namespace dtsim::config {

// How messages name an override: "--set KEY=VALUE".
std::string override_source(const Override& o);

// Sets each override's dotted path in `root`, creating the maps on the way. The value is parsed
// as YAML (a scalar, `[a, b]` or `{k: v}`); a scalar on the way to a deeper key becomes
// `{preset: scalar}`, so `--set cluster.gpu.hbm_capacity=96GB` refines the GPU preset.
void apply_overrides(YamlNode& root, const std::vector<Override>& overrides);

}  // namespace dtsim::config
