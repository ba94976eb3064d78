#!/usr/bin/env bash
# Runs the tests under ThreadSanitizer (default) or AddressSanitizer:
#   scripts/sanitize.sh thread|address [swift test arguments, e.g. --filter CurlStressTests]
# Each sanitizer builds into its own folder (.build-tsan, .build-asan), ignored by git.
set -euo pipefail
cd "$(dirname "$0")/.."
# The contributors' build: the test server, benchmark, examples and every trait (Package.swift).
export COURIER_DEVELOPMENT=1
kind="${1:-thread}"
case "$kind" in
  thread) scratch=.build-tsan ;;
  address) scratch=.build-asan ;;
  *) echo "usage: scripts/sanitize.sh thread|address [swift test arguments]" >&2; exit 2 ;;
esac
shift || true
scripts/install-deps.sh
if [ "$kind" = address ]; then
  # LeakSanitizer reports about 1.8 KB that XCTest's own runner and unsymbolized system libraries
  # never free (no Courier frame among them); set ASAN_OPTIONS yourself to see it.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
fi
# halt_on_error: the first report fails the run (TSan otherwise only prints and exits 0 or 66).
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1}"
swift test --sanitize="$kind" --scratch-path "$scratch" "$@"
