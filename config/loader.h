// Loading scenarios: YAML text -> a fully resolved, typed Scenario. Order of precedence, lowest
// first: built-in defaults, catalog presets (cluster.node, cluster.gpu, workload.model.preset),
// the file's own keys, then overrides (`--set cluster.nodes=64`, or a sweep point's values).
// Every mistake throws InputError naming file, line, column, key and what was expected.
//   config::Scenario s = config::load_scenario("scenarios/default.yaml", {{"cluster.nodes", "4"}});
//   std::cout << config::dump_scenario(s);   // the resolved scenario, loadable again
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/scenario.h"

namespace dtsim::config {

struct Override {
  std::string key;    // dotted path, e.g. "cluster.fabric.oversubscription"
  std::string value;  // YAML scalar or flow sequence/map text, e.g. "2", "[table, csv]"
};

// Parses "KEY=VALUE" as given to --set; throws InputError when there is no '='.
Override parse_override(std::string_view text);

Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides = {});
// The same from text; `source_name` is used in messages and for the default name.
Scenario load_scenario_text(std::string_view yaml, const std::string& source_name,
                            const std::vector<Override>& overrides = {});

// The resolved scenario as YAML that load_scenario_text accepts and resolves to the same values.
std::string dump_scenario(const Scenario& s);

}  // namespace dtsim::config
