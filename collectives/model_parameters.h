// ModelParameters: the named physical constants of the collective cost model (link and protocol
// efficiencies, per-step latencies, NIC-stack overheads, pipeline slice sizes), each with a unit,
// a physically meaningful default and bounds. `calibrate` fits them by least squares through the
// flat view; scenarios load fitted values from a calibration.yaml (`calibration: FILE`).
//   collectives::ModelParameters p = collectives::load_calibration("calibration.yaml");
//   for (const auto& d : collectives::ModelParameters::descriptors()) p.set(d.name, d.lower);
#pragma once

#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/collective.h"
#include "topology/cluster_spec.h"

namespace dtsim::collectives {

// Units a parameter is stated in. The YAML file writes each value with its unit ("3.4us",
// "256KiB", "0.8"), and reading checks the unit, so a latency can never be read as a size.
enum class ParamUnit { fraction, microseconds, bytes, gbytes_per_s, count };

struct ModelParameters {
  // --- Link efficiencies: the fraction of a link's line rate that NCCL's copy kernels reach.
  double nvlink_efficiency = 0.80;  // ring over NVLink/NVSwitch (NVIDIA: ~370 of 450 GB/s)
  double pcie_efficiency = 0.80;    // GPU-GPU peer copies over PCIe
  double p2p_efficiency = 0.82;     // send/recv copies relative to the ring's rate
  // all_to_all inside a node relative to the ring's rate: every rank copies to all its peers at
  // once over more channels than one send/recv pair gets, and reaches about the ring's rate.
  // 4 x H100 (NCCL 2.23.4): 336 GB/s busbw against the ring's 360, this value; 8 x A100: 255,
  // where its all_gather reaches 254 (validation/extra).
  double all_to_all_efficiency = 0.93;
  // NVLS all_reduce algbw / (per-GPU NVLink bandwidth x n / (n + 1)): Hopper's keeps the 8-GPU
  // H100 figure the n-independent 0.61 was fitted on (and follows 2-6 GPUs, validation/extra);
  // Blackwell's is HGX B200's 8-GPU reference point (830 GB/s busbw).
  double nvls_efficiency_sm90 = 0.686;
  double nvls_efficiency_sm100 = 0.592;     // (NCCL's own table: 0.74 vs 0.85 for Hopper)
  // A rack-scale NVLink domain (more than 8 GPUs on switch trays across a backplane: GB200
  // NVL72) reaches this share of a node's NVLS rate: CoreWeave's 72-GPU rack, 426 GB/s algbw
  // against HGX B200's 474 at 8 GPUs.
  double nvls_rack_efficiency = 0.81;
  // NVLS-tree across nodes runs NVLS and the network tree on the same channels' SMs and reaches
  // this share of the slower of the two (H100, 2-8 nodes of 8 x 400G IB/RoCE: 465-469 GB/s
  // busbw at 2 nodes, 320-325 at 4-8, against 512 and 365 at full rate).
  double nvls_tree_efficiency = 0.89;
  double net_efficiency_infiniband = 0.94;  // GPUDirect RDMA over IB verbs
  double net_efficiency_roce = 0.87;
  double net_efficiency_efa = 0.84;
  double net_efficiency_tcp = 0.95;  // GPUDirect TCP (TCPX/TCPXO) offload
  // Host-staged paths: NCCL_P2P_DISABLE (SHM through host memory) and plain socket transport.
  double host_inflight_bytes = 7850;  // bytes a channel keeps in flight on host-memory reads
  double socket_bandwidth = 8.1;      // GB/s per GPU through the kernel TCP stack (host-staged)

