#!/usr/bin/env bash
# What a new service pays to depend on Courier: makes a scratch package in a temporary directory
# that depends on this checkout by path, with the products `Courier` and `CourierCurl` only, and
# the README's three-line GET as its main.swift; resolves and builds it from nothing (its own
# .build), and prints how many packages SwiftPM fetched and how long resolving and the first
# debug build took. The README's "What you pay for each product" quotes its figures.
#   scripts/first-build.sh            # prints the packages and the times
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/Sources/FirstCall"
cat >"$scratch/Package.swift" <<EOF
// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "FirstCall",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "$root")],
    targets: [
        .executableTarget(
            name: "FirstCall",
            dependencies: [
                .product(name: "Courier", package: "$(basename "$root")"),
                .product(name: "CourierCurl", package: "$(basename "$root")"),
            ]
        )
    ]
)
EOF
cat >"$scratch/Sources/FirstCall/main.swift" <<'EOF'
import Courier

struct User: Decodable, Sendable { let id: Int; let name: String }

let client = try NetworkClient(baseURL: "http://127.0.0.1:1")
print("transport:", client.transport.name)
await client.shutdown()
EOF
cd "$scratch"
start=$(date +%s)
swift package resolve >/dev/null
resolved=$(date +%s)
swift build >/dev/null
built=$(date +%s)
packages=$(find .build/checkouts -mindepth 1 -maxdepth 1 -type d 2>/dev/null | xargs -rn1 basename | sort)
echo "packages fetched: $(echo "$packages" | grep -c . || true)"
echo "$packages" | sed 's/^/  /'
echo "resolve: $((resolved - start)) s, first debug build: $((built - resolved)) s"
echo "the three-line client runs on: $(.build/debug/FirstCall | sed 's/transport: //')"
