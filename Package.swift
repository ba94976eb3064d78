// swift-tools-version:6.2
import PackageDescription

/// The core and the fast adapters run their async functions on the caller's executor
/// (`nonisolated(nonsending)`, Swift 6.2's default for new code) instead of switching to the global
/// executor at every call: a call through `NetworkClient` and the curl transport went from 17
/// executor switches to 10. The public entry points that build and decode (`NetworkClient.response(for:)`,
/// `CallSequence.run(on:onStep:)`) are `@concurrent`, so they still never run on the caller's actor.
let callerIsolated: [SwiftSetting] = [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]

/// The contributors' build: `COURIER_DEVELOPMENT=1` (every script under `scripts/` sets it) adds the
/// loopback test server, the conformance suite, the benchmark, the examples, the probes and the
/// suites that need them, and turns every trait on by default. A service that depends on Courier
/// sees none of it, so its resolution holds only the core's four packages (and what the traits it
/// turns on bring): SwiftPM resolves every package a manifest names, whichever products are used,
/// except those only a disabled trait uses. Without it, `swift test` runs the core's own suites.
let development = Context.environment["COURIER_DEVELOPMENT"] == "1"

/// The optional adapters: each trait brings its one package into a service's resolution.
let optionalTraits: Set<String> = ["AsyncHTTPClient", "XML", "OpenAPI", "SwiftConfiguration", "ServiceLifecycle", "Tracing"]

/// The Swift Package Index builds the documentation with this set: every adapter's symbols.
let indexBuildsDocs = Context.environment["SPI_GENERATE_DOCS"] != nil

/// An optional adapter's package product: with its trait in a service's build; always in the
/// contributors' build, so that `--traits` (which replaces the default traits) cannot leave the
/// suites, examples and benchmark that use the adapter without it.
func optional(_ product: String, from package: String, trait: String) -> Target.Dependency {
    .product(name: product, package: package, condition: development ? nil : .when(traits: [trait]))
}

/// The adapter's sources are inside `#if <trait>`; the contributors' build defines it whatever
/// traits are on (see ``optional(_:from:trait:)``).
func adapterSettings(trait: String, _ settings: [SwiftSetting] = []) -> [SwiftSetting] {
    development ? settings + [.define(trait)] : settings
}

