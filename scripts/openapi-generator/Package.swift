// swift-tools-version:6.2
// Builds swift-openapi-generator's command-line tool for scripts/generate-openapi.sh, in a package
// of its own: the root package never compiles the generator (CI does not pay for it), and the
// generated code is committed.
import PackageDescription

let package = Package(
    name: "OpenAPIGeneratorTool",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator.git", exact: "1.14.3")
    ],
    targets: []
)
