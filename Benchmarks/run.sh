#!/usr/bin/env bash
# `make bench`: our broker's figures beside raw libzmq's, measured in one run on
# this machine. Each figure is the median of RUNS runs; compare the ratios.
# Then, once, a realistic chat workload end to end beside a Redis peer (REAL=0 skips
# it, ONLY=real runs it alone, REAL_COUNT sizes it; docs/performance.md).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
RAW_COUNT=${RAW_COUNT:-1000000}
BUS_COUNT=${BUS_COUNT:-200000}
GW_CLIENTS=${GW_CLIENTS:-1000}
GW_EVENTS=${GW_EVENTS:-2000}
# The realistic workload (Benchmarks/realistic.py), measured once: REAL_COUNT lines of
# Benchmarks/ChatWorkload/ChatWorkload.swift's chat mix for seed REAL_SEED; REAL=0 skips it.
REAL=${REAL:-1}
REAL_COUNT=${REAL_COUNT:-1000000}
REAL_SEED=${REAL_SEED:-1}
# FSYNC_DELAY_US=N: every fdatasync/fsync of the broker, `eventbus up`'s processes and
# the Redis peer sleeps N us first (Benchmarks/slow_fsync.c, LD_PRELOAD): a slower disk.
FSYNC_DELAY_US=${FSYNC_DELAY_US:-0}
BIN=.build/release
# The examples' release builds (`make bench` builds them): identity, chat-gateway and its bench.
PLUGINS_BIN=examples/plugins/.build/release
GATEWAY_BIN=examples/gateway/.build/release
WORK=$(mktemp -d /tmp/eventbus-bench.XXXXXX)
RESULTS=$WORK/results.txt
pids=()
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT

scripts/ensure-bench-deps.sh
# Raw libzmq: the project's own baseline program (Benchmarks/zmq_baseline.c).
mkdir -p Benchmarks/bin
ZMQ_BENCH=Benchmarks/bin/zmq_baseline
if [ ! -x $ZMQ_BENCH ] || [ Benchmarks/zmq_baseline.c -nt $ZMQ_BENCH ]; then
  gcc -O2 -Wall -o $ZMQ_BENCH Benchmarks/zmq_baseline.c $(pkg-config --cflags --libs libzmq)
fi
# The Redis peer's pipelined client (Benchmarks/redis/).
if [ "$REAL" = 1 ] && { [ ! -x Benchmarks/bin/redis_receipts ] || [ Benchmarks/redis/redis_receipts.c -nt Benchmarks/bin/redis_receipts ]; }; then
  gcc -O2 -Wall -o Benchmarks/bin/redis_receipts Benchmarks/redis/redis_receipts.c $(pkg-config --cflags --libs hiredis)
fi
# Slow fsync: SLOW prefixes the broker and `eventbus up`; realistic.py reads the two exports.
SLOW=(env)
if [ "$FSYNC_DELAY_US" -gt 0 ]; then
  SLOW_FSYNC_SO=$PWD/Benchmarks/bin/slow_fsync.so
  if [ ! -f $SLOW_FSYNC_SO ] || [ Benchmarks/slow_fsync.c -nt $SLOW_FSYNC_SO ]; then
    gcc -shared -fPIC -O2 -Wall -o $SLOW_FSYNC_SO Benchmarks/slow_fsync.c -ldl
  fi
  SLOW=(env LD_PRELOAD=$SLOW_FSYNC_SO EVENTBUS_FSYNC_DELAY_US=$FSYNC_DELAY_US)
  export SLOW_FSYNC_SO FSYNC_DELAY_US
  # What one 256-byte append + fdatasync takes here, without and with the shim (median of 50).
  fsync_probe() { "$@" python3 -c 'import os,sys,time,statistics as st
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND); t = []
for _ in range(50): os.write(fd, b"x" * 256); s = time.perf_counter(); os.fdatasync(fd); t.append(time.perf_counter() - s)
print(f"{st.median(t) * 1e3:.2f}")' $WORK/fsync-probe; rm -f $WORK/fsync-probe; }
  FSYNC_PROBE="$(fsync_probe env) ms without, $(fsync_probe "${SLOW[@]}") ms with the shim"
