// swift-tools-version:6.1
// Micro-benchmarks of Courier's middleware, kept out of the root package so that building and
// testing Courier never compiles package-benchmark. Run from this directory:
//
//   swift package --allow-writing-to-package-directory benchmark --target MiddlewareOverhead
import PackageDescription

let package = Package(
    name: "MiddlewareBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Courier", path: "../.."),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "MiddlewareOverhead",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierMock", package: "Courier"),
                .product(name: "CourierAlerts", package: "Courier"),
            ],
            path: "Benchmarks/MiddlewareOverhead",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ChainProfile",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "CourierMock", package: "Courier"),
                .product(name: "CourierAlerts", package: "Courier"),
            ],
            path: "Sources/ChainProfile"
        ),
        // The concurrency runtime's own cost of handing a call to another thread and back (no
        // Courier): the floor under every async transport.
        .executableTarget(
            name: "AsyncFloor",
            path: "Sources/AsyncFloor"
        ),
    ]
)
