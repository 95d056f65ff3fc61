#!/usr/bin/env bash
# setup.sh: installs fuseproof's Debian packages when missing (idempotent), configures and builds into build/.
# Usage: scripts/setup.sh [extra cmake configure arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git xz-utils
  libgtest-dev librapidcheck-dev libtorch-dev
  libopencv-dev libavformat-dev libavcodec-dev libavutil-dev libswscale-dev ffmpeg
  nlohmann-json3-dev libcli11-dev libssl-dev libmpfr-dev
  python3-dev pybind11-dev python3-torch python3-pytest python3-venv python3-setuptools python3-wheel
  python3-junitparser python3-yaml
  clang libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cmake --preset default "$@"
cmake --build --preset default -j "$(nproc)"
