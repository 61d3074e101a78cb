#!/usr/bin/env bash
# Gathers what the device checks run into one folder to carry to a GPU machine that has
# no package registry: the agent, the governance binaries, the Python module, the test
# programs, and every shared library they need beyond the C library (libpq and its
# Kerberos/LDAP/TLS chain, cpp-httplib, libbpf/libelf for the Python module...), in lib/.
# Usage: tests/gpu/make_carry.sh BUILD_DIR OUT_DIR
set -euo pipefail
BUILD="$(cd "${1:?usage: make_carry.sh BUILD_DIR OUT_DIR}" && pwd)"
OUT="${2:?usage: make_carry.sh BUILD_DIR OUT_DIR}"
rm -rf "$OUT" && mkdir -p "$OUT/lib" "$OUT/bench"
copy() { [ -e "$BUILD/$1" ] && cp -a "$BUILD/$1" "$OUT/$1" || true; }
for f in eacgm eacgm-sched libeacgm_hook.so eacgm-bench-bare eacgm-demo cuda_loop cuda_calls driver_loop \
         churn_calls libeacgm_churn.so slow_calls libeacgm_slow.so; do
  copy "$f"
done
[ -d "$BUILD/python" ] && cp -a "$BUILD/python" "$OUT/python"
# (Not the tests' stand-ins: a fake libtorch_python.so on LD_LIBRARY_PATH would shadow
# PyTorch's own.)
for b in "$BUILD"/bench/eacgm_bench_*; do [ -x "$b" ] && cp -a "$b" "$OUT/bench/"; done
find "$OUT" -type f | while read -r f; do  # debug info stays here: the carry is bounded
  file -b "$f" | grep -q ELF && strip --strip-debug "$f" 2>/dev/null || true
done
# Shared libraries the ELF files need, but the C library's own (the device has those).
find "$OUT" -type f \( -perm -u+x -o -name '*.so*' \) | while read -r f; do
  file -b "$f" | grep -q ELF || continue
  ldd "$f" 2>/dev/null | awk '$3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libresolv.so.*|libutil.so.*) ;;
    libstdc++.so.*|libgcc_s.so.*|libz.so.*|libffi.so.*) ;;  # every system has these, newer ones than ours may be needed by its programs
    libcuda.so.*|libnvidia-ml.so.*|libcudart.so.*|libnccl.so.*|libpython3*|libtorch*|libc10*) ;;  # the device's own
    libeacgm_*) ;;  # the tests' own libraries stay beside their programs
    *) cp -L "$lib" "$OUT/lib/" ;;
  esac
done
du -sh "$OUT" | awk '{print "carry: " $1}'
