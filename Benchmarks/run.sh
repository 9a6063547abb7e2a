#!/usr/bin/env bash
# `make bench`: our broker's figures beside raw libzmq's, measured in one run on
# this machine. Each figure is the median of RUNS runs; compare the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
RAW_COUNT=${RAW_COUNT:-1000000}
BUS_COUNT=${BUS_COUNT:-200000}
BIN=.build/release
WORK=$(mktemp -d /tmp/eventbus-bench.XXXXXX)
RESULTS=$WORK/results.txt
pids=()
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

# Raw libzmq, from the shared baseline sources.
mkdir -p Benchmarks/bin
ZMQ_BENCH=Benchmarks/bin/zmq_bench
if [ ! -x $ZMQ_BENCH ] || [ ../shared/bench/zmq_bench.c -nt $ZMQ_BENCH ]; then
  gcc -O2 -Wall -o $ZMQ_BENCH ../shared/bench/zmq_bench.c $(pkg-config --cflags --libs libzmq)
fi
port=$((20000 + RANDOM % 20000))
ep() { port=$((port + 1)); echo "tcp://127.0.0.1:$port"; }

raw_pubsub() {
  local data sync; data=$(ep); sync=$(ep)
  $ZMQ_BENCH sub "$data" "$sync" "$RAW_COUNT" 0 connect > $WORK/sub.out & local sub=$!
  $ZMQ_BENCH pub "$data" "$sync" "$RAW_COUNT" 0 bind > /dev/null
  wait $sub
  echo "raw_pubsub $(grep -o ' rate=[0-9]*' $WORK/sub.out | cut -d= -f2)" >> $RESULTS
}
raw_proxy() {
  local front back sync; front=$(ep); back=$(ep); sync=$(ep)
  $ZMQ_BENCH proxy "$front" "$back" 0 > /dev/null & local proxy=$!; pids+=($proxy)
  sleep 0.2
  $ZMQ_BENCH sub "$back" "$sync" "$RAW_COUNT" 0 connect > $WORK/sub.out & local sub=$!
  $ZMQ_BENCH pub "$front" "$sync" "$RAW_COUNT" 0 connect > /dev/null
  wait $sub; kill $proxy 2>/dev/null || true; wait $proxy 2>/dev/null || true
  echo "raw_proxy $(grep -o ' rate=[0-9]*' $WORK/sub.out | cut -d= -f2)" >> $RESULTS
}
broker_start() {  # $1 = fsync policy
  local dir=$WORK/data-$RANDOM; COMMAND=$(ep); STREAM=$(ep)
  $BIN/eventbus broker --data-dir "$dir" --command "$COMMAND" --stream "$STREAM" --fsync "$1" 2>$WORK/broker.log &
  BROKER=$!; pids+=($BROKER)
  for _ in $(seq 100); do grep -q "serving" $WORK/broker.log 2>/dev/null && return; sleep 0.05; done
  echo "broker did not start:"; cat $WORK/broker.log; exit 1
}
broker_stop() { kill $BROKER; wait $BROKER 2>/dev/null || true; }
bus_throughput() {  # name fsync count batch window
  broker_start "$2"
  local line; line=$($BIN/eventbus-bench throughput "$COMMAND" "$3" "$4" "$5")
  broker_stop
  echo "$1 $(echo "$line" | grep -o 'events_per_s=[0-9]*' | cut -d= -f2)" >> $RESULTS
}
bus_latency() {
  broker_start always
  local line; line=$($BIN/eventbus-bench latency "$COMMAND" 10000 5)
  broker_stop
  echo "latency_p50_us $(echo "$line" | grep -o 'p50_us=[0-9]*' | cut -d= -f2)" >> $RESULTS
  echo "latency_p99_us $(echo "$line" | grep -o 'p99_us=[0-9]*' | cut -d= -f2)" >> $RESULTS
}

echo "eventbus benchmarks: $RUNS runs each, medians; raw libzmq measured in the same run" >&2
for run in $(seq "$RUNS"); do
  echo "run $run/$RUNS" >&2
  raw_pubsub
  raw_proxy
  bus_throughput bus_batch100_fsync "always" "$BUS_COUNT" 100 16
  bus_throughput bus_batch100_nofsync "off" "$BUS_COUNT" 100 16
  bus_throughput bus_batch1_fsync "always" $((BUS_COUNT / 10)) 1 256
  bus_latency
done

python3 - "$RESULTS" <<'PY'
import statistics, sys
values = {}
for line in open(sys.argv[1]):
    name, value = line.split()
    values.setdefault(name, []).append(float(value))
m = {k: statistics.median(v) for k, v in values.items()}
proxy, pubsub = m["raw_proxy"], m["raw_pubsub"]
rows = [
    ("raw libzmq PUB->SUB (3 frames, 256 B)", pubsub, "", ""),
    ("raw libzmq PUB->zmq_proxy->SUB", proxy, "", ""),
    ("bus PUB->log->consumer, batch 100, fsync always", m["bus_batch100_fsync"], m["bus_batch100_fsync"] / proxy, ">= 0.25"),
    ("bus PUB->log->consumer, batch 100, fsync off", m["bus_batch100_nofsync"], m["bus_batch100_nofsync"] / proxy, ">= 0.5"),
    ("bus PUB->log->consumer, batch 1, fsync always", m["bus_batch1_fsync"], m["bus_batch1_fsync"] / proxy, ""),
]
print(f"{'measurement':52} {'events/s':>12} {'x raw proxy':>12} {'goal':>8}")
for name, rate, ratio, goal in rows:
    print(f"{name:52} {rate:12,.0f} {ratio if ratio == '' else f'{ratio:.3f}':>12} {goal:>8}")
print(f"{'bus confirm latency at 10,000 events/s, p50 (us)':52} {m['latency_p50_us']:12,.0f}")
print(f"{'bus confirm latency at 10,000 events/s, p99 (us)':52} {m['latency_p99_us']:12,.0f} {'':>12} {'< 5000':>8}")
PY
