// swift-tools-version:6.2
import PackageDescription

// A small Hummingbird 2 service that calls two downstream APIs through Courier. It is a package of
// its own, so the root package's build never compiles Hummingbird or swift-prometheus;
// `smoke-test.sh` builds and tries it.
let package = Package(
    name: "courier-service-example",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "courier-service-example", targets: ["CourierServiceExample"])
    ],
    dependencies: [
        // The adapters it uses are behind traits; the loopback stand-ins for the downstream APIs
        // (CourierTestServer) are in the contributors' build (`smoke-test.sh` sets COURIER_DEVELOPMENT).
        .package(name: "courier", path: "../..", traits: ["SwiftConfiguration", "ServiceLifecycle"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        .executableTarget(
            name: "CourierServiceExample",
            dependencies: [
                .product(name: "Courier", package: "courier"),
                .product(name: "CourierCurl", package: "courier"),
                .product(name: "CourierURLSession", package: "courier"),
                .product(name: "CourierConfiguration", package: "courier"),
                .product(name: "CourierServiceLifecycle", package: "courier"),
                .product(name: "CourierTestServer", package: "courier"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        )
    ]
)