fi
# A loopback port nothing listens on now.
ep() { echo "tcp://127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"; }

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
broker_start() {  # $1 = fsync policy, then extra broker flags
  BROKER_DIR=$WORK/data-$RANDOM; COMMAND=$(ep); STREAM=$(ep)
  "${SLOW[@]}" $BIN/eventbus broker --data-dir "$BROKER_DIR" --command "$COMMAND" --stream "$STREAM" --fsync "$1" "${@:2}" 2>$WORK/broker.log &
  BROKER=$!; pids+=($BROKER)
  for _ in $(seq 100); do grep -q "serving" $WORK/broker.log 2>/dev/null && return; sleep 0.05; done
  echo "broker did not start:"; cat $WORK/broker.log; exit 1
}
# Each measurement's data goes when it ends: left behind, the kernel would be writing
# it back (fsync off leaves it all dirty) while the next measurement fsyncs.
broker_stop() { kill $BROKER; wait $BROKER 2>/dev/null || true; rm -rf "$BROKER_DIR"; }
bus_throughput() {  # name fsync count batch window
  broker_start "$2"
  local line; line=$($BIN/eventbus-bench throughput "$COMMAND" "$3" "$4" "$5")
  broker_stop
  echo "$1 $(echo "$line" | grep -o ' events_per_s=[0-9]*' | cut -d= -f2)" >> $RESULTS
}
curve_keys() {  # once: a broker key and an admin client key (the bench PUBs to in and consumes in/)
  [ -f $WORK/keys/security.yaml ] && return
  mkdir -p $WORK/keys
  $BIN/eventbus keygen --out $WORK/keys/broker > /dev/null
  $BIN/eventbus keygen --out $WORK/keys/bench > /dev/null
  printf 'secret_key_file: broker.secret\nclients:\n  - name: bench\n    public_key_file: bench.pub\n    role: admin\n' > $WORK/keys/security.yaml
}
bus_throughput_curve() {  # name fsync count batch window: bus_throughput with CURVE on both sockets
  curve_keys
  broker_start "$2" --security $WORK/keys/security.yaml
  local line; line=$(EVENTBUS_SECRET_KEY=$(grep -v '^#' $WORK/keys/bench.secret) EVENTBUS_SERVER_KEY=$(grep -v '^#' $WORK/keys/broker.pub) \
    $BIN/eventbus-bench throughput "$COMMAND" "$3" "$4" "$5")
  broker_stop
  echo "$1 $(echo "$line" | grep -o ' events_per_s=[0-9]*' | cut -d= -f2)" >> $RESULTS
}
up_start() {  # $1 = --pipeline list or a config file (ends in .yaml)
  local dir=$WORK/up-$RANDOM; COMMAND=$(ep); STREAM=$(ep); UP_DIR=${2:-$dir}
  local how=(--pipeline "$1"); [[ "$1" == *.yaml ]] && how=(--config "$1")
  : > $WORK/up.log
  "${SLOW[@]}" $BIN/eventbus up "${how[@]}" --data-dir "$UP_DIR" --command "$COMMAND" --stream "$STREAM" 2>>$WORK/up.log &
  UP=$!; pids+=($UP)
  UP_STARTED=$(date +%s.%N)
  for _ in $(seq 600); do grep -q "eventbus ready" $WORK/up.log 2>/dev/null && return; sleep 0.05; done
  echo "eventbus up did not get ready:"; cat $WORK/up.log; exit 1
}
up_stop() {  # [keep]: leave the data directory for a restart on it
  kill -TERM $UP; wait $UP 2>/dev/null || true
  [ "${1:-}" = keep ] || rm -rf "$UP_DIR"
}
identity_pipeline() {  # $1 = N: a config file with N identity stages
  local file=$WORK/pipeline-$1.yaml
  echo "pipeline:" > $file
  for i in $(seq "$1"); do printf '  - name: id%s\n    command: ["%s/identity"]\n' "$i" "$PWD/$PLUGINS_BIN" >> $file; done
  echo $file
}
bus_pipeline() {  # N identity stages, fsync always, batch 100
  local n=$1 line
  if [ "$n" = 0 ]; then
    broker_start always
    line=$($BIN/eventbus-bench throughput "$COMMAND" "$BUS_COUNT" 100 16 in in/)
    broker_stop
  else
    up_start "$(identity_pipeline "$n")"
    line=$($BIN/eventbus-bench throughput "$COMMAND" "$BUS_COUNT" 100 16 in out/)
    up_stop
  fi
  echo "pipeline_$n $(echo "$line" | grep -o ' events_per_s=[0-9]*' | cut -d= -f2)" >> $RESULTS
}
bus_reducer() {  # $1 = name, $2 = pipeline, $3 = acks, [$4 = rate]
  up_start "$2"
  local line; line=$($BIN/eventbus-bench reducer "$COMMAND" "$3" 100 16 ${4:-})
  if [ -n "${4:-}" ] && [ "$4" != threads ]; then
    echo "$1_p50_us $(echo "$line" | grep -o 'p50_us=[0-9]*' | cut -d= -f2)" >> $RESULTS
    echo "$1_p99_us $(echo "$line" | grep -o 'p99_us=[0-9]*' | cut -d= -f2)" >> $RESULTS
  else
    echo "$1 $(echo "$line" | grep -o 'acks_per_s=[0-9]*' | cut -d= -f2)" >> $RESULTS
  fi
  if [ "${RESTART:-}" = 1 ]; then
    # Restart on the same data directory: time until ready and the reducer caught up.
    local head; head=$($BIN/eventbus stats --json --command "$COMMAND" | python3 -c 'import json,sys; print(json.load(sys.stdin)["head_seq"])')
    up_stop keep
    up_start "$2" "$UP_DIR"
    while :; do
      lag=$($BIN/eventbus stats --json --command "$COMMAND" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(sum(c["lag"] for c in s["consumers"] if c["name"]=="receipt-reducer"))')
      [ "$lag" = 0 ] && break; sleep 0.02
    done
    echo "restart_events $head" >> $RESULTS
    echo "restart_to_live_s $(python3 -c "import time; print(round(time.time() - $UP_STARTED, 3))")" >> $RESULTS
  fi
  up_stop
}
bus_latency() {
  broker_start always
  local line; line=$($BIN/eventbus-bench latency "$COMMAND" 10000 5)
  broker_stop
  echo "latency_p50_us $(echo "$line" | grep -o 'p50_us=[0-9]*' | cut -d= -f2)" >> $RESULTS
  echo "latency_p99_us $(echo "$line" | grep -o 'p99_us=[0-9]*' | cut -d= -f2)" >> $RESULTS
}
gateway_fanout() {  # default pipeline + chat-gateway, GW_CLIENTS websockets, GW_EVENTS message.new
  up_start receipt-reducer,read-privacy,delivery-privacy
  : > $WORK/gateway.out
  $GATEWAY_BIN/chat-gateway --http 127.0.0.1:0 --command "$COMMAND" --consumer gateway-bench --queue-limit 1000000 \
    --log-level error > $WORK/gateway.out 2>$WORK/gateway.log &
  local gateway=$! port=""; pids+=($gateway)
  for _ in $(seq 600); do
    port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' $WORK/gateway.out 2>/dev/null | grep -o '[0-9]*$' || true)
    [ -n "$port" ] && break; sleep 0.05
  done
  [ -n "$port" ] || { echo "chat-gateway did not start:"; cat $WORK/gateway.log; exit 1; }
  local line; line=$($GATEWAY_BIN/eventbus-gateway-bench "$COMMAND" "ws://127.0.0.1:$port/ws" "$GW_CLIENTS" "$GW_EVENTS")
  kill $gateway; wait $gateway 2>/dev/null || true
  up_stop
  for key in out_events_per_s gateway_events_per_s frames_per_s; do
    echo "gw_$key $(echo "$line" | grep -o " $key=[0-9]*" | cut -d= -f2)" >> $RESULTS
  done
}

if [ "${ONLY:-}" != real ]; then  # ONLY=real: the realistic workload alone
echo "eventbus benchmarks: $RUNS runs each, medians; raw libzmq measured in the same run" >&2
for run in $(seq "$RUNS"); do
  echo "run $run/$RUNS" >&2
  raw_pubsub
  raw_proxy
  bus_throughput bus_batch100_fsync "always" "$BUS_COUNT" 100 16
  bus_throughput bus_batch100_nofsync "off" "$BUS_COUNT" 100 16
  bus_throughput_curve bus_batch100_nofsync_curve "off" "$BUS_COUNT" 100 16
  bus_throughput bus_batch1_fsync "always" $((BUS_COUNT / 10)) 1 256
  bus_latency
  for n in 0 1 3; do bus_pipeline $n; done
  bus_reducer reducer_acks receipt-reducer "$BUS_COUNT"
  bus_reducer pipeline_acks receipt-reducer,read-privacy,delivery-privacy "$BUS_COUNT"
  bus_reducer reducer_threads_acks receipt-reducer "$BUS_COUNT" threads
  bus_reducer reducer_latency receipt-reducer 50000 10000
  gateway_fanout
done
RESTART=1 bus_reducer restart_acks receipt-reducer 300000
# The reducer's allocator setting as `eventbus up` gives it (Supervisor.allocatorEnvironment).
MALLOC_MMAP_THRESHOLD_=1048576 MALLOC_TRIM_THRESHOLD_=4194304 $BIN/eventbus-reducer-bench | while read -r _ mode rest; do
  for kv in $rest; do echo "${kv%%=*} ${kv#*=}" >> $RESULTS; done
done
fi
if [ "$REAL" = 1 ]; then
  echo "realistic workload: generating $REAL_COUNT events (seed $REAL_SEED)" >&2
  $BIN/eventbus-bench workload "$REAL_COUNT" "$REAL_SEED" $WORK/workload.ndjson >&2
  python3 Benchmarks/realistic.py $BIN $WORK/workload.ndjson $WORK $WORK/realistic.txt
  rm -f $WORK/workload.ndjson
fi

# JetStream (issue 17, docs/scale-out.md): a local three-node cluster (`eventbus cluster up`),
# JetStream alone (eventbus-bench jetstream, a libnats load generator) beside the bus through
# an `eventbus gateway` on the same kind of R3 streams, once. JETSTREAM=0 skips it.
if [ "${JETSTREAM:-1}" = 1 ] && [ "${ONLY:-}" != real ]; then
  echo "jetstream: a three-node cluster, raw and through the gateway" >&2
  if [ -z "${EVENTBUS_NATS_SERVER:-}" ]; then
    EVENTBUS_NATS_SERVER="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/nats-server"
    [ -x "$EVENTBUS_NATS_SERVER" ] || EVENTBUS_NATS_SERVER=$(command -v nats-server)
    export EVENTBUS_NATS_SERVER
  fi
  JS_COUNT=${JS_COUNT:-100000}
  base=$(python3 -c 'import random; print(random.randrange(20000, 40000, 10))')
  $BIN/eventbus cluster up --nodes 3 --data-dir $WORK/nats --base-port "$base" > $WORK/nats.urls 2>$WORK/nats.log &
  CLUSTER=$!; pids+=($CLUSTER)
  for _ in $(seq 600); do [ -s $WORK/nats.urls ] && break; sleep 0.1; done
  [ -s $WORK/nats.urls ] || { echo "the cluster did not start:"; cat $WORK/nats.log; exit 1; }
  URLS=$(head -1 $WORK/nats.urls)
  # JetStream alone writes a stream of its own: as the cluster's admin user (the URLs
  # printed carry the gateway user's, which may write the bus's stages only).
  ADMIN_URLS=$(cat $WORK/nats/users/admin.url 2>/dev/null || echo "$URLS")
  line=$($BIN/eventbus-bench jetstream "$ADMIN_URLS" "$JS_COUNT" 2000)
  echo "js_raw $(echo "$line" | grep -o ' events_per_s=[0-9]*' | cut -d= -f2)" >> $RESULTS
  GATEWAY_EP=$(ep)
  $BIN/eventbus gateway --backend "$URLS" --endpoint "$GATEWAY_EP" 2>$WORK/jsgw.log &
  JSGW=$!; pids+=($JSGW)
  for _ in $(seq 600); do grep -q "gateway serving" $WORK/jsgw.log 2>/dev/null && break; sleep 0.05; done
  line=$($BIN/eventbus-bench throughput "$GATEWAY_EP" "$JS_COUNT" 100 16)
  echo "js_bus $(echo "$line" | grep -o ' events_per_s=[0-9]*' | cut -d= -f2)" >> $RESULTS
  kill $JSGW; wait $JSGW 2>/dev/null || true
  # Acks through receipt-reducer with `eventbus up --backend` on the same cluster.
  JSUP_EP=$(ep)
  $BIN/eventbus up --backend "$URLS" --pipeline receipt-reducer --data-dir $WORK/jsup --command "$JSUP_EP" 2>$WORK/jsup.log &
  JSUP=$!; pids+=($JSUP)
  for _ in $(seq 600); do grep -q "eventbus ready" $WORK/jsup.log 2>/dev/null && break; sleep 0.05; done
  line=$($BIN/eventbus-bench reducer "$JSUP_EP" 20000 100 16)
  echo "js_reducer_acks $(echo "$line" | grep -o 'acks_per_s=[0-9]*' | cut -d= -f2)" >> $RESULTS
  kill -TERM $JSUP; wait $JSUP 2>/dev/null || true
  kill $CLUSTER; wait $CLUSTER 2>/dev/null || true
  rm -rf $WORK/nats
fi

# The HTTP edge (issue 21, docs/http.md), once: `eventbus-http` against a broker alone,
# POST /v1/events with batches of 100 beside PUBS of 100 from BusClient (8 in flight each),
# and one channel's events through GET /v1/stream to HTTP_CLIENTS clients beside one durable
# consumer of `out`. HTTP=0 skips it.
HTTP_BIN=edge/http/.build/release
if [ "${HTTP:-1}" = 1 ] && [ "${ONLY:-}" != real ]; then
  echo "http edge: POST beside PUBS, then stream fan-out" >&2
  HTTP_EP=$(ep)
  "${SLOW[@]}" $BIN/eventbus broker --data-dir $WORK/http --command "$HTTP_EP" --stream "$(ep)" 2>$WORK/http-broker.log &
  pids+=($!)
  $HTTP_BIN/eventbus-http --listen 127.0.0.1:0 --command "$HTTP_EP" >$WORK/http.log 2>&1 &
  pids+=($!)
  for _ in $(seq 600); do grep -q "listening on" $WORK/http.log 2>/dev/null && break; sleep 0.05; done
  HTTP_PORT=$(grep -o "http://127.0.0.1:[0-9]*" $WORK/http.log | head -1 | cut -d: -f3)
  for kv in $($HTTP_BIN/eventbus-http-bench ingress --port "$HTTP_PORT" --command "$HTTP_EP" --events "${HTTP_EVENTS:-200000}" | grep RESULT | cut -d' ' -f3-); do
    echo "${kv%%=*} ${kv#*=}" >> $RESULTS
  done
  for kv in $($HTTP_BIN/eventbus-http-bench fanout --port "$HTTP_PORT" --command "$HTTP_EP" --clients "${HTTP_CLIENTS:-1000}" \
      --events "${HTTP_FANOUT_EVENTS:-1000}" | grep RESULT | cut -d' ' -f3-); do
    echo "${kv%%=*} ${kv#*=}" >> $RESULTS
  done
fi

if [ "$FSYNC_DELAY_US" -gt 0 ]; then
  echo "SLOW FSYNC: every fdatasync/fsync of the broker, eventbus up's plugins and redis-server sleeps" \
    "$FSYNC_DELAY_US us first (Benchmarks/slow_fsync.c); one fdatasync here: $FSYNC_PROBE; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
fi
[ "${ONLY:-}" = real ] || python3 - "$RESULTS" <<'PY'
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
    ("bus PUB->log->consumer, batch 100, fsync off, CURVE", m["bus_batch100_nofsync_curve"], m["bus_batch100_nofsync_curve"] / proxy, ""),
]
print(f"{'measurement':52} {'events/s':>12} {'x raw proxy':>12} {'goal':>8}")
for name, rate, ratio, goal in rows:
    print(f"{name:52} {rate:12,.0f} {ratio if ratio == '' else f'{ratio:.3f}':>12} {goal:>8}")
