#!/usr/bin/env bash
# Installs every build and test dependency from Debian's packages. Idempotent: a
# no-op when everything is present. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  clang clang-format clang-tidy llvm libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev
  libfmt-dev nlohmann-json3-dev libcli11-dev libtomlplusplus-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcpp-httplib-dev libsqlite3-dev libncurses-dev libjemalloc-dev tmux
  libpq-dev postgresql
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev libc-ares-dev libre2-dev
  python3 python3-dev pybind11-dev python3-numpy python3-pytest python3-yaml procps util-linux
  python3-venv python3-setuptools python3-wheel
  chromium
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Prometheus's promtool checks the /metrics output in the tests. The package's server
# must not start (it would bind :9090 on a CI machine): a policy-rc.d that denies every
# service start is in place while it installs (Docker images already have one), the
# service is disabled and stopped afterwards, and node-exporter (recommended, :9100) is
# not installed.
if ! command -v promtool >/dev/null; then
  echo "setup: installing prometheus (for promtool; its service stays stopped)"
  created_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee /usr/sbin/policy-rc.d >/dev/null
    "${sudo_cmd[@]}" chmod 755 /usr/sbin/policy-rc.d
    created_policy=1
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  install_rc=0
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    prometheus >/dev/null || install_rc=$?
  if [ "$created_policy" -eq 1 ]; then "${sudo_cmd[@]}" rm -f /usr/sbin/policy-rc.d; fi
  [ "$install_rc" -eq 0 ] || exit "$install_rc"
fi
if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
  "${sudo_cmd[@]}" systemctl disable --now prometheus.service >/dev/null 2>&1 || true
fi

# kubectl renders the Kubernetes manifests offline in the tests (kubectl kustomize,
# tests/kubernetes). Machines with a kubectl keep it; others get Debian's
# kubernetes-client (kubectl 1.20, whose kustomize the manifests are written for).
if ! command -v kubectl >/dev/null; then
  echo "setup: installing kubernetes-client (kubectl, for the manifests' tests)"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    kubernetes-client >/dev/null
fi

# The CUDA toolkit (nvcc, libcudart) builds the demo and test programs. Machines with
# NVIDIA's toolkit in /usr/local/cuda keep it; others get Debian's (non-free).
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: installing Debian's nvidia-cuda-toolkit (needs the non-free component)"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq nvidia-cuda-toolkit >/dev/null || {
    echo "setup: could not install nvidia-cuda-toolkit; enable Debian's non-free component or install NVIDIA's CUDA toolkit in /usr/local/cuda" >&2
    exit 1
  }
fi
# The web UI (web/) is built with Vite from npm packages pinned by web/package-lock.json;
# Vite 7 needs Node.js 20.19 or later. Machines with a newer Node.js keep it; others get
# Debian's nodejs and npm, which must then be new enough.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup: installing nodejs and npm"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq nodejs npm >/dev/null
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "setup: Node.js $(node --version) is too old for the web UI's build (Vite needs 20.19 or later): install Node.js 20 or 22" >&2
  exit 1
fi
web_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/web"
if [ ! -f "$web_dir/node_modules/.package-lock.json" ] || [ "$web_dir/package-lock.json" -nt "$web_dir/node_modules/.package-lock.json" ]; then
  echo "setup: npm ci in web/"
  (cd "$web_dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
exit 0
