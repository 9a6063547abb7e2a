#!/usr/bin/env bash
# What a failed `swift test` run printed that matters, printed last so that the
# tail of a CI log shows it: the failed tests, the tests still running when the
# process ended (one of them crashed it, if it crashed), and the crashed
# thread's backtrace. Usage: scripts/test-report.sh LOG
set -uo pipefail
log=$1
[ -f "$log" ] || exit 0
echo
echo "==== test report: $log"
echo "-- failed:"
grep -E '^✘ Test .* (failed|recorded)|error: -\[|: error:' "$log" | head -40 || true
echo "-- started but not ended (the crash is in one of these, if the process crashed):"
python3 - "$log" <<'PY'
import re, sys
started, ended = {}, set()
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"◇ Test (.+?) started\.", line)
    if m and not m.group(1).startswith(("case ", "run")):
        started[m.group(1)] = True
        continue
    m = re.match(r"[✔✘↷] Test (.+?)(?: with \d+ test cases?)? (passed|failed|skipped)", line)
    if m:
        ended.add(m.group(1))
    m = re.match(r"Test Case '(.+?)' started", line)
    if m:
        started[m.group(1)] = True
    m = re.match(r"Test Case '(.+?)' (passed|failed)", line)
    if m:
        ended.add(m.group(1))
running = [name for name in started if name not in ended]
for name in running[:60]:
    print("   ", name)
if len(running) > 60:
    print(f"    … and {len(running) - 60} more")
PY

echo "-- crash:"
awk '/Program crashed|Thread [0-9]+ crashed/{on=1} on{print; n++} n>=60{exit}' "$log"
echo "==== end of test report"
