#!/usr/bin/env bash
# Runs the whole test suite, installing missing system packages first (the real-clock conformance
# cases alone, after the rest); then the transport tests
# (curl, and urlsession, which runs on libcurl too) a second time against libcurl 8 when the
# system's is older (Debian 12: 7.88.1; scripts/libcurl8.sh fetches 8.x from bookworm-backports);
# then the curl transport's cancel-racing-completion stress test under ThreadSanitizer and
# AddressSanitizer (scripts/stress.sh).
# COURIER_SKIP_STRESS=1 skips the sanitizer runs (for a quick local loop; CI never sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The AsyncHTTPClient transport is behind a package trait; the tests run its conformance cases too.
swift build --build-tests --traits AsyncHTTPClient
# The cases on the real clock (socket-level stall and connect limits, how fast cancellation and
# shutdown take effect) run on their own after the rest, so CPU-heavy cases cannot starve them.
realClock=ConformanceRealClockTests
swift test --skip-build --traits AsyncHTTPClient --skip "$realClock"
swift test --skip-build --traits AsyncHTTPClient --filter "$realClock"
libcurl8="$(scripts/libcurl8.sh)"
if [ -n "$libcurl8" ]; then
  echo "== transport tests against libcurl 8 ($libcurl8)"
  export COURIER_EXPECT_LIBCURL_MAJOR=8 LD_LIBRARY_PATH="$libcurl8${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  swift test --skip-build --traits AsyncHTTPClient --filter CourierTransportTests --skip "$realClock"
  swift test --skip-build --traits AsyncHTTPClient --filter "$realClock"
  unset COURIER_EXPECT_LIBCURL_MAJOR LD_LIBRARY_PATH
fi
if [ "${COURIER_SKIP_STRESS:-0}" != 1 ]; then
  scripts/stress.sh
fi
