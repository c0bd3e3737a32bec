#include "topology/catalog.h"

#include <array>

namespace dtsim::topology {
namespace {

constexpr double T = 1e12;  // TFLOP/s

GpuSpec gpu(std::string name, int cc, std::map<Dtype, double> flops, Bytes hbm, Bandwidth hbm_bw,
            int nvlink_gen, int nvlink_links, Bandwidth nvlink_bw, int pcie_gen) {
  return GpuSpec{std::move(name), cc, std::move(flops), hbm, hbm_bw, nvlink_gen, nvlink_links,
                 nvlink_bw, pcie_gen};
}

// HBM as the driver reports it (nvidia-smi's MiB) where known: the "40/80 GB" of A100 and H100
// are binary gigabytes (40,960 / 81,920 MiB on A100, 81,559 MiB on H100; 143,771 MiB on H200;
// 183,359 MiB on B200). GB200's 186 GB is read the same way (186 GiB).
Bytes mib(int64_t n) { return Bytes(n * 1024 * 1024); }

// Peak figures are dense (no 2:4 sparsity). NVLink bandwidth is per GPU per direction (half of
// the "bidirectional" figure datasheets quote).
const std::vector<GpuSpec>& gpus() {
  static const std::vector<GpuSpec> kGpus = {
      // NVIDIA A100 Tensor Core GPU datasheet (2021): FP32 19.5, TF32 156, BF16/FP16 312 TFLOP/s;
      // 40 GB HBM2 at 1,555 GB/s; NVLink3 12 links, 600 GB/s bidirectional; PCIe Gen4.
      gpu("a100-sxm-40g", 80, {{Dtype::fp32, 19.5 * T}, {Dtype::tf32, 156 * T}, {Dtype::bf16, 312 * T}, {Dtype::fp16, 312 * T}},
          mib(40'960), Bandwidth::gbytes_per_s(1555), 3, 12, Bandwidth::gbytes_per_s(300), 4),
      // Same datasheet, 80 GB HBM2e at 2,039 GB/s.
      gpu("a100-sxm-80g", 80, {{Dtype::fp32, 19.5 * T}, {Dtype::tf32, 156 * T}, {Dtype::bf16, 312 * T}, {Dtype::fp16, 312 * T}},
          mib(81'920), Bandwidth::gbytes_per_s(2039), 3, 12, Bandwidth::gbytes_per_s(300), 4),
      // A100 PCIe 40 GB (NVIDIA A100 datasheet, PCIe column): compute as the SXM module, 40 GB HBM2
      // at 1,555 GB/s; NVLink bridge pairs at 600 GB/s bidirectional (3 bridges); PCIe Gen4.
      gpu("a100-pcie-40g", 80, {{Dtype::fp32, 19.5 * T}, {Dtype::tf32, 156 * T}, {Dtype::bf16, 312 * T}, {Dtype::fp16, 312 * T}},
          mib(40'960), Bandwidth::gbytes_per_s(1555), 3, 12, Bandwidth::gbytes_per_s(300), 4),
      // A100 80GB PCIe (NVIDIA A100 datasheet, 80GB PCIe column): 80 GB HBM2e at 1,935 GB/s;
      // otherwise as the 40 GB card (NVLink bridge pairs 600 GB/s bidirectional, 3 bridges).
      gpu("a100-pcie-80g", 80, {{Dtype::fp32, 19.5 * T}, {Dtype::tf32, 156 * T}, {Dtype::bf16, 312 * T}, {Dtype::fp16, 312 * T}},
          mib(81'920), Bandwidth::gbytes_per_s(1935), 3, 12, Bandwidth::gbytes_per_s(300), 4),
      // A800 SXM4 80 GB, the export variant of A100 80 GB: compute and memory as A100 80 GB;
      // NVLink3 cut to 8 links, 400 GB/s bidirectional (NVIDIA A800 datasheet).
      gpu("a800-sxm-80g", 80, {{Dtype::fp32, 19.5 * T}, {Dtype::tf32, 156 * T}, {Dtype::bf16, 312 * T}, {Dtype::fp16, 312 * T}},
          mib(81'920), Bandwidth::gbytes_per_s(2039), 3, 8, Bandwidth::gbytes_per_s(200), 4),
      // NVIDIA V100 Tensor Core GPU datasheet (SXM2): FP32 15.7, FP16 tensor 125 TFLOP/s (no BF16
      // or TF32); 16 or 32 GB HBM2 at 900 GB/s; NVLink2 6 links, 300 GB/s bidirectional; PCIe
      // Gen3. DGX-2's SXM3 module has the same figures (DGX-2: 2 PFLOP/s for 16 GPUs).
      gpu("v100-sxm-16g", 70, {{Dtype::fp32, 15.7 * T}, {Dtype::fp16, 125 * T}},
          mib(16'384), Bandwidth::gbytes_per_s(900), 2, 6, Bandwidth::gbytes_per_s(150), 3),
      gpu("v100-sxm-32g", 70, {{Dtype::fp32, 15.7 * T}, {Dtype::fp16, 125 * T}},
          mib(32'768), Bandwidth::gbytes_per_s(900), 2, 6, Bandwidth::gbytes_per_s(150), 3),
      // NVIDIA H100 datasheet (SXM5): FP32 67, TF32 494.7, BF16/FP16 989.4, FP8 1,978.9 TFLOP/s
      // dense; 80 GB HBM3 at 3.35 TB/s; NVLink4 18 links, 900 GB/s bidirectional; PCIe Gen5.
      gpu("h100-sxm", 90, {{Dtype::fp32, 67 * T}, {Dtype::tf32, 494.7 * T}, {Dtype::bf16, 989.4 * T}, {Dtype::fp16, 989.4 * T}, {Dtype::fp8, 1978.9 * T}},
          mib(81'559), Bandwidth::gbytes_per_s(3350), 4, 18, Bandwidth::gbytes_per_s(450), 5),
      // H100 SXM5 with 96 GB of HBM2e at 2.4 TB/s, run at a 500 W power limit: Meta's Grand Teton
      // hosts, which torchtitan's published runs used (pytorch/torchtitan
      // benchmarks/llama3_h100_202412_torchtitan.md: "96GB HBM2e with 2.4 TB/sec", "the default
      // 500W power limit"; its footnote puts the peak between the SXM's and the NVL's). The
      // datasheets quote tensor peaks at the clock each part sustains within its power limit,
      // on the same 132 SMs: SXM5 989.4 TFLOP/s BF16 dense at 700 W (1.83 GHz), H100 NVL 835.5
      // (1,671 sparse) at 400 W (1.55 GHz). Through those two points the peak goes as
      // power^0.302 (clock^3 ~ power near the top of the voltage curve gives 1/3); at 500 W that
      // is 0.903 of the SXM's, every dtype alike. NVLink4 as the SXM5 (18 links, 900 GB/s).
      gpu("h100-sxm-96g-500w", 90, {{Dtype::fp32, 60.5 * T}, {Dtype::tf32, 446.9 * T}, {Dtype::bf16, 893.8 * T}, {Dtype::fp16, 893.8 * T}, {Dtype::fp8, 1787.6 * T}},
          mib(96 * 1024), Bandwidth::gbytes_per_s(2400), 4, 18, Bandwidth::gbytes_per_s(450), 5),
      // Same datasheet (PCIe): FP32 51, TF32 378, BF16 756.5, FP8 1,513 TFLOP/s dense; 80 GB
      // HBM2e at 2.0 TB/s; PCIe Gen5. NVLink: a pair joined by three bridges, 12 links that the
      // datasheet rates at 600 GB/s bidirectional; the pair sustains half of it, 150 GB/s per
      // direction, what 6 of an SXM5 module's links carry. NCCL finds all 12 links (24 channels)
      // yet its all_reduce reaches 116 GB/s busbw (NVIDIA/nccl#1161): 19.4 GB/s for each 25 GB/s
      // of that figure, as two NVSwitch-attached H100s reach 347 on 18 links (19.3 per link,
      // validation/extra/h100_2gpu_forced_ring_allreduce.txt). docs/validation-errors.md, "By class".
      gpu("h100-pcie", 90, {{Dtype::fp32, 51 * T}, {Dtype::tf32, 378 * T}, {Dtype::bf16, 756.5 * T}, {Dtype::fp16, 756.5 * T}, {Dtype::fp8, 1513 * T}},
          mib(81'559), Bandwidth::gbytes_per_s(2000), 4, 12, Bandwidth::gbytes_per_s(150), 5),
      // H800 SXM5, the export variant of H100 SXM: compute and memory as H100 SXM; NVLink4 cut to
      // 8 links, 400 GB/s bidirectional (NVIDIA H800 datasheet).
      gpu("h800-sxm", 90, {{Dtype::fp32, 67 * T}, {Dtype::tf32, 494.7 * T}, {Dtype::bf16, 989.4 * T}, {Dtype::fp16, 989.4 * T}, {Dtype::fp8, 1978.9 * T}},
          mib(81'559), Bandwidth::gbytes_per_s(3350), 4, 8, Bandwidth::gbytes_per_s(200), 5),
      // NVIDIA H200 datasheet (SXM): compute as H100 SXM; 141 GB HBM3e at 4.8 TB/s; NVLink4
      // 900 GB/s bidirectional.
      gpu("h200-sxm", 90, {{Dtype::fp32, 67 * T}, {Dtype::tf32, 494.7 * T}, {Dtype::bf16, 989.4 * T}, {Dtype::fp16, 989.4 * T}, {Dtype::fp8, 1978.9 * T}},
          mib(143'771), Bandwidth::gbytes_per_s(4800), 4, 18, Bandwidth::gbytes_per_s(450), 5),
      // NVIDIA DGX B200 / HGX B200 datasheet (per GPU, dense = half the sparse figures): TF32
      // 1.1, BF16/FP16 2.25, FP8 4.5, FP4 9 PFLOP/s; FP32 75 TFLOP/s; 180 GB HBM3e (1,440 GB per
      // 8 GPUs) at 8 TB/s; NVLink5 18 links, 1.8 TB/s bidirectional; PCIe Gen6.
      gpu("b200", 100, {{Dtype::fp32, 75 * T}, {Dtype::tf32, 1100 * T}, {Dtype::bf16, 2250 * T}, {Dtype::fp16, 2250 * T}, {Dtype::fp8, 4500 * T}, {Dtype::fp4, 9000 * T}},
          mib(183'359), Bandwidth::gbytes_per_s(8000), 5, 18, Bandwidth::gbytes_per_s(900), 6),
      // NVIDIA GB200 NVL72 datasheet divided by 72 GPUs (dense): TF32 1.25, BF16 2.5, FP8 5,
      // FP4 10 PFLOP/s; FP32 80 TFLOP/s; 186 GB HBM3e (13.4 TB per rack) at 8 TB/s; NVLink5
      // 1.8 TB/s bidirectional.
      gpu("gb200", 100, {{Dtype::fp32, 80 * T}, {Dtype::tf32, 1250 * T}, {Dtype::bf16, 2500 * T}, {Dtype::fp16, 2500 * T}, {Dtype::fp8, 5000 * T}, {Dtype::fp4, 10000 * T}},
          mib(186 * 1024), Bandwidth::gbytes_per_s(8000), 5, 18, Bandwidth::gbytes_per_s(900), 6),
      // Blackwell Ultra, HGX B300 / DGX B300 datasheets per GPU (dense): TF32 1.1, BF16/FP16
      // 2.25, FP8 4.5 PFLOP/s as B200; FP4 13.5 PFLOP/s; 288 GB HBM3e (2.3 TB per 8 GPUs) at
      // 8 TB/s; NVLink5 18 links, 1.8 TB/s bidirectional; PCIe Gen6. Compute capability 10.3.
      gpu("b300", 103, {{Dtype::fp32, 75 * T}, {Dtype::tf32, 1100 * T}, {Dtype::bf16, 2250 * T}, {Dtype::fp16, 2250 * T}, {Dtype::fp8, 4500 * T}, {Dtype::fp4, 13500 * T}},
          Bytes(288'000'000'000), Bandwidth::gbytes_per_s(8000), 5, 18, Bandwidth::gbytes_per_s(900), 6),
      // GB300 NVL72 datasheet divided by 72 GPUs (dense): 360 PFLOP/s FP8 -> 5 PFLOP/s, BF16
      // 2.5, TF32 1.25; 1.1 EFLOP/s FP4 -> 15 PFLOP/s; 20 TB HBM3e -> 279 GB at 8 TB/s; NVLink5
      // 1.8 TB/s bidirectional.
      gpu("gb300", 103, {{Dtype::fp32, 80 * T}, {Dtype::tf32, 1250 * T}, {Dtype::bf16, 2500 * T}, {Dtype::fp16, 2500 * T}, {Dtype::fp8, 5000 * T}, {Dtype::fp4, 15000 * T}},
          Bytes(279'000'000'000), Bandwidth::gbytes_per_s(8000), 5, 18, Bandwidth::gbytes_per_s(900), 6),
      // NVIDIA L40S datasheet: FP32 91.6, TF32 183, BF16/FP16 362.05, FP8 733 TFLOP/s dense;
      // 48 GB GDDR6 at 864 GB/s; no NVLink; PCIe Gen4 x16.
      gpu("l40s", 89, {{Dtype::fp32, 91.6 * T}, {Dtype::tf32, 183 * T}, {Dtype::bf16, 362.05 * T}, {Dtype::fp16, 362.05 * T}, {Dtype::fp8, 733 * T}},
          Bytes(48'000'000'000), Bandwidth::gbytes_per_s(864), 0, 0, Bandwidth(), 4),
      // NVIDIA A40 datasheet: FP32 37.4, TF32 74.8, BF16/FP16 149.7 TFLOP/s dense; 48 GB GDDR6
      // at 696 GB/s; NVLink3 bridge pairs 112.5 GB/s bidirectional (4 links); PCIe Gen4.
      gpu("a40", 86, {{Dtype::fp32, 37.4 * T}, {Dtype::tf32, 74.8 * T}, {Dtype::bf16, 149.7 * T}, {Dtype::fp16, 149.7 * T}},
          Bytes(48'000'000'000), Bandwidth::gbytes_per_s(696), 3, 4, Bandwidth::gbytes_per_s(56.25), 4),
  };
  return kGpus;
}

ClusterSpec node(std::string name, std::string_view gpu_name, int gpus_per_node, ScaleUpSpec up,
                 NicSpec nic) {
  ClusterSpec c;
  c.node_preset = std::move(name);
  c.gpu = *find_gpu_preset(gpu_name);
  c.gpus_per_node = gpus_per_node;
  c.scale_up = up;
  c.nic = nic;
  c.fabric.link.bandwidth = nic.bandwidth;
  return c;
}

// A pair joined by NVLink bridges: the GPU's bridged NVLink figure, one hop of NVLink latency
// as through a switch (NCCL prices both as one NVLink step).
ScaleUpSpec bridged(std::string_view gpu_name) {
  return {ScaleUpKind::nvlink_bridge, find_gpu_preset(gpu_name)->nvlink_bandwidth, Time::ns(700), 2};
}

const std::vector<ClusterSpec>& nodes() {
  static const std::vector<ClusterSpec> kNodes = {
      // DGX A100 / HGX A100 8-GPU: 6 NVSwitch2, 300 GB/s per GPU per direction; 8 ConnectX-6
      // HDR 200 Gb/s InfiniBand compute NICs (DGX A100 user guide).
      node("hgx-a100", "a100-sxm-80g", 8,
           {ScaleUpKind::nvswitch, Bandwidth::gbytes_per_s(300), Time::ns(700), 8},
           {NicKind::infiniband, 8, Bandwidth::gbps(200), Time::us(2), Time::ns(500)}),
      // DGX H100 / HGX H100: 4 NVSwitch3, 450 GB/s per GPU per direction; 8 ConnectX-7 NDR
      // 400 Gb/s (DGX H100 user guide).
      node("hgx-h100", "h100-sxm", 8,
           {ScaleUpKind::nvswitch, Bandwidth::gbytes_per_s(450), Time::ns(700), 8},
           {NicKind::infiniband, 8, Bandwidth::gbps(400), Time::us(2), Time::ns(500)}),
      // HGX A800: the HGX A100 baseboard with A800s, whose NVLink is cut to 200 GB/s per GPU per
      // direction; 8 x 200 Gb/s HDR InfiniBand as on HGX A100.
      node("hgx-a800", "a800-sxm-80g", 8,
           {ScaleUpKind::nvswitch, Bandwidth::gbytes_per_s(200), Time::ns(700), 8},
           {NicKind::infiniband, 8, Bandwidth::gbps(200), Time::us(2), Time::ns(500)}),
      // HGX H800: the HGX H100 baseboard with H800s (NVLink 200 GB/s per GPU per direction) and 8
      // ConnectX-7 400 Gb/s InfiniBand, as DeepSeek describes its training nodes ("Insights into
      // DeepSeek-V3", ISCA 2025).
      node("hgx-h800", "h800-sxm", 8,
           {ScaleUpKind::nvswitch, Bandwidth::gbytes_per_s(200), Time::ns(700), 8},
           {NicKind::infiniband, 8, Bandwidth::gbps(400), Time::us(2), Time::ns(500)}),
      // HGX H200: same baseboard fabric as HGX H100, 8 x 400 Gb/s ConnectX-7.
      node("hgx-h200", "h200-sxm", 8,
           {ScaleUpKind::nvswitch, Bandwidth::gbytes_per_s(450), Time::ns(700), 8},
           {NicKind::infiniband, 8, Bandwidth::gbps(400), Time::us(2), Time::ns(500)}),
      // DGX B200: 2 NVSwitch5 chips, 900 GB/s per GPU per direction; 8 ConnectX-7 400 Gb/s
      // (DGX B200 datasheet: "8x single-port ConnectX-7 VPI, up to 400Gb/s").
      node("hgx-b200", "b200", 8,
           {ScaleUpKind::nvswitch, Bandwidth::gbytes_per_s(900), Time::ns(700), 8},
           {NicKind::infiniband, 8, Bandwidth::gbps(400), Time::us(2), Time::ns(500)}),
      // GB200 NVL72: 72 GPUs in one NVLink5 domain (18 NVSwitch trays), 900 GB/s per GPU per
      // direction; one ConnectX-7 400 Gb/s NIC per GPU. dtsim treats the NVLink domain as one
      // node of 72 GPUs, as NCCL's MNNVL support does.
      node("gb200-nvl72", "gb200", 72,
           {ScaleUpKind::nvswitch, Bandwidth::gbytes_per_s(900), Time::ns(900), 72},
           {NicKind::infiniband, 72, Bandwidth::gbps(400), Time::us(2), Time::ns(500)}),
      // DGX B300 / HGX B300: NVLink5 switches, 900 GB/s per GPU per direction; 8 ConnectX-8
      // SuperNICs at 800 Gb/s (DGX B300 datasheet: 1.6 TB/s of networking per 8 GPUs).
      node("hgx-b300", "b300", 8,
           {ScaleUpKind::nvswitch, Bandwidth::gbytes_per_s(900), Time::ns(700), 8},
           {NicKind::infiniband, 8, Bandwidth::gbps(800), Time::us(2), Time::ns(500)}),
      // GB300 NVL72: as GB200 NVL72 with one ConnectX-8 800 Gb/s per GPU.
      node("gb300-nvl72", "gb300", 72,
           {ScaleUpKind::nvswitch, Bandwidth::gbytes_per_s(900), Time::ns(900), 72},
           {NicKind::infiniband, 72, Bandwidth::gbps(800), Time::us(2), Time::ns(500)}),
      // DGX-1 (V100): 8 x V100 SXM2 in a hybrid cube-mesh, each GPU's 6 NVLink2 links to 4 peers;
      // 4 x 100 Gb/s EDR InfiniBand (DGX-1 datasheet). NCCL lays its rings over the mesh so that
      // each uses all six links; a ring sees each GPU's 150 GB/s per direction, as through a
      // switch, which is how it is modelled. Not modelled: peers without a direct link (all_to_all
      // and send/recv between them go through a third GPU or PCIe).
      node("dgx1-v100", "v100-sxm-32g", 8,
           {ScaleUpKind::nvswitch, Bandwidth::gbytes_per_s(150), Time::ns(700), 8},
           {NicKind::infiniband, 4, Bandwidth::gbps(100), Time::us(2), Time::ns(500)}),
      // DGX-2: 16 x V100 SXM3 32 GB on 12 NVSwitches, 150 GB/s per GPU per direction; 8 x 100 Gb/s
      // EDR InfiniBand (DGX-2 datasheet).
      node("dgx2-v100", "v100-sxm-32g", 16,
           {ScaleUpKind::nvswitch, Bandwidth::gbytes_per_s(150), Time::ns(700), 16},
           {NicKind::infiniband, 8, Bandwidth::gbps(100), Time::us(2), Time::ns(500)}),
      // A generic PCIe server: 8 L40S behind PCIe Gen4 switches (about 25 GB/s usable of 32 GB/s
      // per x16 direction), 2 x 200 Gb/s RoCE NICs. Set scale_up.kind: nvlink-bridge for GPUs
      // bridged in pairs (A40, H100 PCIe).
      node("pcie-server", "l40s", 8,
           {ScaleUpKind::pcie, Bandwidth::gbytes_per_s(25), Time::us(1.5), 1},
           {NicKind::roce, 2, Bandwidth::gbps(200), Time::us(3), Time::ns(800)}),
      // PCIe servers whose GPUs are joined in pairs by NVLink bridges and have no NVSwitch: a
      // pair talks over its bridges at the GPU's own bridged NVLink figure; anything wider
      // crosses PCIe Gen5 (H100) or Gen4 (A100) switches. NICs as pcie-server's.
      node("pcie-h100-nvlink", "h100-pcie", 8, bridged("h100-pcie"),
           {NicKind::roce, 2, Bandwidth::gbps(200), Time::us(3), Time::ns(800)}),
      node("pcie-a100-nvlink", "a100-pcie-80g", 8, bridged("a100-pcie-80g"),
           {NicKind::roce, 2, Bandwidth::gbps(200), Time::us(3), Time::ns(800)}),
  };
  return kNodes;
}

}  // namespace

const GpuSpec* find_gpu_preset(std::string_view name) {
  for (const auto& g : gpus()) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

const ClusterSpec* find_node_preset(std::string_view name) {
  for (const auto& n : nodes()) {
    if (n.node_preset == name) return &n;
  }
  return nullptr;
}

std::vector<std::string_view> gpu_preset_names() {
  std::vector<std::string_view> out;
  for (const auto& g : gpus()) out.push_back(g.name);
  return out;
}

std::vector<std::string_view> node_preset_names() {
  std::vector<std::string_view> out;
  for (const auto& n : nodes()) out.push_back(n.node_preset);
  return out;
}

std::string_view name(ScaleUpKind k) {
  switch (k) {
    case ScaleUpKind::nvswitch: return "nvswitch";
    case ScaleUpKind::nvlink_bridge: return "nvlink-bridge";
    case ScaleUpKind::pcie: return "pcie";
    case ScaleUpKind::none: return "none";
  }
  return "?";
}

std::string_view name(NicKind k) {
  switch (k) {
    case NicKind::infiniband: return "infiniband";
    case NicKind::roce: return "roce";
    case NicKind::efa: return "efa";
    case NicKind::tcp: return "tcp";
    case NicKind::tcpx: return "tcpx";
  }
  return "?";
}

std::string_view name(FabricKind k) {
  switch (k) {
    case FabricKind::single_switch: return "single-switch";
    case FabricKind::fat_tree: return "fat-tree";
    case FabricKind::rail_optimized: return "rail-optimized";
    case FabricKind::dragonfly: return "dragonfly";
    case FabricKind::torus: return "torus";
  }
  return "?";
}

std::string_view name(Dtype d) {
  switch (d) {
    case Dtype::fp32: return "fp32";
    case Dtype::tf32: return "tf32";
    case Dtype::bf16: return "bf16";
    case Dtype::fp16: return "fp16";
    case Dtype::fp8: return "fp8";
    case Dtype::fp4: return "fp4";
  }
  return "?";
}

}  // namespace dtsim::topology
