// sweep: runs every point of a SWEEP.yaml on all cores and writes one CSV row per point.
//   sweep SWEEP.yaml [--jobs N] [--shard I/N] [--out results.csv] [--html report.html]
//                    [--emit-slurm FILE [--tasks N]] [--merge SHARD.csv...] [--mpi]
// Exit status: 0 done, 2 bad input, 1 internal error. Progress goes to stderr on a terminal only.
#include "config/sweep.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include "apps/cli_options.h"
#include "apps/command_main.h"
#include "runner/progress.h"
#include "runner/scenario_runner.h"
#include "config/loader.h"
#include "report/sweep_html.h"
#include "report/sweep_runner.h"
#include "report/sweep_table.h"
#include "sim/error.h"

#ifdef DTSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace {

using namespace dtsim;

struct Flags {
  std::string sweep_file;
  int jobs = 0;
  std::string shard;
  std::string out;
  std::string html;
  std::string emit_slurm;
  int tasks = 16;
  std::vector<std::string> merge;
  std::vector<std::string> sets;
  bool mpi = false;
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string absolute(const std::string& p) {
  return std::filesystem::absolute(p).lexically_normal().string();
}

// An sbatch script for a job array of `tasks` shards; merging is one more command, printed in it.
void emit_slurm(const Flags& f, const config::Sweep& sweep, std::size_t points) {
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  const std::string out = f.out.empty() ? sweep.name + ".csv" : f.out;
  const std::string stem = absolute(out);
  std::ofstream s(f.emit_slurm);
  if (!s)
    throw InputError(SourceLocation{f.emit_slurm, 0, 0}, "--emit-slurm", "cannot write the script");
  std::string sets;
  for (const std::string& set : f.sets) sets += " --set " + shell_quote(set);
  const std::string command = shell_quote(absolute(sweep.file)) + sets;
  s << "#!/bin/bash\n"
    << "# Runs the sweep " << sweep.file << " (" << points << " points) as a Slurm job array of\n"
    << "# " << f.tasks << " shards, each writing its own CSV. Submit with `sbatch " << f.emit_slurm
    << "`.\n"
    << "# When every task is done, merge the shards (the Pareto column needs every row):\n"
    << "#   " << shell_quote(self) << ' ' << command << " --merge " << shell_quote(stem)
    << ".shard*.csv --out " << shell_quote(stem) << "\n"
    << "#SBATCH --job-name=dtsim-" << sweep.name << "\n"
    << "#SBATCH --array=0-" << f.tasks - 1 << "\n"
    << "#SBATCH --nodes=1\n"
    << "#SBATCH --ntasks=1\n"
    << "#SBATCH --cpus-per-task=" << (f.jobs > 0 ? f.jobs : 16) << "\n"
    << "#SBATCH --output=" << stem << ".shard%a.log\n"
    << "set -euo pipefail\n"
    << "SWEEP_BIN=${SWEEP_BIN:-" << shell_quote(self) << "}\n"
    << "\"$SWEEP_BIN\" " << command << " --shard \"${SLURM_ARRAY_TASK_ID}/" << f.tasks << "\""
    << " --jobs \"${SLURM_CPUS_PER_TASK:-0}\""
    << " --out " << shell_quote(stem) << "\".shard${SLURM_ARRAY_TASK_ID}.csv\"\n";
}

report::Metrics evaluate(const config::Scenario& s) {
  return runner::evaluate_scenario(s).metrics;
}

// load_scenario with the --set overrides first, so that a point's own values win over them.
config::ScenarioLoader loader_for(const Flags& f) {
  std::vector<config::Override> sets;
  for (const std::string& s : f.sets) sets.push_back(config::parse_override(s));
  // The loader's notes, once each however many points repeat them (points load in parallel).
  struct Said {
    std::mutex mutex;
    std::set<std::string> notes;
  };
  auto said = std::make_shared<Said>();
  return [sets, said](const std::string& path, const std::vector<config::Override>& overrides) {
    std::vector<config::Override> all = sets;
    all.insert(all.end(), overrides.begin(), overrides.end());
    config::Scenario s = config::load_scenario(path, all);
    if (!s.notes.empty()) {
      std::lock_guard lock(said->mutex);
      for (const std::string& n : s.notes) {
        if (said->notes.insert(n).second) std::cerr << "sweep: warning: " << n << "\n";
      }
    }
    return s;
  };
}

report::SweepTable table_for(const config::Sweep& sweep, const config::ScenarioLoader& load) {
  report::SweepTable t;
  t.sweep_file = sweep.file;
  t.base_file = sweep.base;
  t.base_scenario = config::dump_scenario(load(sweep.base, {}));
  t.varied_keys = sweep.varied_keys();
  return t;
}

void write_table(report::SweepTable table, const Flags& f, const config::Sweep& sweep) {
  if (!table.shard) report::mark_pareto(table);
  if (f.out.empty()) {
    report::write_sweep_csv(table, std::cout);
  } else {
    report::write_sweep_csv_file(table, f.out);
  }
  if (!f.html.empty()) {
    std::ofstream h(f.html);
    if (!h) throw InputError(SourceLocation{f.html, 0, 0}, "--html", "cannot write the page");
    report::write_sweep_html(table, sweep.name, h);
  }
}

// The rows an earlier run left in --out, to resume from. Rows computed from another base scenario
// (the file changed, or other --set values) would be wrong here, so that is an error.
std::vector<report::SweepRow> previous_rows(const Flags& f, const report::SweepTable& table,
                                            const std::vector<config::SweepPoint>& points) {
  if (f.out.empty() || !std::filesystem::exists(f.out)) return {};
  const report::SweepTable old = report::read_sweep_csv_file(f.out);
  if (old.base_scenario != table.base_scenario) {
    throw InputError(SourceLocation{f.out, 0, 0}, "",
                     "this table was computed from another base scenario than " + table.base_file +
                         " resolves to now; move it away or write to another --out");
  }
  return report::rows_for_points({old}, table.varied_keys, points);
}

int run_local(const Flags& f, const config::Sweep& sweep,
              const std::vector<config::SweepPoint>& points, const config::ScenarioLoader& load) {
  report::SweepTable table = table_for(sweep, load);
  report::SweepRunOptions opt;
  opt.jobs = f.jobs;
  if (!f.shard.empty()) {
    opt.shard = report::Shard::parse(f.shard);
    if (opt.shard.count > 1) table.shard = opt.shard.to_string();
  }
  // The runner reports absolute counts; the shared bar takes increments.
  std::unique_ptr<runner::Progress> bar;
  std::size_t reported = 0;
  opt.on_progress = [&](std::size_t done, std::size_t total) {
    if (!bar) bar = std::make_unique<runner::Progress>(static_cast<int64_t>(total), "sweep", runner::Progress::stderr_is_terminal());
    bar->advance(static_cast<int64_t>(done - reported));
    reported = done;
  };
  if (!f.out.empty()) {
    opt.on_checkpoint = [&](const std::vector<report::SweepRow>& rows) {
      report::SweepTable partial = table;
      partial.rows = rows;
      report::write_sweep_csv_file(partial, f.out);
    };
  }
  table.rows =
      report::run_sweep(sweep, points, load, evaluate, previous_rows(f, table, points), opt);
  write_table(std::move(table), f, sweep);
  return 0;
}

int run_merge(const Flags& f, const config::Sweep& sweep,
              const std::vector<config::SweepPoint>& points, const config::ScenarioLoader& load) {
  std::vector<report::SweepTable> parts;
  for (const std::string& path : f.merge) parts.push_back(report::read_sweep_csv_file(path));
  report::SweepTable table = table_for(sweep, load);
  table.rows = report::rows_for_points(parts, table.varied_keys, points);
  if (table.rows.size() != points.size()) {
    std::fprintf(stderr, "sweep: the merged tables hold %zu of the sweep's %zu points\n",
                 table.rows.size(), points.size());
  }
  write_table(std::move(table), f, sweep);
  return 0;
}

#ifdef DTSIM_HAVE_MPI
// Each rank runs the shard rank/size; rank 0 gathers the shards' tables as CSV text and writes
// the one table, exactly what an unsharded run writes.
int run_mpi(const Flags& f, const config::Sweep& sweep,
            const std::vector<config::SweepPoint>& points, const config::ScenarioLoader& load) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  report::SweepTable table = table_for(sweep, load);
  report::SweepRunOptions opt;
  opt.jobs = f.jobs;
  opt.shard = {static_cast<std::size_t>(rank), static_cast<std::size_t>(size)};
  report::SweepTable mine = table;
  mine.rows =
      report::run_sweep(sweep, points, load, evaluate, previous_rows(f, table, points), opt);
  std::ostringstream text;
  report::write_sweep_csv(mine, text);
  const std::string local = text.str();
  int length = static_cast<int>(local.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(size), 0);
  std::string all;
  if (rank == 0) {
    for (std::size_t r = 1; r < lengths.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
    all.resize(static_cast<std::size_t>(offsets.back()) + static_cast<std::size_t>(lengths.back()));
  }
  MPI_Gatherv(local.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  if (rank != 0) return 0;
  std::vector<report::SweepTable> parts;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    std::istringstream in(
        all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
    parts.push_back(report::read_sweep_csv(in, "rank " + std::to_string(r)));
  }
  table.rows = report::rows_for_points(parts, table.varied_keys, points);
  write_table(std::move(table), f, sweep);
  return 0;
}
#endif

int run(const Flags& f) {
  const config::Sweep sweep = config::read_sweep(f.sweep_file);
  const config::ScenarioLoader load = loader_for(f);
  const std::vector<config::SweepPoint> points = config::expand_sweep(sweep, load);
  if (!f.emit_slurm.empty()) {
    if (f.tasks < 1) throw InputError(SourceLocation{}, "--tasks", "expected a positive count");
    emit_slurm(f, sweep, points.size());
    return 0;
  }
  if (!f.merge.empty()) return run_merge(f, sweep, points, load);
  if (f.mpi) {
#ifdef DTSIM_HAVE_MPI
    if (!f.shard.empty())
      throw InputError(SourceLocation{}, "--mpi", "each rank is a shard; drop --shard");
    return run_mpi(f, sweep, points, load);
#else
    throw InputError(SourceLocation{}, "--mpi",
                     "this sweep was built without MPI (Open MPI not found)");
#endif
  }
  return run_local(f, sweep, points, load);
}

}  // namespace

int main(int argc, char** argv) {
  dtsim::apps::keep_large_arrays_for_reuse();
  Flags f;
  CLI::App app{"Runs every point of a sweep file and writes one CSV row per point."};
  app.add_option("sweep", f.sweep_file, "the sweep file (SWEEP.yaml)")->required();
  app.add_option("--jobs,-j", f.jobs, "worker threads (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--shard", f.shard, "run only points with index % N == I (I/N)");
  app.add_option("--out,-o", f.out, "results CSV; points already in it are not run again");
  app.add_option("--emit-slurm", f.emit_slurm, "write an sbatch job-array script and exit");
  app.add_option("--tasks", f.tasks, "array tasks (shards) for --emit-slurm (default 16)");
  app.add_option("--merge", f.merge, "merge shard tables into one (with --out)")->expected(1, -1);
  apps::add_repeatable(app, "--set", f.sets, "override the base scenario for every point");
  app.add_option("--html", f.html, "also write a self-contained HTML page of the results");
  app.add_flag("--mpi", f.mpi, "under mpirun: each rank runs a share, rank 0 writes the table");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

#ifdef DTSIM_HAVE_MPI
  if (f.mpi) MPI_Init(&argc, &argv);
#endif
  int status = 0;
  try {
    status = run(f);
  } catch (const InputError& e) {
    std::fprintf(stderr, "sweep: %s\n", e.what());
    status = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sweep: internal error: %s\n", e.what());
    status = 1;
  }
#ifdef DTSIM_HAVE_MPI
  if (f.mpi) {
    // One rank's failure must not leave the others waiting in a collective.
    if (status != 0) MPI_Abort(MPI_COMM_WORLD, status);
    MPI_Finalize();
  }
#endif
  return status;
}
