#!/usr/bin/env bash
# `kubectl kustomize` renders the base and every overlay of deploy/kubernetes offline
# (KUBECONFIG points nowhere: no cluster is asked), each into one non-empty stream of
# documents with the agent's DaemonSet. KUBECTL=path picks the kubectl (default: on PATH;
# scripts/setup.sh installs Debian's kubernetes-client, kubectl 1.20, where there is none).
# Usage: tests/kubernetes/render.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: render.sh SOURCE_DIR}
kubectl=${KUBECTL:-$(command -v kubectl || true)}
if [ -z "$kubectl" ]; then
  echo "render: kubectl is not on PATH (scripts/setup.sh installs Debian's kubernetes-client)" >&2
  exit 1
fi
root="$src/deploy/kubernetes"
dirs=("$root/base")
for d in "$root"/overlays/*/; do dirs+=("${d%/}"); done
[ ${#dirs[@]} -ge 3 ] || { echo "render: expected the base and at least two overlays under $root" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
for d in "${dirs[@]}"; do
  name=${d#"$root"/}
  if ! KUBECONFIG=/dev/null "$kubectl" kustomize "$d" > "$out/render.yaml" 2> "$out/err"; then
    echo "FAIL $name: kubectl kustomize failed: $(grep -v '^# Warning' "$out/err" | tr '\n' ' ')"
    fail=1
    continue
  fi
  docs=$(grep -c '^kind: ' "$out/render.yaml" || true)
  if ! grep -q '^kind: DaemonSet$' "$out/render.yaml"; then
    echo "FAIL $name: no DaemonSet in the render ($docs documents)"
    fail=1
    continue
  fi
  echo "ok $name: $docs documents"
done
[ "$fail" -eq 0 ] && echo "rendered ${#dirs[@]} kustomizations with $("$kubectl" version --client 2>/dev/null | head -1)"
exit "$fail"
