#!/usr/bin/env bash
# Courier's main job: courier-bench on its embedded loopback server (HTTP/1.1, cleartext HTTP/2 and
# HTTP/2 over TLS), comparing curl, urlsession, ahc, the mock and the C reference on libcurl, with
# wrk and h2load as the physical limit. About three minutes on a 2-core machine, after the build.
#
#   scripts/bench.sh                      # the default comparison, pinned, report in bench-report/
#   scripts/bench.sh run --full --json results.json
#   scripts/bench.sh probe https://example.internal/health
#
# See BENCHMARKS.md for every option and what each figure means.
set -euo pipefail
cd "$(dirname "$0")/.."
# The contributors' build: the test server, benchmark, examples and every trait (Package.swift).
export COURIER_DEVELOPMENT=1
scripts/install-deps.sh --bench
swift build -c release --product courier-bench
bench="$(swift build -c release --show-bin-path)/courier-bench"
if [ "$#" -eq 0 ]; then
  set -- run --pin --report bench-report
fi
exec "$bench" "$@"
