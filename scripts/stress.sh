#!/usr/bin/env bash
# The curl transport's cancel-racing-completion stress test (10,000 iterations) and the tests of
# its task executor, under ThreadSanitizer and then AddressSanitizer. CI runs it as part of
# scripts/test.sh.
#   scripts/stress.sh            # both sanitizers
#   scripts/stress.sh thread     # one of them
set -euo pipefail
cd "$(dirname "$0")/.."
# The contributors' build: the test server, benchmark, examples and every trait (Package.swift).
export COURIER_DEVELOPMENT=1
kinds="${1:-thread address}"
for kind in $kinds; do
  echo "== stress under ${kind} sanitizer"
  COURIER_STRESS_ITERATIONS="${COURIER_STRESS_ITERATIONS:-10000}" scripts/sanitize.sh "$kind" --filter "CurlStressTests|CurlExecutorTests"
done
