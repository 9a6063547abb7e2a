#!/usr/bin/env bash
# Tests wait for conditions, never for a fixed time: a sleep in a test is a poll
# interval in a loop that checks its condition, a deadline's timer, or a
# simulated slow peer, and says which in a comment on its line. `make test`
# runs this first.
set -euo pipefail
cd "$(dirname "$0")/.."
found=$(grep -rnE 'Thread\.sleep|Task\.sleep|usleep\(|time\.sleep\(' Tests examples/*/Tests edge/*/Tests Sources/EventBusTesting \
    --include='*.swift' --include='*.py' | grep -vE 'poll interval|deadline timer|slow peer' || true)
if [ -n "$found" ]; then
    echo "A test sleeps for a fixed time: poll the condition instead (or, for a poll interval, say so on the line):"
    echo "$found"
    exit 1
fi
# Swift Testing's `.timeLimit` cancels the test's own task, and Swift 6.3's test
# cancellation can crash the whole test process (a CI run died in
# pthread_mutex_trylock under Testing's _cancel): guard a hang with
# EventBusTesting's withDeadline, which cancels only a child task.
limits=$(grep -rnE '\.timeLimit\(' Tests examples/*/Tests edge/*/Tests --include='*.swift' || true)
if [ -n "$limits" ]; then
    echo "A test uses .timeLimit: guard the hang with withDeadline (Sources/EventBusTesting/Deadline.swift) instead:"
    echo "$limits"
    exit 1
fi
