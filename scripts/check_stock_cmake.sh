#!/usr/bin/env bash
# Configures the project with Debian's stock CMake modules, as a user's machine has them: the
# cmake-data package of the installed version is downloaded and unpacked beside a copy of the
# cmake binary, which then takes its modules from there, not from /usr/share (a development
# machine may carry patched ones). Configures with CUDA (when /usr/local/cuda or PATH has it),
# without, and with an nvcc that cannot compile (the CUDA parts must be skipped with a line saying
# why, not stop the configure). Exits non-zero, with cmake's error, when one fails.
#   scripts/check_stock_cmake.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
version=$(dpkg-query -W -f='${Version}' cmake-data)
(cd "$work" && apt-get download -qq "cmake-data=$version" 2>/dev/null) ||
  { echo "check_stock_cmake: cannot download cmake-data=$version (apt-get update first?)" >&2; exit 1; }
dpkg-deb -x "$work"/cmake-data_*.deb "$work/stock"
mkdir -p "$work/stock/usr/bin"
cp "$(command -v cmake)" "$work/stock/usr/bin/cmake"
# awk reads to the end: leaving early would kill cmake with SIGPIPE, which pipefail turns into a
# failure of this script whenever cmake had more to write.
modules=$("$work/stock/usr/bin/cmake" --system-information 2>/dev/null | awk -F'"' '/^CMAKE_ROOT / && !r {r = $2} END {print r}')
case "$modules" in
  "$work"/*) ;;
  *) echo "check_stock_cmake: the copied cmake read its modules from '$modules', not the stock ones" >&2; exit 1 ;;
esac
status=0
for cuda in ON OFF; do
  if "$work/stock/usr/bin/cmake" -S "$root" -B "$work/build-cuda-$cuda" -G Ninja -DDTSIM_CUDA=$cuda \
       -DDTSIM_WERROR=ON >"$work/log" 2>&1; then
    echo "check_stock_cmake: DTSIM_CUDA=$cuda configures with stock cmake-data $version ($(grep -m1 'dtsim: CUDA' "$work/log" | sed 's/^-- //'))"
  else
    echo "check_stock_cmake: DTSIM_CUDA=$cuda fails to configure with stock cmake-data $version:" >&2
    cat "$work/log" >&2
    status=1
  fi
done
# CUDA present but unusable: an nvcc that fails on everything.
printf '#!/bin/sh\necho "nvcc: broken" >&2\nexit 1\n' > "$work/nvcc"
chmod +x "$work/nvcc"
if CUDACXX="$work/nvcc" "$work/stock/usr/bin/cmake" -S "$root" -B "$work/build-broken" -G Ninja \
     -DDTSIM_WERROR=ON >"$work/log" 2>&1 && grep -q "dtsim: CUDA parts skipped" "$work/log"; then
  echo "check_stock_cmake: a broken nvcc is skipped ($(grep -m1 'dtsim: CUDA' "$work/log" | sed 's/^-- //'))"
else
  echo "check_stock_cmake: a broken nvcc stops the configure or is not reported:" >&2
  cat "$work/log" >&2
  status=1
fi
exit $status
