#!/usr/bin/env bash
# Installs the Debian 12 packages dtsim needs (only those missing), builds the Release preset and,
# unless --no-run is given, runs the default scenario. --peers also installs SimGrid and ns-3, which
# only bench/peers (the flow model beside SimGrid, the packet model beside ns-3) needs.
#   scripts/setup.sh                   # set up, build, run scenarios/default.yaml
#   scripts/setup.sh --no-run          # set up and build only
#   scripts/setup.sh --peers --no-run  # the same, with SimGrid, ns-3 and bench/peers
set -euo pipefail
cd "$(dirname "$0")/.."

run=1
peers=0
for arg in "$@"; do
  case "$arg" in
    --no-run) run=0 ;;
    --peers) peers=1 ;;
    *) echo "setup: unknown option $arg (expected --no-run, --peers)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev libboost-graph-dev      # Boost.Graph, Boost.Asio (header-only in libboost-dev)
  libfmt-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev
  libprotobuf-dev protobuf-compiler   # Chakra execution traces (workloads/chakra_trace)
  libpugixml-dev                       # NCCL topology XML (topology/)
  clang libclang-rt-14-dev             # libFuzzer targets
  libopenmpi-dev openmpi-bin chromium  # sweep --mpi; headless render test of HTML reports
)
if [ "$peers" -eq 1 ]; then
  packages+=(
    libsimgrid-dev  # SimGrid, for bench/peers/flow_vs_simgrid
    libns3-dev      # ns-3 3.37, for bench/peers/packet_vs_ns3 (found by its ns3-*.pc files)
  )
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# CUDA 13 lives in /usr/local/cuda where it is installed; the build uses it when present.
if [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi

# The configure says in one line whether the CUDA parts are built, and why not, and in one line
# why bench/peers is skipped when it is.
cmake --preset release | { grep -E "dtsim: (CUDA|nccl-replay|bench/peers)" || true; }
cmake --build --preset release -j "$(nproc)"

if [ "$run" -eq 1 ]; then
  ./build/release/apps/simulate scenarios/default.yaml
fi
