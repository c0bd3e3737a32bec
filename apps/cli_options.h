// A repeatable command-line option that takes one value per use (--set A=1 --set B=2). CLI11's
// vector options otherwise take every following word, so `validate --set K=V measured.txt`
// swallowed the measured file as a second override.
//   add_repeatable(app, "--set", sets, "override a scenario key");
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace dtsim::apps {

inline CLI::Option* add_repeatable(CLI::App& app, const std::string& name, std::vector<std::string>& into,
                                   const std::string& help, const std::string& type_name = "KEY=VALUE") {
  return app.add_option(name, into, help)
      ->type_name(type_name)
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

}  // namespace dtsim::apps
