#!/usr/bin/env python3
"""The realistic workload part of `make bench` (docs/performance.md, "Realistic workload").

    realistic.py BIN_DIR WORKLOAD.ndjson WORK_DIR REPORT_FILE

One NDJSON file of ingress events (`eventbus-bench workload`), measured four ways,
each on a fresh data directory, fsync on every commit:

1. `eventbus broker` alone: `eventbus publish FILE` until every event is confirmed;
2. `eventbus up --pipeline receipt-reducer`: from the start of `eventbus publish` until
   every stage has caught up with the log (`eventbus-bench drain` polls STATS);
3. the same with the default pipeline (receipt-reducer,read-privacy,delivery-privacy);
4. Redis (appendonly yes, appendfsync always) running Benchmarks/redis/receipts.lua,
   driven by Benchmarks/bin/redis_receipts with REDIS_DEPTH calls in flight.

With FSYNC_DELAY_US > 0 (run.sh exports it and SLOW_FSYNC_SO), the broker, `eventbus up`
(and so its plugins) and redis-server run under Benchmarks/slow_fsync.c: each fdatasync
and fsync sleeps that many microseconds first, as on a slower disk.

CPU per event of each process is its utime + stime (/proc/PID/stat, or the rusage of
a process we wait for) over the measurement, divided by the lines of the file.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

BIN, WORKLOAD, WORK, REPORT = sys.argv[1:5]
REDIS_DEPTH = int(os.environ.get("REDIS_DEPTH", "4000"))  # eventbus publish: 8 PUBs of 500 in flight
TICK = os.sysconf("SC_CLK_TCK")
with open(WORKLOAD, "rb") as f:
    LINES = sum(1 for line in f if line.strip())
children_started = []
FSYNC_DELAY_US = int(os.environ.get("FSYNC_DELAY_US", "0"))
# The environment of the processes that fsync: the broker, `eventbus up`, redis-server.
SLOW_ENV = None
if FSYNC_DELAY_US > 0:
    SLOW_ENV = os.environ | {"LD_PRELOAD": os.environ["SLOW_FSYNC_SO"], "EVENTBUS_FSYNC_DELAY_US": str(FSYNC_DELAY_US)}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """utime + stime of a live process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def plugin_pids(parent):
    """The plugin processes `eventbus up` started: {executable name: pid}."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != parent:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv0 = f.read().split(b"\0")[0].decode()
            found[os.path.basename(argv0)] = int(entry)
        except (OSError, ValueError, IndexError):
            pass
    return found


def run_timed(args):
    """Runs a command to its end: (wall seconds, CPU seconds from rusage, stdout)."""
    start = time.monotonic()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    wall = time.monotonic() - start
    # communicate() reaped it; its rusage is in the children's totals of this process.
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({proc.returncode}): {err.decode()[-2000:]}")
    return wall, out.decode()


def children_cpu():
    usage = os.times()
    return usage.children_user + usage.children_system


def start(args, log, ready, timeout=60):
    """Starts a server process (slowed fsync per SLOW_ENV), waits until its log has `ready`."""
    handle = open(log, "w")
    proc = subprocess.Popen(args, stdout=handle, stderr=handle, env=SLOW_ENV)
    children_started.append(proc)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(log) as f:
            if ready in f.read():
                return proc
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    with open(log) as f:
        sys.exit(f"{args[0]} did not start:\n{f.read()[-3000:]}")


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def field(text, key):
    match = re.search(rf"\b{re.escape(key)}=([0-9.]+)", text)
    return float(match.group(1)) if match else 0.0


def per_event_us(seconds):
    return seconds * 1e6 / LINES


def broker_only():
    data = os.path.join(WORK, "real-broker")
    command = f"tcp://127.0.0.1:{free_port()}"
    broker = start([f"{BIN}/eventbus", "broker", "--data-dir", data, "--command", command,
                    "--stream", f"tcp://127.0.0.1:{free_port()}", "--fsync", "always"],
                   os.path.join(WORK, "real-broker.log"), "serving")
    broker_cpu = cpu_seconds(broker.pid)
    cli_cpu = children_cpu()
    wall, _ = run_timed([f"{BIN}/eventbus", "publish", WORKLOAD, "--command", command])
    cli_cpu = children_cpu() - cli_cpu
    broker_cpu = cpu_seconds(broker.pid) - broker_cpu
    stop(broker)
    shutil.rmtree(data, ignore_errors=True)
    return {"events_per_s": LINES / wall, "seconds": wall,
            "cpu_us": {"broker": per_event_us(broker_cpu), "eventbus publish": per_event_us(cli_cpu)}}


def pipeline(stages):
    data = os.path.join(WORK, "real-up")
    command = f"tcp://127.0.0.1:{free_port()}"
    up = start([f"{BIN}/eventbus", "up", "--pipeline", stages, "--data-dir", data, "--command", command,
                "--stream", f"tcp://127.0.0.1:{free_port()}", "--fsync", "always"],
               os.path.join(WORK, "real-up.log"), "eventbus ready")
    plugins = plugin_pids(up.pid)
    names = stages.split(",")
    if sorted(plugins) != sorted(names):
        sys.exit(f"eventbus up runs {sorted(plugins)}, expected {names}")
    before = {"broker (eventbus up)": cpu_seconds(up.pid)} | {n: cpu_seconds(plugins[n]) for n in names}
    cli_cpu = children_cpu()
    began = time.monotonic()
    published, _ = run_timed([f"{BIN}/eventbus", "publish", WORKLOAD, "--command", command])
    cli_cpu = children_cpu() - cli_cpu
    _, drained = run_timed([f"{BIN}/eventbus-bench", "drain", command, "600"])
    wall = time.monotonic() - began
    after = {"broker (eventbus up)": cpu_seconds(up.pid)} | {n: cpu_seconds(plugins[n]) for n in names}
    stop(up)
    shutil.rmtree(data, ignore_errors=True)
    cpu = {n: per_event_us(after[n] - before[n]) for n in before} | {"eventbus publish": per_event_us(cli_cpu)}
    return {"events_per_s": LINES / wall, "seconds": wall, "publish_seconds": published, "cpu_us": cpu,
            "out": int(field(drained, "out")), "rejected": int(field(drained, "rejected")),
            "suppressed": int(field(drained, "suppressed")), "dedup_hits": int(field(drained, "dedup_hits"))}


def redis():
    data = os.path.join(WORK, "real-redis")
    os.makedirs(data, exist_ok=True)
    port = free_port()
    server = start(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", data,
                    "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no",
                    "--logfile", ""], os.path.join(WORK, "real-redis.log"), "Ready to accept connections")
    server_cpu = cpu_seconds(server.pid)
    client_cpu = children_cpu()
    _, out = run_timed(["Benchmarks/bin/redis_receipts", "127.0.0.1", str(port), "Benchmarks/redis/receipts.lua",
                        WORKLOAD, str(REDIS_DEPTH)])
    client_cpu = children_cpu() - client_cpu
    server_cpu = cpu_seconds(server.pid) - server_cpu
    stop(server)
    shutil.rmtree(data, ignore_errors=True)
    return {"events_per_s": field(out, "events_per_s"), "seconds": field(out, "seconds"),
            "p50_us": field(out, "p50_us"), "p99_us": field(out, "p99_us"),
            "rejected": int(field(out, "rejected")), "duplicates": int(field(out, "duplicates")),
            "cpu_us": {"redis-server": per_event_us(server_cpu), "redis_receipts (client)": per_event_us(client_cpu)}}


def main():
    try:
        results = {}
        for name, measure in [("broker", broker_only), ("reducer", lambda: pipeline("receipt-reducer")),
                              ("default", lambda: pipeline("receipt-reducer,read-privacy,delivery-privacy")),
                              ("redis", redis)]:
            print(f"realistic workload: {name}", file=sys.stderr)
            results[name] = measure()
    finally:
        for proc in children_started:
            if proc.poll() is None:
                proc.kill()
    r = results
    slow = f", each fsync +{FSYNC_DELAY_US:,} us (ours and Redis's alike)" if FSYNC_DELAY_US > 0 else ""
    lines = [f"realistic workload: {LINES:,} events (Benchmarks/ChatWorkload/ChatWorkload.swift), fsync on every commit{slow}",
             f"{'':52} {'events/s':>12} {'p99 apply':>10} {'x Redis':>8} {'goal':>8}  met"]

    def row(label, rate, p99="", ratio=None, goal=None):
        met = "" if goal is None else ("yes" if ratio >= goal else "NO")
        ratio_text = "" if ratio is None else f"{ratio:.2f}"
        goal_text = "" if goal is None else f">= {goal:g}x"
        lines.append(f"{label:52} {rate:12,.0f} {p99:>10} {ratio_text:>8} {goal_text:>8}  {met}")

    redis_rate = r["redis"]["events_per_s"]
    publish_rate = r["broker"]["events_per_s"]
    lines.append(f"{'eventbus publish FILE -> eventbus broker alone':52} {publish_rate:12,.0f} {'':>10} {'':>8} "
                 f"{'>= 200k':>8}  {'yes' if publish_rate >= 200_000 else 'NO'}")
    row("broker + receipt-reducer, end to end", r["reducer"]["events_per_s"], "", r["reducer"]["events_per_s"] / redis_rate, 3)
    row("default pipeline (reducer + 2 privacy filters)", r["default"]["events_per_s"], "",
        r["default"]["events_per_s"] / redis_rate, 2)
    row(f"Redis + receipts.lua, EVALSHA pipelined {REDIS_DEPTH}", redis_rate, f"{r['redis']['p99_us'] / 1000:,.1f} ms")
    lines.append(f"  Redis apply latency p50 {r['redis']['p50_us'] / 1000:,.1f} ms; rejected: ours "
                 f"{r['reducer']['rejected']:,}, Redis {r['redis']['rejected']:,}; duplicates dropped: ours "
                 f"{r['reducer']['dedup_hits']:,}, Redis {r['redis']['duplicates']:,}; "
                 f"suppressed by the filters {r['default']['suppressed']:,}")
    lines.append("  CPU us per event:")
    for name in ("broker", "reducer", "default", "redis"):
        cells = ", ".join(f"{k} {v:.1f}" for k, v in r[name]["cpu_us"].items())
        lines.append(f"    {name:8} {cells}")
    with open(REPORT, "w") as f:
        f.write("\n".join(lines) + "\n")


main()
