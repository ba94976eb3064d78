#!/usr/bin/env bash
# Mutated responses end to end (issue 25): COUNT calls per transport (default 10,000) to the fault
# server's /mutate/<seed>, each a valid response broken in ways the seed picks, on every transport
# FoundationNetworking cannot crash (curl, and ahc with its trait); then the same seeds through
# URLSession in a child process restarted after each FoundationNetworking crash (counted). Each call must end once, with a
# response or a typed NetworkError, never a timeout, never a request error or an unclassified
# failure. Prints how the calls ended and three examples of each failure kind. The test command
# runs the same case with 400 seeds.
#   scripts/mutate.sh [COUNT]            on the system's libcurl
#   LIBCURL8=1 scripts/mutate.sh [COUNT] on libcurl 8 (scripts/libcurl8.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
# The contributors' build: the test server, benchmark, examples and every trait (Package.swift).
export COURIER_DEVELOPMENT=1
count="${1:-10000}"
case "$count" in '' | *[!0-9]*) echo "usage: scripts/mutate.sh [COUNT]" >&2; exit 2 ;; esac
scripts/install-deps.sh
swift build --build-tests
if [ "${LIBCURL8:-0}" = 1 ]; then
  export LD_LIBRARY_PATH="$(scripts/libcurl8.sh)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
COURIER_MUTATIONS="$count" COURIER_URLSESSION_MUTATIONS="$count" \
  swift test --skip-build --filter "mutatedResponse|URLSessionMutationSweepTests"
