#!/usr/bin/env bash
# Installs the Debian 12 packages gglmbs needs (idempotent), then configures and builds it in build/.
# Usage: scripts/setup.sh [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

# valgrind: the memcheck test of the paper examples (docs/robustness.md); python3-h5py: reading the trajectory
# without ParaView (docs/output.md; test_docs runs that example); util-linux (unshare) and mount are in every
# Debian system.
packages=(build-essential cmake pkg-config clang-format-14 petsc-dev libsuitesparse-dev libmetis-dev liblapack-dev libyaml-dev libcmocka-dev openmpi-bin libopenmpi-dev python3-matplotlib python3-h5py valgrind)
# ParaView reads the trajectory back in the tests and renders docs/figures/paraview_*.png. Debian's
# ParaView renders only through GLX, so headless runs need Xvfb. These are installed with their
# recommended packages (python3-paraview, xauth for xvfb-run, fonts, GL drivers): the configuration the
# ParaView tests were run in.
viewers=(paraview python3-paraview xvfb xauth xfonts-base)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
missing_viewers=()
for p in "${viewers[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing_viewers+=("$p")
done
if [ ${#missing[@]} -gt 0 ] || [ ${#missing_viewers[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  if [ ${#missing[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
  if [ ${#missing_viewers[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing_viewers[@]}"
  fi
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGGLMBS_WERROR=ON "$@"
cmake --build build -j"$(nproc)"