  // --- Protocols: LL carries 8 data bytes per 16, LL128 120 per 128; both also lose to flags.
  double ll_bandwidth_fraction = 0.5;
  double ll128_bandwidth_fraction = 0.92;
  // GB/s one LL channel moves inside a node (flag polling bound), before Hopper and from Hopper
  // on. The bound is the SM's and its NVLink generation's, and NCCL's own model carries its LL
  // cap inside one node per compute capability (llMaxBws: 39, 87.7 and 141 GB/s of busbw for
  // Volta, Ampere and Hopper), so a rate the Volta and Ampere sets fit says nothing of Hopper's.
  double ll_channel_bandwidth = 10.9;
  double ll_channel_bandwidth_sm90 = 10.9;
  // ... on a path that crosses the network: its lines then go through the NIC proxy's buffers,
  // and NCCL's own model caps LL across nodes far lower than inside one (llMaxBws: 39 GB/s of
  // busbw on 2 x86 nodes, 20.4 on more, against 141 in one Hopper node). Fitted on the 47
  // published sets of validation/datasets.txt and validation/extra (docs/validation-errors.md).
  double ll_net_channel_bandwidth = 2.1;

  // --- Latencies (us): kernel launch and setup per algorithm/protocol, then per step per link.
  double base_latency_ll = 6.6;
  double base_latency_ll128 = 14.0;
  double base_latency_simple = 8.4;
  double step_latency_nvlink_ll = 0.6;
  double step_latency_nvlink_ll128 = 1.9;
  double step_latency_nvlink_simple = 3.4;
  double step_latency_pcie_ll = 1.0;
  double step_latency_pcie_ll128 = 2.5;
  double step_latency_pcie_simple = 5.7;
  double step_latency_net_ll = 0.25;
  double step_latency_net_ll128 = 4.0;
  double step_latency_net_simple = 7.0;
  // Added to every inter-node step by the NIC kind's software stack (verbs, libfabric SRD, TCP).
  double nic_latency_infiniband = 1.75;  // 2 x H100 on NDR: 25 us small all_reduce floor (validation/extra)
  double nic_latency_roce = 9.0;
  double nic_latency_efa = 69.0;     // EFA v1 (p4de, 2 nodes: 164 us small all_reduce floor)
  double nic_latency_efa_v2 = 25.0;  // EFA v2+ (p5, 2 nodes: 70 us floor; validation/extra)
  double nic_latency_tcp = 0.9;
  // GPUDirect-TCPX runs TCP in both hosts' kernels: the payload lands in GPU memory (devmem TCP)
  // and is unpacked there by NCCL's kernel. One step across nodes costs nic_latency_tcpx, and a
  // zero-copy send completes (its FIFO slot is free again) only when the peer's ACK has come back
  // through the hosts' stacks, tcpx_send_completion after the step, so back-to-back collectives
  // send at most 8 messages a connection per completion. Both show on 2 x a3-highgpu-8g
  // (validation/extra): a flat ~1 ms all_gather floor up to 32 MiB (its 15 sends a connection at
  // 8 per completion) and a 72 GB/s busbw plateau (8 channels x 8 slots of 512 KiB per
  // completion). Fitted jointly on those runs (docs/validation-errors.md, By class).
  double nic_latency_tcpx = 584.0;
  double tcpx_send_completion = 473.0;
  double nvls_latency = 27.0;     // NVLS multicast setup and switch reduction round
  double collnet_latency = 10.0;  // SHARP aggregation-tree round trip
  double pat_rank_latency = 2.8;  // PAT per-rank bookkeeping
  double p2p_latency = 9.0;       // send/recv kernel launch and connection handshake
  // One host thread launching a collective on several GPUs (nccl-tests -g N) issues their kernels
  // one after another, each after a device switch; back-to-back iterations overlap that with the
  // GPUs' work, so an iteration takes at least N of these. Small-size floors with -g N: 8 x V100
  // 48 us, 12 x V100 61, 8 x A100 34-36 (validation/extra): 6.0, 5.1 and 4.4 us a GPU. Hosts of
  // Hopper and newer launch faster (newer CPUs and CUDA): 4 x GB200 on Grace 15.4-17.8 us, 8 x
  // H200 30-31 (NVLS, whose own round is 27), 8 x H100 at most 25.6.
  double host_launch_per_gpu = 5.0;
  double host_launch_per_gpu_sm90 = 3.8;

