#!/usr/bin/env bash
# Regenerates the OpenAPI example's client (Examples/OpenAPIExample/InventoryClient) from
# Examples/OpenAPIExample/openapi.yaml with swift-openapi-generator 1.14.3, built in a package of
# its own (scripts/openapi-generator), so the root build never compiles the generator.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tool="$root/scripts/openapi-generator"
example="$root/Examples/OpenAPIExample"
swift build --package-path "$tool" --product swift-openapi-generator -c release
generator="$(swift build --package-path "$tool" --product swift-openapi-generator -c release --show-bin-path)/swift-openapi-generator"
"$generator" generate "$example/openapi.yaml" \
    --config "$example/openapi-generator-config.yaml" \
    --output-directory "$example/InventoryClient"
echo "generated: $(ls "$example/InventoryClient")"
