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
swift test --sanitize="$kind" --scratch-path "$scratch"