let package = Package(
    name: "Courier",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        .library(name: "CourierMock", targets: ["CourierMock"]),
        .library(name: "CourierAlerts", targets: ["CourierAlerts"]),
        .library(name: "CourierTracing", targets: ["CourierTracing"]),
        .library(name: "CourierCookies", targets: ["CourierCookies"]),
        .library(name: "CourierStreaming", targets: ["CourierStreaming"]),
        .library(name: "CourierCache", targets: ["CourierCache"]),
        .library(name: "CourierResilience", targets: ["CourierResilience"]),
        .library(name: "CourierCurl", targets: ["CourierCurl"]),
        .library(name: "CourierURLSession", targets: ["CourierURLSession"]),
        .library(name: "CourierAsyncHTTPClient", targets: ["CourierAsyncHTTPClient"]),
        .library(name: "CourierXML", targets: ["CourierXML"]),
        .library(name: "CourierOpenAPI", targets: ["CourierOpenAPI"]),
        .library(name: "CourierConfiguration", targets: ["CourierConfiguration"]),
        .library(name: "CourierServiceLifecycle", targets: ["CourierServiceLifecycle"]),
    ],
    // Each optional adapter is behind a trait named for what it brings, so a service compiles (and
    // resolves) only the packages of the adapters it uses:
    // `.package(url: ..., branch: "main", traits: ["XML"])`, or `swift build --traits XML`.
    traits: [
        .trait(name: "AsyncHTTPClient", description: "Builds AsyncHTTPClientTransport (registered as `ahc`)."),
        .trait(name: "XML", description: "Builds CourierXML: XML and SOAP bodies and answers (XMLCoder)."),
        .trait(name: "OpenAPI", description: "Builds CourierOpenAPI: generated OpenAPI clients over Courier (swift-openapi-runtime)."),
        .trait(name: "SwiftConfiguration", description: "Builds CourierConfiguration: ClientConfiguration from swift-configuration."),
        .trait(name: "ServiceLifecycle", description: "Builds CourierServiceLifecycle: a client as a swift-service-lifecycle Service."),
        .trait(name: "Tracing", description: "Builds CourierTracing: a client span per call (swift-distributed-tracing)."),
        .default(enabledTraits: development || indexBuildsDocs ? optionalTraits : []),
    ],
    dependencies: [
        // The core's.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // The optional adapters' and wings' (each resolved only with its trait on).
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/CoreOffice/XMLCoder.git", from: "0.18.2"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // The core: API objects, client, middleware chain, errors. No FoundationNetworking, libcurl or NIO.
        // The system zlib (Debian: zlib1g-dev): the core decodes gzip and deflate bodies with it.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "Courier",
            dependencies: [
                "CZlib",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                // An API-only package (no backend): the service picks the metrics backend.
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: callerIsolated
        ),
        // Failure alerts, a wing: a `CallObserver` that classifies failures and tells a sink (closure,
        // log, webhook) when a rule trips. A module of its own, linked only by services that alert.
        .target(
            name: "CourierAlerts",
            dependencies: [
                "Courier",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: callerIsolated
        ),
        // Tracing, a wing (trait `Tracing`): `TracingMiddleware`, a client span per call
        // (swift-distributed-tracing, an API-only package: the service picks the backend), and
        // `TraceParent`. Services that do not trace never resolve swift-distributed-tracing.
        .target(
            name: "CourierTracing",
            dependencies: [
                "Courier",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                optional("Tracing", from: "swift-distributed-tracing", trait: "Tracing"),
            ],
            swiftSettings: adapterSettings(trait: "Tracing", callerIsolated)
        ),
        // Cookies, a wing: `CookieJar` (RFC 6265) around each hop, turned on by `keepsCookies` (the key
        // `cookies`), and its public suffixes. Only services that keep cookies link it (and libpsl).
        // libpsl (Debian: libpsl-dev), the Public Suffix List as curl reads it: the jar's domain rule.
        .systemLibrary(name: "CPSL", path: "Sources/CPSL", pkgConfig: "libpsl", providers: [.apt(["libpsl-dev"]), .brew(["libpsl"])]),
        .target(
            name: "CourierCookies",
            dependencies: ["Courier", "CPSL", .product(name: "HTTPTypes", package: "swift-http-types")],
            swiftSettings: callerIsolated
        ),
        // Streaming, a wing: downloads to disk (resumed, verified), server-sent events (reconnecting)
        // and JSON Lines, each a reading over the core's streamed call. Linked only by services that
        // read such answers.
        .target(
            name: "CourierStreaming",
            dependencies: [
                "Courier", .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: callerIsolated
        ),
        // The response cache, a wing: HTTP caching (RFC 9111) in memory or on disk, a link around each
        // hop when `ClientConfiguration.cache` (the `cache` keys) is set.
        .target(
            name: "CourierCache",
            dependencies: [
                "Courier", .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: callerIsolated
        ),
        // The circuit breaker and hedging, a wing: their links below retry when the configuration's
        // `resilience` has their policies (which, with their keys, are the core's).
        .target(
            name: "CourierResilience",
            dependencies: [
                "Courier", .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "CoreMetrics", package: "swift-metrics"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: callerIsolated
        ),
        // Adapters: each depends on the core only.
        .target(
            name: "CourierMock",
            dependencies: ["Courier"],
            path: "Adapters/CourierMock",
            swiftSettings: callerIsolated
        ),
        .target(
            name: "CourierURLSession",
            dependencies: ["Courier"],
            path: "Adapters/CourierURLSession"
        ),
        .target(
            name: "CourierAsyncHTTPClient",
            dependencies: [
                "Courier",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOHTTP2", package: "swift-nio-http2", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
            ],
            path: "Adapters/CourierAsyncHTTPClient"
        ),
        // libcurl: a system library (Debian: libcurl4-openssl-dev, libnghttp2-dev) and the transport on it.
        .systemLibrary(
            name: "CCurl",
            path: "Adapters/CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev", "libnghttp2-dev"])]
        ),
        .target(
            name: "CourierCurl",
            dependencies: ["Courier", "CCurl", .product(name: "Logging", package: "swift-log")],
            path: "Adapters/CourierCurl",
            swiftSettings: callerIsolated
        ),
        // XML and SOAP (trait `XML`), so JSON-only services never resolve or compile XMLCoder. The
        // core finds it at run time (by type name) to decode XML responses automatically.
        .target(
            name: "CourierXML",
            dependencies: [
                "Courier",
                optional("XMLCoder", from: "XMLCoder", trait: "XML"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: adapterSettings(trait: "XML", callerIsolated)
        ),
        // swift-openapi-runtime (trait `OpenAPI`): `CourierClientTransport`, a generated client's
        // `ClientTransport` over NetworkClient.
        .target(
            name: "CourierOpenAPI",
            dependencies: [
                "Courier",
                optional("OpenAPIRuntime", from: "swift-openapi-runtime", trait: "OpenAPI"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Adapters/CourierOpenAPI",
            swiftSettings: adapterSettings(trait: "OpenAPI")
        ),
        // swift-configuration (trait `SwiftConfiguration`): `ClientConfiguration(reader:)`.
        .target(
            name: "CourierConfiguration",
            dependencies: [
                "Courier",
                optional("Configuration", from: "swift-configuration", trait: "SwiftConfiguration"),
            ],
            path: "Adapters/CourierConfiguration",
            swiftSettings: adapterSettings(trait: "SwiftConfiguration")
        ),
        // swift-service-lifecycle (trait `ServiceLifecycle`): `NetworkClientService`.
        .target(
            name: "CourierServiceLifecycle",
            dependencies: [
                "Courier",
                optional("ServiceLifecycle", from: "swift-service-lifecycle", trait: "ServiceLifecycle"),
            ],
            path: "Adapters/CourierServiceLifecycle",
            swiftSettings: adapterSettings(trait: "ServiceLifecycle")
        ),
        // What the suites share that needs no server: `eventually`, `expectNetworkError`, seeded
        // randomness, pattern bodies, test compression, an observer that records calls. Not a product.
        .target(
            name: "CourierTestSupport",
            dependencies: ["Courier", "CZlib"],
            path: "Sources/CourierTestSupport"
        ),
        // The core's suites (the mock and manual clocks only). The ones that need the loopback
        // server or an optional adapter are in `WithServer/`, built in the contributors' build only.
        .testTarget(
            name: "CourierTests",
            dependencies: [
                "Courier", "CourierMock", "CourierAlerts", "CourierTracing", "CourierCookies", "CourierStreaming", "CourierCache", "CourierResilience", "CourierTestSupport",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                // The tracing wing's suite is inside `#if Tracing`.
                optional("Tracing", from: "swift-distributed-tracing", trait: "Tracing"),
                optional("InMemoryTracing", from: "swift-distributed-tracing", trait: "Tracing"),
            ],
            exclude: development ? [] : ["WithServer"],
            swiftSettings: adapterSettings(trait: "Tracing")
        ),
    ]
)

// The contributors' build (see `development`): what the repository develops and measures Courier
// with, never part of a service's resolution.
if development {
    package.products += [
        // The conformance suite and the loopback server it runs against, so a transport outside
        // this package can run it too (with COURIER_DEVELOPMENT=1, see WritingATransport.md); the
        // server-free helpers (`expectNetworkError`, `eventually`) come with it (`CourierTestSupport`).
        .library(name: "CourierConformance", targets: ["CourierConformance", "CourierTestSupport"]),
        .library(name: "CourierTestServer", targets: ["CourierTestServer"]),
        .executable(name: "courier-example", targets: ["CourierExample"]),
        .executable(name: "courier-calculator", targets: ["CalculatorExample"]),
        .executable(name: "courier-openapi-example", targets: ["OpenAPIExample"]),
        .executable(name: "courier-bench", targets: ["CourierBench"]),
    ]
    package.dependencies += [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
    ]
    package.targets += [
        // In-process loopback HTTP server used by the tests, the example and (later) courier-bench.
        .target(
            name: "CourierTestServer",
            dependencies: [
                "CZlib", "CourierTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // The conformance suite: every transport runs the same cases against the loopback server.
        // A library, so adapters outside this package can run it too.
        .target(
            name: "CourierConformance",
            dependencies: [
                "Courier", "CourierCookies", "CourierStreaming", "CourierCache", "CourierResilience", "CourierTestServer",
                "CourierTestSupport",
            ]
        ),
        // Moves one large body through one transport in a process of its own and prints how much
        // that process grew: the large-body conformance cases run it (a test process's own memory
        // moves with every test running beside it).
        .executableTarget(
            name: "CourierMemoryProbe",
            dependencies: [
                "CourierTestSupport", "CourierStreaming",
                "Courier", "CourierCurl", "CourierURLSession", "CourierAsyncHTTPClient", "CourierTestServer", "CourierOpenAPI",
                "InventoryClient", .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            path: "Tests/CourierMemoryProbe"
        ),
        // Runs a client through many kinds of calls and shuts it down, in a process of its own, and
        // reports the descriptors and threads left (HygieneTests).
        .executableTarget(
            name: "CourierHygieneProbe",
            dependencies: ["Courier", "CourierCurl", "CourierURLSession", "CourierAsyncHTTPClient", "CourierTestServer"],
            path: "Tests/CourierHygieneProbe"
        ),
        // Fails libcurl's allocations one at a time, in a process of its own (AllocationFailureTests).
        .executableTarget(
            name: "CourierAllocationProbe",
            dependencies: ["Courier", "CourierCurl", .product(name: "HTTPTypes", package: "swift-http-types")],
            path: "Tests/CourierAllocationProbe"
        ),
        // Makes one call through URLSessionTransport in a process of its own: the faults that crash
        // FoundationNetworking are tested through it (URLSessionCrashTests).
        .executableTarget(
            name: "CourierURLSessionProbe",
            dependencies: ["Courier", "CourierURLSession"],
            path: "Tests/CourierURLSessionProbe"
        ),
        // Bootstraps a global tracer, then makes one traced call through one transport in a process of
        // its own (the bootstrap is process-wide and once only): TracingBootstrapTests runs it.
        .executableTarget(
            name: "CourierTracingProbe",
            dependencies: [
                "Courier", "CourierTracing", "CourierCurl", "CourierURLSession", "CourierAsyncHTTPClient", "CourierTestServer",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/CourierTracingProbe"
        ),
        .executableTarget(
            name: "CourierExample",
            dependencies: [
                "CourierAlerts", "CourierTracing",
                "Courier", "CourierMock", "CourierURLSession", "CourierCurl", "CourierAsyncHTTPClient", "CourierTestServer",
            ],
            path: "Examples/CourierExample",
            exclude: ["README.md"]
        ),
        // The Calculator SOAP example: the loopback stand-in by default, `--soap-url` for another service.
        .executableTarget(
            name: "CalculatorExample",
            dependencies: [
                "Courier", "CourierXML", "CourierMock", "CourierURLSession", "CourierCurl", "CourierAsyncHTTPClient",
                "CourierTestServer", .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Examples/CalculatorExample",
            exclude: ["README.md"]
        ),
        // The OpenAPI example: the client swift-openapi-generator made from
        // Examples/OpenAPIExample/openapi.yaml (committed; scripts/generate-openapi.sh remakes it),
        // and a program that calls it over every transport against the loopback server.
        .target(
            name: "InventoryClient",
            dependencies: [.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
            path: "Examples/OpenAPIExample/InventoryClient",
            // Generated code, never edited: every generated file imports Data, Date and URL
            // publicly whether it uses them or not, with `@diagnose(UnusedImportAccess, as:
            // ignored)` that only Swift 6.4 understands. Its warnings are silenced here, and only here.
            swiftSettings: [.unsafeFlags(["-suppress-warnings"])]
        ),
        .executableTarget(
            name: "OpenAPIExample",
            dependencies: [
                "CourierTestSupport",
                "Courier", "CourierOpenAPI", "InventoryClient", "CourierMock", "CourierURLSession", "CourierCurl",
                "CourierAsyncHTTPClient", "CourierTestServer", .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Examples/OpenAPIExample/Example"
        ),
        // courier-bench: compares the transports through NetworkClient, each in its own process.
        // The C reference loop: libcurl multi with no Courier code, the floor the curl transport is held to.
        .target(
            name: "CCurlReference",
            path: "Benchmarks/CurlReference",
            linkerSettings: [.linkedLibrary("curl")]
        ),
        // Everything the tool does, as a library so that its tests can drive it.
        .target(
            name: "CourierBenchKit",
            dependencies: [
                "Courier", "CourierCurl", "CourierURLSession", "CourierMock", "CourierAsyncHTTPClient", "CourierTestServer",
                "CourierCache", "CourierResilience", "CourierXML", "CCurlReference", "CourierOpenAPI", "InventoryClient",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(
                    name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client",
                    condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "Benchmarks/CourierBenchKit"
        ),
        .executableTarget(
            name: "CourierBench",
            dependencies: ["CourierBenchKit", .product(name: "Logging", package: "swift-log")],
            path: "Benchmarks/CourierBench"
        ),
        .testTarget(
            name: "CourierBenchTests",
            dependencies: [
                "CourierBenchKit", "CourierTestServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "CourierXMLTests",
            dependencies: [
                "CourierTestSupport",
                "Courier", "CourierXML", "CourierMock", "CourierURLSession", "CourierCurl", "CourierAsyncHTTPClient",
                "CourierTestServer", "CourierConformance",
                .product(name: "XMLCoder", package: "XMLCoder"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // The README's and the articles' Swift snippets, compiled (see ReadmeSnippetTests.swift).
        .testTarget(
            name: "ReadmeSnippetTests",
            dependencies: [
                "CourierAlerts", "CourierTracing", "CourierCache",
                "Courier", "CourierURLSession", "CourierCurl", "CourierXML", "CourierOpenAPI", "InventoryClient", "CourierMock",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "CourierTransportTests",
            dependencies: [
                "CourierTestSupport",
                "Courier", "CourierMock", "CourierURLSession", "CourierCurl", "CourierAsyncHTTPClient", "CourierConformance",
                "CourierTestServer", "CourierOpenAPI", "InventoryClient", "CourierTracing", "CourierStreaming", "CourierCache",
                "CourierResilience",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
    ]
    // The core's suites that need the loopback server or an optional adapter (`WithServer/`).
    for target in package.targets where target.name == "CourierTests" {
        target.dependencies += [
            "CourierTestServer", "CourierConformance", "CourierConfiguration", "CourierServiceLifecycle",
            .product(name: "Configuration", package: "swift-configuration"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
        ]
    }
}

// The same language settings for every target.
for target in package.targets where target.type != .system && !["CCurlReference", "InventoryClient"].contains(target.name) {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}

// The documentation plugin only when `scripts/docs.sh` asks for it, so that building and testing
// never fetch or compile it.
if Context.environment["COURIER_DOCS"] == "1" {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"))
}

// The libFuzzer targets only when `scripts/fuzz.sh` asks for them: they link only with
// `-sanitize=fuzzer`, which the normal build does not use (in the contributors' build: they use
// CourierXML's internals).
if development && Context.environment["COURIER_FUZZ"] == "1" {
    package.targets.append(
        .executableTarget(
            name: "CourierFuzz", dependencies: ["Courier", "CourierCookies", "CourierStreaming", "CourierCache", "CCurl", "CourierCurl", "CourierXML"], path: "Fuzz/CourierFuzz",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]))
}
