#!/usr/bin/env bash
# Runs Courier's libFuzzer targets (Fuzz/CourierFuzz): each parser that reads what a server or a
# configuration file sends, under AddressSanitizer, for a given time, from its committed seed corpus.
#
#   scripts/fuzz.sh                      # every target for 60 s
#   scripts/fuzz.sh all 5                # every target for 5 s (what scripts/test.sh runs)
#   scripts/fuzz.sh response-head 600    # one target for 10 minutes
#
# The build is separate (COURIER_FUZZ=1 adds the target, in .build-fuzz), so the normal build and
# CI never compile it. New inputs go to .build-fuzz/corpus/<target>; a crash is written to
# .build-fuzz/artifacts/ and the script exits non-zero. Add a crash's input to the target's seed
# corpus (Fuzz/Corpus/<target>) and a regression test once it is fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
# The contributors' build: the test server, benchmark, examples and every trait (Package.swift).
export COURIER_DEVELOPMENT=1
scripts/install-deps.sh
targets=(response-head location cache-headers configuration retry-after url decompression xml set-cookie event-stream json-lines content-range proxy unix-url)
if [ "$#" -ge 1 ] && [ "$1" != all ]; then targets=("$1"); fi
seconds="${2:-60}"
export COURIER_FUZZ=1
flags=(-c debug --scratch-path .build-fuzz --product CourierFuzz
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld)
swift build "${flags[@]}"
binary="$(swift build "${flags[@]}" --show-bin-path)/CourierFuzz"
# A crash is libFuzzer's to report: Swift's backtracer would symbolicate for minutes first.
export SWIFT_BACKTRACE=enable=no
# Leaks that are not Courier's (each explained in the file) do not stop a run.
export LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan-suppressions.txt:print_suppressions=0"
mkdir -p .build-fuzz/artifacts
status=0
for target in "${targets[@]}"; do
  echo "== $target for ${seconds}s"
  corpus=".build-fuzz/corpus/$target"
  mkdir -p "$corpus"
  COURIER_FUZZ_TARGET="$target" "$binary" "$corpus" "Fuzz/Corpus/$target" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=65536 -artifact_prefix=".build-fuzz/artifacts/$target-" -print_final_stats=1 2>&1 \
    | grep -E "^#[0-9]+ *(INITED|DONE)|stat::number_of_executed_units|stat::peak_rss_mb|ERROR|SUMMARY|Test unit written|==[0-9]+==" \
    || true
  if ls .build-fuzz/artifacts/"$target"-* >/dev/null 2>&1; then status=1; fi
done
exit "$status"
