import Foundation

/// The targets for the transports, checked against the rows of one run.
public struct TargetCheck: Codable, Sendable, Equatable {
    /// What is checked, for example `curl ≥ 90% of reference`.
    public var target: String
    /// The cell, for example `small · HTTP/1.1 · c64`.
    public var cell: String
    /// The measured ratio or rate.
    public var measured: Double
    /// The bar it has to reach.
    public var required: Double
    /// Whether it reached it.
    public var met: Bool

    /// Checks every target the rows allow: cells where both sides ran without errors.
    static func check(_ rows: [ResultRow], pinned: Bool) -> [TargetCheck] {
        var checks: [TargetCheck] = []
        let byCell = Dictionary(grouping: rows.filter { $0.repeats > 0 && $0.rps > 0 }, by: \.cellKey)
        for key in byCell.keys.sorted() {
            guard let cellRows = byCell[key], let first = cellRows.first else { continue }
            let cell = "\(first.scenario) · HTTP/\(first.http) · c\(first.concurrency)"
            func rps(_ transport: BenchTransport) -> Double? {
                cellRows.first { $0.transport == transport.rawValue && !$0.hasErrors }?.rps
            }
            guard let curl = rps(.curl) else {
                if let mock = rps(.mock) { checks.append(mockCheck(mock, cell: cell, pinned: pinned)) }
                continue
            }
            if [16, 64].contains(first.concurrency), first.http != HTTPChoice.h2c.rawValue, let reference = rps(.reference) {
                for client in [BenchTransport.curl, .curlEngine] {
                    guard let rate = rps(client) else { continue }
                    checks.append(
                        TargetCheck(
                            target: "\(client.rawValue) ≥ 90% of the C reference", cell: cell, measured: rate / reference,
                            required: 0.9, met: rate / reference >= 0.9))
                }
            }
            if let ahc = rps(.ahc) {
                checks.append(
                    TargetCheck(target: "curl ≥ 2× AsyncHTTPClient", cell: cell, measured: curl / ahc, required: 2, met: curl / ahc >= 2))
            }
            if let urlSession = rps(.urlsession) {
                checks.append(
                    TargetCheck(
                        target: "curl ≥ 10× URLSession", cell: cell, measured: curl / urlSession, required: 10, met: curl / urlSession >= 10
                    ))
            }
            if let mock = rps(.mock) { checks.append(mockCheck(mock, cell: cell, pinned: pinned)) }
        }
        return checks
    }

    private static func mockCheck(_ rps: Double, cell: String, pinned: Bool) -> TargetCheck {
        TargetCheck(
            target: pinned ? "mock > 200,000 calls/s on one core" : "mock > 200,000 calls/s (not pinned: may use every core)",
            cell: cell, measured: rps, required: 200_000, met: rps > 200_000)
    }

    /// `0.36×` for ratios, `217,000/s` for rates.
    public var measuredText: String {
        required >= 1000 ? "\(Int(measured.rounded()))/s" : String(format: "%.2f×", measured)
    }
}