curve = m["bus_batch100_nofsync_curve"] / m["bus_batch100_nofsync"]
print(f"{'  CURVE on / off (batch 100, fsync off, same run)':52} {'':>12} {curve:12.3f} {'>= 0.6':>8}")
print(f"{'bus confirm latency at 10,000 events/s, p50 (us)':52} {m['latency_p50_us']:12,.0f}")
print(f"{'bus confirm latency at 10,000 events/s, p99 (us)':52} {m['latency_p99_us']:12,.0f} {'':>12} {'< 5000':>8}")
print()
zero = m["pipeline_0"]
print(f"{'pipeline of N identity stages, fsync always':52} {'events/s':>12} {'x N=0':>12} {'x proxy':>8}")
for n in (0, 1, 3):
    goal = "  >= 0.3" if n == 3 else ""
    print(f"{'  N = ' + str(n):52} {m[f'pipeline_{n}']:12,.0f} {m[f'pipeline_{n}'] / zero:12.3f} {m[f'pipeline_{n}'] / proxy:8.3f}{goal}")
print()
print(f"{'receipts':52} {'figure':>12} {'goal':>12}")
print(f"{'acks/s through broker + receipt-reducer':52} {m['reducer_acks']:12,.0f} {'>= 100,000':>12}")
print(f"{'acks/s through the default pipeline (+2 filters)':52} {m['pipeline_acks']:12,.0f} {'':>12}")
print(f"{'acks/s through broker + receipt-reducer, threads+mutes':52} {m['reducer_threads_acks']:12,.0f} {'>= 100,000':>12}")
print(f"{'  default pipeline / reducer alone':52} {m['pipeline_acks'] / m['reducer_acks']:12.3f} {'>= 0.5':>12}")
print(f"{'ack-to-out latency at 10,000 acks/s, p50 (us)':52} {m['reducer_latency_p50_us']:12,.0f}")
print(f"{'ack-to-out latency at 10,000 acks/s, p99 (us)':52} {m['reducer_latency_p99_us']:12,.0f} {'<= 5,000':>12}")
print(f"{'message_receipts at 100,000 members (us, in-process)':52} {m['message_receipts_us']:12,.1f} {'<= 50':>12}")
print(f"{'  one ack through the plugin, in process (us)':52} {m['ack_path_us']:12,.2f}")
print(f"{'  the broker check of one output event (ns)':52} {m['output_check_ns']:12,.0f}")
print(f"{'unread_counts (us, in-process)':52} {m['unread_counts_us']:12,.1f} {'<= 50':>12}")
print(f"{'resident bytes per (channel, member)':52} {m['per_member_bytes']:12,.0f} {'<= 100':>12}")
print(f"{'  the same with threads and mutes':52} {m['per_member_bytes_threads']:12,.0f} {'<= 100':>12}")
print(f"{'resident bytes per retained message':52} {m['per_message_bytes']:12,.0f} {'<= 48':>12}")
print(f"{'  per (channel, member) that read three times':52} {m['per_active_member_bytes']:12,.0f} {'<= 100':>12}")
print(f"{'resident MB after 2M / 10M messages, retention 100k':52} {m['retention_rss_mb_2m']:7,.1f} /{m['retention_rss_mb_10m']:5,.1f}")
print(f"{'  growth from 2M to 10M messages (MB)':52} {m['retention_growth_mb']:12,.1f} {'flat':>12}   (10 channels; an idle member's unread: {m['retention_idle_unread']:,.0f})")
print(f"{'message.deleted at 100,000 members, all unread (us)':52} {m['deleted_100k_us']:12,.0f}   ({m['deleted_100k_events']:,.0f} events)")
print(f"{'message.new, counts pushed to 1,000 members (us)':52} {m['pushed_new_1k_us']:12,.0f}")
print(f"{'message.new, counts pushed to 100,000 members (us)':52} {m['pushed_new_100k_us']:12,.0f}   ({m['pushed_new_100k_events']:,.0f} events)")
print()
print(f"{'gateway fan-out (default pipeline, message.new to one channel)':52} {'events/s':>12}")
print(f"{'  bus out rate (durable consumer of out), same run':52} {m['gw_out_events_per_s']:12,.0f}")
print(f"{'  pushed to every one of the websocket clients':52} {m['gw_gateway_events_per_s']:12,.0f}   ({m['gw_frames_per_s']:,.0f} frames/s)")
print(f"{'restart to live (s) with this many events in the log':52} {m['restart_to_live_s']:12,.2f} {'<= 3':>12}   ({m['restart_events']:,.0f} events)")
if "http_ratio" in m:
    print()
    print(f"{'HTTP edge, eventbus-http against a broker alone (once)':52} {'events/s':>12} {'x PUBS':>8} {'goal':>8}")
    print(f"{'  PUBS of 100 from BusClient, 8 in flight':52} {m['zmq_pubs_events_per_s']:12,.0f}")
    print(f"{'  POST /v1/events, batches of 100, 8 connections':52} {m['http_post_events_per_s']:12,.0f} {m['http_ratio']:8.3f} {'>= 0.5':>8}")
    print(f"{'  GET /v1/stream: deliveries/s over all clients':52} {m['sse_deliveries_per_s']:12,.0f}   ({m['clients']:,.0f} clients, {m['events']:,.0f} events of one channel)")
    print(f"{'    each client':52} {m['sse_per_client_events_per_s']:12,.0f}   (one durable consumer of out: {m['out_consumer_events_per_s']:,.0f})")
if "js_raw" in m:
    print()
    print(f"{'JetStream, three nodes, R3 streams (once)':52} {'events/s':>12} {'x raw JS':>8} {'goal':>8}")
    print(f"{'  JetStream alone: publish + pull consume (libnats)':52} {m['js_raw']:12,.0f}")
    print(f"{'  the bus: PUBS of 100 via eventbus gateway + consume':52} {m['js_bus']:12,.0f} {m['js_bus'] / m['js_raw']:8.3f} {'>= 0.5':>8}")
    print(f"{'  acks/s through receipt-reducer, eventbus up --backend':52} {m['js_reducer_acks']:12,.0f}   ({m['js_reducer_acks'] / m['reducer_acks']:.3f} of the embedded broker's)")
PY
if [ "$REAL" = 1 ]; then echo; cat $WORK/realistic.txt; fi
