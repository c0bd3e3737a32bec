// nccl-replay: runs a scenario's collective sweep with real NCCL on real GPUs and writes the
// measured CSV (validation/measured format), so validate and calibrate take it directly.
//   nccl-replay SCENARIO.yaml [-o FILE] [--iters N] [--warmup N] [--gpus N]   one process, all GPUs
//   mpirun -np 16 nccl-replay SCENARIO.yaml -o run.csv                        (built with MPI)
//   nccl-replay SCENARIO.yaml --rendezvous node0:29500 --rank R --world N     TCP, no MPI
// Exit status: 0 done, 2 bad input, 4 some result was wrong (those sizes are not written),
// 1 internal error (CUDA, NCCL).
#include <CLI/CLI.hpp>
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "apps/nccl_replay/replay_runner.h"
#include "config/loader.h"
#include "sim/error.h"
#include "validation/measurement_csv.h"
#include "validation/rendezvous.h"

#if DTSIM_WITH_MPI
#include <mpi.h>
#endif

namespace {

using namespace dtsim;

constexpr int kExitWrongResults = 4;

std::optional<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::atoi(v);
}

// The local rank a launcher gives this process, for picking its GPU.
std::optional<int> launcher_local_rank() {
  for (const char* n : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "LOCAL_RANK"})
    if (auto v = env_int(n)) return v;
  return std::nullopt;
}

