#!/usr/bin/env bash
# Runs the whole test suite under ThreadSanitizer (default) or AddressSanitizer:
#   scripts/sanitize.sh thread|address
# Each sanitizer builds into its own folder (.build-tsan, .build-asan), ignored by git.
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-thread}"
case "$kind" in
  thread) scratch=.build-tsan ;;
  address) scratch=.build-asan ;;
  *) echo "usage: scripts/sanitize.sh thread|address" >&2; exit 2 ;;
esac
scripts/install-deps.sh
if [ "$kind" = address ]; then
  # LeakSanitizer reports about 1.8 KB that XCTest's own runner and unsymbolized system libraries
  # never free (no Courier frame among them); set ASAN_OPTIONS yourself to see it.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
fi
swift test --sanitize="$kind" --scratch-path "$scratch"
