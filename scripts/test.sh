#!/usr/bin/env bash
# Runs the whole test suite, installing missing system packages first, then the curl transport's
# cancel-racing-completion stress test under ThreadSanitizer and AddressSanitizer (scripts/stress.sh).
# COURIER_SKIP_STRESS=1 skips the sanitizer runs (for a quick local loop; CI never sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The AsyncHTTPClient transport is behind a package trait; the tests run its conformance cases too.
swift build --build-tests --traits AsyncHTTPClient
swift test --skip-build --traits AsyncHTTPClient
if [ "${COURIER_SKIP_STRESS:-0}" != 1 ]; then
  scripts/stress.sh
fi