int run(int argc, char** argv) {
  CLI::App app{"Run a scenario's collective sweep with real NCCL and write the measured CSV"};
  std::string scenario_path;
  std::optional<std::string> output, rendezvous;
  std::optional<int> rank, world, device, gpus;
  std::vector<std::string> sets;
  replay::RunSettings settings;
  bool no_in_place = false;
  int timeout_s = 300;
  app.add_option("scenario", scenario_path, "scenario with a collective-sweep workload")->required();
  app.add_option("-o,--output", output, "CSV to write (default: stdout)");
  app.add_option("--set", sets, "override a scenario key, KEY=VALUE");
  app.add_option("--iters", settings.iterations, "timed iterations per size")->check(CLI::PositiveNumber);
  app.add_option("--warmup", settings.warmup, "untimed iterations per size")->check(CLI::NonNegativeNumber);
  app.add_flag("--no-in-place", no_in_place, "time out-of-place only");
  app.add_option("--gpus", gpus, "single process: use the first N GPUs (default: all)");
  app.add_option("--rendezvous", rendezvous, "HOST:PORT of rank 0 for a TCP rendezvous");
  app.add_option("--rank", rank, "this process's rank (with --rendezvous)");
  app.add_option("--world", world, "number of ranks (with --rendezvous)");
  app.add_option("--device", device, "CUDA device for this rank (default: the launcher's local rank)");
  app.add_option("--timeout", timeout_s, "seconds to wait for the rendezvous");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  settings.in_place = !no_in_place;

  std::vector<config::Override> overrides;
  for (const std::string& s : sets) overrides.push_back(config::parse_override(s));
  config::Scenario scenario = config::load_scenario(scenario_path, overrides);
  if (scenario.workload.kind != workloads::WorkloadKind::collective_sweep)
    throw InputError(SourceLocation{scenario_path, 0, 0}, "workload.kind",
                     "nccl-replay runs collective-sweep workloads only");
  const workloads::CollectiveSweepSpec& sweep = scenario.workload.sweep;
  if (sweep.dtype != topology::Dtype::fp32)
    throw InputError(SourceLocation{scenario_path, 0, 0}, "workload.dtype",
                     "nccl-replay measures float32 (results are checked exactly); set dtype: float32");

  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0)
    throw std::runtime_error("no CUDA device found");

  replay::LocalRanks local;
  ncclUniqueId id{};
  bool mpi = false;
  if (rendezvous) {
    if (!rank || !world) throw InputError(SourceLocation{}, "--rendezvous", "needs --rank and --world");
    if (*world < 1 || *rank < 0 || *rank >= *world)
      throw InputError(SourceLocation{}, "--rank", fmt::format("expected 0 <= rank < world, got {} of {}", *rank, *world));
    validation::RendezvousEndpoint ep = validation::parse_endpoint(*rendezvous);
    std::vector<uint8_t> bytes(sizeof id);
    if (*rank == 0) {
      if (ncclGetUniqueId(&id) != ncclSuccess) throw std::runtime_error("ncclGetUniqueId failed");
      std::memcpy(bytes.data(), &id, sizeof id);
    }
    bytes = validation::rendezvous(ep, *rank, *world, std::span<const uint8_t>(bytes.data(), bytes.size()),
                                   std::chrono::seconds(timeout_s));
    if (bytes.size() != sizeof id) throw std::runtime_error("rendezvous returned a malformed id");
    std::memcpy(&id, bytes.data(), sizeof id);
    local.world = *world;
    local.first_rank = *rank;
    local.devices = {device.value_or(launcher_local_rank().value_or(*rank) % device_count)};
  } else if (env_int("OMPI_COMM_WORLD_SIZE") || env_int("PMI_SIZE")) {
#if DTSIM_WITH_MPI
    MPI_Init(&argc, &argv);
    mpi = true;
    int r = 0, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (r == 0 && ncclGetUniqueId(&id) != ncclSuccess) throw std::runtime_error("ncclGetUniqueId failed");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    local.world = n;
    local.first_rank = r;
    local.devices = {device.value_or(launcher_local_rank().value_or(r) % device_count)};
#else
    throw InputError(SourceLocation{}, "mpirun",
                     "this nccl-replay was built without MPI; use --rendezvous HOST:PORT --rank R --world N");
#endif
  } else {
    int n = gpus.value_or(device_count);
    if (n < 1 || n > device_count)
      throw InputError(SourceLocation{}, "--gpus", fmt::format("expected 1..{}, got {}", device_count, n));
    local.world = n;
    for (int d = 0; d < n; ++d) local.devices.push_back(d);
  }

  validation::ReplayPlan plan = validation::make_replay_plan(sweep.collective, sweep.min_bytes,
                                                             sweep.max_bytes, sweep.step_factor, local.world);
  std::vector<ncclComm_t> comms = replay::init_comms(local, id);
  int64_t wrong = 0;
  std::vector<validation::MeasuredPoint> points = replay::run_plan(plan, local, comms, settings, wrong);
  replay::destroy_comms(comms);

  int exit_code = 0;
  if (local.first_rank == 0) {
    validation::MeasurementSet set;
    set.collective = plan.collective;
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, local.devices[0]);
    int version = 0;
    ncclGetVersion(&version);
    set.header = {fmt::format("Hardware: {} ranks, rank 0 on {} (measured by dtsim nccl-replay)", local.world, prop.name),
                  fmt::format("Ranks: {}", local.world),
                  fmt::format("Scenario: {}; float32; warmup {}, iters {}", scenario_path, settings.warmup, settings.iterations),
                  fmt::format("NCCL version code {}", version)};
    for (const validation::MeasuredPoint& p : points) {
      if (p.wrong && *p.wrong > 0) {
        std::cerr << fmt::format("nccl-replay: size {} ({}): {} wrong elements; not reported\n", p.size_bytes,
                                 validation::name(p.placement), *p.wrong);
        exit_code = kExitWrongResults;
        continue;
      }
      set.points.push_back(p);
    }
    if (output) {
      std::ofstream out(*output);
      if (!out) throw InputError(SourceLocation{*output, 0, 0}, "-o", "cannot write the file");
      validation::write_measurement_csv(out, set);
    } else {
      validation::write_measurement_csv(std::cout, set);
    }
  } else if (wrong > 0) {
    exit_code = kExitWrongResults;
  }
#if DTSIM_WITH_MPI
  if (mpi) MPI_Finalize();
#else
  (void)mpi;
#endif
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const dtsim::InputError& e) {
    std::cerr << "nccl-replay: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "nccl-replay: " << e.what() << '\n';
    return 1;
  }
}
