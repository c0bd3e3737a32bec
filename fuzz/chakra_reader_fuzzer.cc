// libFuzzer target for the Chakra trace reader. The input is one rank's trace file. It must either
// be refused with a std::runtime_error (one line naming the file and node), or name GPUs an HGX H100
// node does not have (Workload::misfit, refused by the scenario runner), or be read into a workload
// that the executor runs on that node with the production collective model; a run may only fail
// with std::overflow_error (times past 106 days). What ran must give a per-op table whose
// critical-path times fit in the iteration and that writes as CSV and JSON. Anything else, a
// crash, a hang or a sanitizer report is a finding.
//   scripts/fuzz.sh 300 chakra   # build with the `fuzz` preset and run for 5 minutes
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "collectives/analytical_model.h"
#include "fuzz/finding.h"
#include "report/training_writer.h"
#include "topology/catalog.h"
#include "workloads/chakra_trace.h"
#include "workloads/training.h"

using dtsim::fuzz::finding;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string prefix = "/tmp/dtsim_chakra_fuzz_" + std::to_string(::getpid());
  {
    std::ofstream out(prefix + ".0.et", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  dtsim::workloads::Workload w;
  try {
    w = dtsim::workloads::read_chakra(prefix);
  } catch (const std::runtime_error&) {
    return 0;  // refused with a message
  } catch (const std::exception& e) {
    finding("read_chakra threw something other than std::runtime_error", e.what());
  }
  static const dtsim::topology::ClusterSpec cluster = *dtsim::topology::find_node_preset("hgx-h100");
  static const dtsim::collectives::ModelParameters params;
  static const dtsim::collectives::AnalyticalCollectiveModel comm(cluster, dtsim::collectives::CollectiveOptions{},
                                                                  params);
  if (!w.misfit(cluster.total_gpus()).empty()) return 0;  // refused by the scenario runner
  dtsim::workloads::TrainingTrace trace;
  dtsim::workloads::TrainingResult result;
  try {
    result = dtsim::workloads::evaluate_workload_traced(std::move(w), cluster, comm, dtsim::topology::Dtype::bf16,
                                                        dtsim::workloads::ComputeModel(cluster.gpu), trace);
  } catch (const std::overflow_error&) {
    return 0;
  } catch (const std::exception& e) {
    finding("a trace that was read does not run", e.what());
  }
  // The per-op table of what ran: its critical-path times cannot add up to more than the
  // iteration, and both formats must write whatever names the trace's nodes carry.
  const auto ops = dtsim::workloads::op_totals(trace);
  double critical = 0;
  for (const auto& o : ops) {
    if (o.count <= 0 || o.busy_s < 0 || o.critical_s < 0) finding("an op row with no ops or negative time", o.label);
    critical += o.critical_s;
  }
  if (critical > result.iteration_time_s * (1 + 1e-9) + 1e-12) {
    finding("the critical path's ops add up to more than the iteration", std::to_string(critical));
  }
  try {
    std::ostringstream out;
    dtsim::report::write_op_table(result, ops, "csv", out);
    dtsim::report::write_op_table(result, ops, "json", out);
  } catch (const std::exception& e) {
    finding("the per-op table of a trace that ran cannot be written", e.what());
  }
  return 0;
}
