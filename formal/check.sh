#!/usr/bin/env bash
# Checks formal/eventbus.pml with spin (docs/reliability.md): every configuration
# must finish with "errors: 0", and every mutant must give spin a counterexample.
# Installs spin (Debian) if it is missing. Runs in a scratch folder: pan.* and
# trails never land in the repository; set KEEP_TRAILS=DIR to keep the mutants'.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v spin >/dev/null 2>&1; then
  echo "installing spin (apt-get)" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq spin >/dev/null
fi
CC="${CC:-gcc}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cp "$here/eventbus.pml" "$scratch/"
failures=0

# run NAME EXPECT FLAGS...: EXPECT is "pass" (errors: 0) or "fail" (a trail).
run() {
  local name="$1" expect="$2"; shift 2
  local dir="$scratch/$name"
  mkdir -p "$dir"; cp "$scratch/eventbus.pml" "$dir/"
  (
    cd "$dir"
    spin "$@" -a eventbus.pml >spin.log 2>&1 || { cat spin.log; exit 3; }
    # SAFETY: assertions and invalid end states; COLLAPSE: exact, less memory.
    "$CC" -w -O2 -DSAFETY -DCOLLAPSE -o pan pan.c
    local started=$SECONDS
    ./pan -m1000000 >pan.out 2>&1 || true
    echo "$((SECONDS - started))" >seconds
  ) || { echo "FAIL $name: spin or cc failed"; failures=$((failures + 1)); return; }
  local out="$dir/pan.out" errors states seconds
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$out" | head -1)
  states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$out" | head -1)
  seconds=$(cat "$dir/seconds")
  if grep -q "max search depth too small\|out of memory" "$out"; then
    echo "FAIL $name: search incomplete (depth or memory)"; failures=$((failures + 1)); return
  fi
  if [ -z "$errors" ]; then
    echo "FAIL $name: no verdict from pan"; tail -5 "$out"; failures=$((failures + 1)); return
  fi
  if [ "$expect" = pass ]; then
    if [ "$errors" = 0 ]; then
      echo "ok   $name: errors: 0, $states states, ${seconds}s"
    else
      echo "FAIL $name: errors: $errors"; grep -m1 "pan:[0-9]" "$out" || true
      (cd "$dir" && spin "$@" -t -p eventbus.pml | tail -40) || true
      failures=$((failures + 1))
    fi
  else
    if [ "$errors" != 0 ] && ls "$dir"/eventbus.pml*.trail >/dev/null 2>&1; then
      echo "ok   $name: counterexample found ($(grep -m1 -o 'assertion violated.*)' "$out" || grep -m1 'pan:' "$out")), ${seconds}s"
      if [ -n "${KEEP_TRAILS:-}" ]; then mkdir -p "$KEEP_TRAILS"; cp "$dir"/eventbus.pml*.trail "$KEEP_TRAILS/$name.trail"; fi
    else
      echo "FAIL $name: the mutant was not caught ($errors errors, $states states)"
      failures=$((failures + 1))
    fi
  fi
}

# The model as the code is, in small configurations.
run broker-3ev-2crash            pass -DNEV=3 -DBCRASH=2 -DRETRY=2
run periodic-process-crash       pass -DNEV=3 -DBCRASH=2 -DMUTANT_CONFIRM_BEFORE_FSYNC -DPROCESS_CRASH_ONLY
run pipeline-2ev-1crash-each     pass -DPIPELINE -DNEV=2 -DBCRASH=1 -DPCRASH=1
run pipeline-2ev-2broker-crashes pass -DPIPELINE -DNEV=2 -DBCRASH=2 -DPCRASH=1
# Each mutant breaks one rule; spin must find the interleaving that shows it.
run mutant-confirm-before-fsync  fail -DNEV=2 -DMUTANT_CONFIRM_BEFORE_FSYNC
run mutant-repeat-confirmed-early fail -DNEV=2 -DMUTANT_REPEAT_CONFIRMED_AT_ONCE
run mutant-deliver-before-fsync  fail -DNEV=2 -DMUTANT_DELIVER_BEFORE_FSYNC
run mutant-release-out-of-order  fail -DNEV=2 -DMUTANT_RELEASE_OUT_OF_ORDER
run mutant-dedup-not-rebuilt     fail -DNEV=2 -DMUTANT_DEDUP_NOT_REBUILT
run mutant-commit-before-confirm fail -DPIPELINE -DNEV=2 -DMUTANT_COMMIT_BEFORE_CONFIRM
run mutant-random-output-id      fail -DPIPELINE -DNEV=2 -DMUTANT_RANDOM_OUTPUT_ID
run mutant-pipeline-dedup-lost   fail -DPIPELINE -DNEV=2 -DMUTANT_DEDUP_NOT_REBUILT

if [ "$failures" -gt 0 ]; then
  echo "formal: $failures check(s) failed" >&2
  exit 1
fi
echo "formal: all checks passed"
