// swift-tools-version:6.2
import PackageDescription

// A service's first day with Courier: the package line a service writes (the core and the curl
// transport, by path here), one configuration line for ISO 8601 dates, and no transport named.
// `check.sh` resolves it (counting the packages a service pulls in), builds it in release (where
// the transport discovery must still find curl) and runs it against a loopback file server.
let package = Package(
    name: "first-service",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "courier", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "FirstService",
            dependencies: [
                .product(name: "Courier", package: "courier"),
                .product(name: "CourierCurl", package: "courier"),
                .product(name: "CourierURLSession", package: "courier"),
            ]
        )
    ]
)
