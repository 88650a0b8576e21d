#!/usr/bin/env bash
# Prints the YAML input of an N x N net: inputs/net100x100.yaml with its count changed (1 cm meshes, so
# the net is N cm wide; each node keeps 0.1 g). Large generated inputs are not committed: make them.
# Usage: benchmarks/net_yaml.sh N > /tmp/netN.yaml
set -euo pipefail
if [ $# -ne 1 ] || ! [[ $1 =~ ^[0-9]+$ ]] || [ "$1" -lt 2 ]; then
  echo "usage: $0 N (N >= 2)" >&2
  exit 2
fi
sed -e "s/count: \[100, 100\]/count: [$1, $1]/" -e "s|output/net100x100|output/net${1}x$1|" \
  "$(dirname "$0")/../inputs/net100x100.yaml"
