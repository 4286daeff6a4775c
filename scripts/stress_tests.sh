#!/usr/bin/env bash
# Runs the wire and broker test files RUNS times (default 20) while two busy loops hold the
# machine's CPUs, to shake out tests that pass only on an idle machine. Each run gets its
# own seed (Hypothesis's, and PYTHONHASHSEED) and its own log; every failing run is reported
# with its seed, its failed tests and the path of its log, so it can be run again alike:
#
#   PYTHONHASHSEED=<seed> pytest --hypothesis-seed=<seed> <files>
#
# Usage: scripts/stress_tests.sh [RUNS] [pytest file ...]   (run from anywhere; the logs go
# to build/stress/). Exit status: 0 when every run passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"
shift || true
if [ "$#" -gt 0 ]; then
  files=("$@")
else
  files=(tests/test_wire.py tests/test_wire_backend.py tests/test_wire_backends.py
         tests/test_wire_silence.py tests/test_wire_kafka_python_rejoin.py tests/test_wire_produce.py tests/test_wire_releases.py
         tests/test_wire_steering.py tests/test_check_wire.py tests/test_drivers.py
         tests/test_broker_clients.py
         tests/test_broker_clients_steered.py tests/test_broker_command.py
         tests/test_broker_protocol.py tests/test_broker_steering.py)
  for extra in tests/test_broker_framing.py tests/test_second_reader.py; do
    [ -f "$extra" ] && files+=("$extra")
  done
fi
pytest="${PYTEST:-pytest}"
out=build/stress
mkdir -p "$out"

busy=()
for _ in 1 2; do
  ( while :; do :; done ) &
  busy+=("$!")
done
trap 'kill "${busy[@]}" 2>/dev/null' EXIT

failed=0
started=$(date +%s)
for run in $(seq 1 "$runs"); do
  seed=$((1000 + run))
  log="$out/run-$run-seed-$seed.log"
  t0=$(date +%s)
  PYTHONHASHSEED=$seed "$pytest" -q -p no:cacheprovider --hypothesis-seed="$seed" \
    "${files[@]}" >"$log" 2>&1
  status=$?
  summary=$(tail -n 1 "$log")
  echo "run $run/$runs seed $seed: exit $status in $(( $(date +%s) - t0 )) s: $summary"
  if [ "$status" -ne 0 ]; then
    failed=$((failed + 1))
    grep -E '^(FAILED|ERROR) ' "$log" | sed 's/^/    /'
    echo "    log: $log"
  fi
done
echo "stress: $failed failed of $runs runs under two busy loops ($(( $(date +%s) - started )) s)"
[ "$failed" -eq 0 ]
