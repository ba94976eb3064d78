#!/usr/bin/env bash
# Runs the whole test suite, installing missing system packages first: `swift test` in the
# contributors' build (COURIER_DEVELOPMENT=1, every trait; the suites that need a process of their
# own run themselves in a child test process: IsolatedSuiteTests); then plain `swift test` (the
# core's own suites, no traits); then the OpenAPI example; then the example service's smoke test, the first
# service's check (Examples/FirstService) and the DocC catalogs (scripts/docs.sh); then a
# 1,000-call soak per transport (scripts/soak.sh); then the transport tests (curl, and urlsession,
# which runs on libcurl too) a second time against libcurl 8 when the system's is older (Debian 12:
# 7.88.1; scripts/libcurl8.sh fetches 8.x from bookworm-backports); then each fuzz target for 5 s
# under AddressSanitizer (scripts/fuzz.sh). The curl transport's cancel-racing-completion stress test
# under ThreadSanitizer and AddressSanitizer (scripts/stress.sh) is not part of it: each sanitizer
# is a 9-to-10-minute build of its own on 2 cores, and with the TSan one the whole run took 32
# minutes, past CI's 30. COURIER_STRESS=1 adds it (`scripts/stress.sh thread`).
# COURIER_SKIP_STRESS=1 skips the fuzz run (for a quick local loop; CI never sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
# The contributors' build: the test server, benchmark, examples and every trait (Package.swift).
export COURIER_DEVELOPMENT=1
scripts/install-deps.sh
# A crashing test process gets a short backtrace of the crashed thread: the default (full
# symbolication of every thread of a large debug binary) spun for ten minutes on this machine.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=yes,interactive=no,symbolicate=fast,threads=crashed,timeout=60s}"
# Runs one test command; when it fails, repeats the issues it recorded at the end of the output, so
# that the tail of a long log (all CI keeps) names what failed and where.
run_tests() {
  local log
  log="$(mktemp)"
  if "$@" 2>&1 | tee "$log"; then
    rm -f "$log"
    return 0
  fi
  echo "== failed: $*"
  grep -A4 "recorded an issue\|Test run with.*failed\|error:\|Fatal error\|Program crashed" "$log" | head -60 || true
  # A crash: the crashed thread's frames.
  grep -A25 "^Thread .* crashed:" "$log" | head -30 || true
  rm -f "$log"
  return 1
}
# Every suite, with every trait on (the contributors' build; plain `swift test` outside it runs the
# core's own suites, which need no test server and no optional adapter).
swift build --build-tests
run_tests swift test --skip-build
# The core's own suites as plain `swift test` runs them in a service's checkout: no contributors'
# build, no trait, in a scratch directory of its own (about 1.5 minutes from nothing).
echo "== plain swift test: the core's own suites, no traits"
env -u COURIER_DEVELOPMENT swift build --build-tests --scratch-path .build-notrait
run_tests env -u COURIER_DEVELOPMENT swift test --skip-build --scratch-path .build-notrait
# The OpenAPI example: the generated client's every operation over each transport against the
# loopback server (a few seconds).
echo "== the OpenAPI example"
.build/debug/courier-openapi-example
# The example service (a nested package: Hummingbird, swift-prometheus) is built and tried over
# curl and urlsession: its routes, its metrics and a clean stop on SIGTERM.
Examples/ServiceExample/smoke-test.sh
# A service's first day, from a nested package that depends on Courier and CourierCurl by path: the
# packages it resolves, and its release build run against a loopback file server (the transport
# discovery must find curl in a release build; an ISO 8601 answer decodes with one line).
Examples/FirstService/check.sh
# The DocC catalogs, failing on any warning (an unresolved symbol link, a missing article).
scripts/docs.sh
# A short faulty-network soak per transport (about 5 s each): nothing lost, nothing completed twice,
# no unkeyed POST sent twice, descriptors back (scripts/soak.sh; the long run is recorded in
# docs/ROBUSTNESS.md).
echo "== soak, 1,000 calls per transport"
scripts/soak.sh 1000
libcurl8="$(scripts/libcurl8.sh)"
if [ -n "$libcurl8" ]; then
  echo "== transport tests against libcurl 8 ($libcurl8)"
  export COURIER_EXPECT_LIBCURL_MAJOR=8 LD_LIBRARY_PATH="$libcurl8${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  run_tests swift test --skip-build --filter CourierTransportTests
  unset COURIER_EXPECT_LIBCURL_MAJOR LD_LIBRARY_PATH
  LIBCURL8=1 scripts/soak.sh 1000 curl
fi
if [ "${COURIER_STRESS:-0}" = 1 ]; then
  scripts/stress.sh thread
fi
if [ "${COURIER_SKIP_STRESS:-0}" != 1 ]; then
  # Every libFuzzer target for a few seconds from its seed corpus, under AddressSanitizer (about a
  # minute with the build; the long runs are scripts/fuzz.sh's, recorded in docs/ROBUSTNESS.md).
  echo "== fuzz targets, 5 s each"
  scripts/fuzz.sh all 5
fi