  // --- Pipelining: each hop holds one slice before forwarding it (store and forward), so a
  // pipeline of D hops costs D slice-times more than its bandwidth term.
  double slice_bytes_simple = 104000;
  double slice_bytes_ll128 = 208000;
  double slice_bytes_ll = 3700;
  double nvls_pipeline_bytes = 2.9e6;  // bytes of one rank's shard in the NVLS pipeline; the
                                       // ranks' first chunks serialize at the switch
  // A send/recv inside a node costs this many bytes at its copy rate more than its bandwidth
  // term: the intercept of 8 x A100 sendrecv_perf over NVLink (about 45 us at 197 GB/s), fitted,
  // not derived. Across nodes it is not charged: there NCCL moves p2p data in chunks of
  // p2p_net_chunk_bytes through an 8-slot FIFO whose receiver copies out each slot as it lands,
  // so the fill is one chunk, not a FIFO.
  double p2p_pipeline_bytes = 8.9e6;
  double p2p_net_chunk_bytes = 131072;  // NCCL_P2P_NET_CHUNKSIZE: one p2p FIFO slot across nodes
  // The fill is measured on rings of 8-16 ranks; longer pipelines are not charged more than this
  // many hops, rather than extrapolating a store-and-forward cost nobody has measured.
  double pipeline_max_hops = 16;
  double channel_bandwidth = 24.0;       // GB/s one channel (one thread block) can move
  double tree_channel_bandwidth = 12.0;  // GB/s algbw one tree channel reaches (reduce + forward)
  // ... on a tree that spans nodes, whose channels also carry the hops between nodes: NCCL's
  // own model carries its per-channel tree rate per node count (perChMaxTreeBws, one node
  // against two and four: 24.0, 23.6 and 17.8 GB/s on Ampere, 26.5, 18.5 and 10.0 on Volta), so
  // the chain inside one node is a rate of its own.
  double tree_net_channel_bandwidth = 12.0;

  struct Descriptor {
    std::string_view name;
    ParamUnit unit;
    double ModelParameters::*field;
    double lower;
    double upper;
    std::string_view meaning;
  };
  // Every parameter, in a fixed order: the flat vector a fitter works on.
  static std::span<const Descriptor> descriptors();

  // The flat view: values in descriptors() order, get/set by name (unknown names throw
  // InputError naming the valid ones).
  std::vector<double> to_vector() const;
  void from_vector(std::span<const double> values);
  double get(std::string_view name) const;
  void set(std::string_view name, double value);

  // Figures the model reads by kind.
  double net_efficiency(topology::NicKind k) const;
  // EFA's stack latency by generation, which follows the instance's GPU: EFA v1 with A100
  // (p4d/p4de), v2 and later with Hopper and newer (p5 onwards).
  double nic_latency_us(topology::NicKind k, int compute_capability = 0) const;
  // How long after a send across nodes its FIFO slot stays held beyond the step itself: 0 where
  // the NIC completes the send in hardware (RDMA, TCPXO), tcpx_send_completion for TCPX, whose
  // zero-copy sends complete on the peer's ACK.
  double send_completion_us(topology::NicKind k) const;
  // One host launch when a thread drives several GPUs, by the GPUs' generation (its hosts').
  double host_launch_per_gpu_us(int compute_capability) const {
    return compute_capability >= 90 ? host_launch_per_gpu_sm90 : host_launch_per_gpu;
  }
  double nvls_efficiency(int compute_capability) const;
  double base_latency_us(Protocol p) const;
  double slice_bytes(Protocol p) const;
  double bandwidth_fraction(Protocol p) const;
};

enum class LinkClass { nvlink, pcie, net };
double step_latency_us(const ModelParameters& p, LinkClass link, Protocol proto);

std::string_view unit_name(ParamUnit u);

// calibration.yaml: a map `parameters: {name: "value unit", ...}`; keys not given keep their
// defaults; an unknown key, a missing or wrong unit, or a value outside its bounds throws
// InputError naming the file, line and key.
ModelParameters load_calibration(const std::string& path);
ModelParameters parse_calibration(std::string_view yaml, const std::string& source_name);
void write_calibration(const ModelParameters& p, std::ostream& out);

}  // namespace dtsim::collectives
