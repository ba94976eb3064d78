#!/usr/bin/env bash
# Exact runtime calls per call, over the whole client process (every thread), from perf uprobes:
# swift_retain, swift_release, malloc, swift_task_switch and pthread_mutex_lock. Needs perf and
# root (uprobes). Each count is (calls in a long run - calls in a short run) / the difference, so
# start-up cancels out.
#
#   scripts/count.sh BENCH mock                 # the client stack alone: 70,000 - 20,000 calls, c64
#   scripts/count.sh BENCH curl-engine URL      # a transport against a server in another process
#                                               # (15,000 - 5,000 calls, c16), e.g. http://127.0.0.1:PORT/
# BENCH is a courier-bench binary (release build: .build/release/courier-bench).
set -euo pipefail
bench=${1:?usage: scripts/count.sh BENCH TRANSPORT [URL]}
transport=${2:?usage: scripts/count.sh BENCH TRANSPORT [URL]}
url=${3:-}
swiftlib=$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift/linux
libc=$(ldconfig -p | awk '/libc.so.6 / {print $NF; exit}')
probe() { perf probe -q -x "$1" "$2" 2>/dev/null || true; }
probe "$swiftlib/libswiftCore.so" swift_retain
probe "$swiftlib/libswiftCore.so" swift_release
probe "$swiftlib/libswift_Concurrency.so" swift_task_switch
probe "$libc" malloc
probe "$libc" pthread_mutex_lock
events=probe_libswiftCore:swift_retain,probe_libswiftCore:swift_release,probe_libc:malloc,probe_libswift_Concurrency:swift_task_switch,probe_libc:pthread_mutex_lock
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [ -z "$url" ]; then short=20000; long=70000; args=(--scenarios small --http 1.1 --concurrency 64 --pin)
else short=5000; long=15000; args=(--url "$url" --concurrency 16); fi
for n in $short $long; do
  perf stat -x, -e "$events" -o "$out/$n" -- "$bench" run --transports "$transport" "${args[@]}" --repeat 1 \
    --requests "$n" --warmup 0 --duration 60 > "$out/run.$n" 2>&1
done
python3 - "$out" "$short" "$long" <<'PY'
import sys
out, short, long = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def read(n):
    counts = {}
    for line in open(f"{out}/{n}"):
        parts = line.strip().split(",")
        if len(parts) > 3 and parts[0].replace(".", "").isdigit():
            counts[parts[2].split(":")[-1]] = float(parts[0])
    return counts
a, b = read(short), read(long)
print(" ".join(f"{k}={(b[k] - a[k]) / (long - short):.1f}" for k in b))
PY
