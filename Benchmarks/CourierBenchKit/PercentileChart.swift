import Foundation

/// Latency by percentile as SVG, as HdrHistogram's plots draw it: one panel per cell, one line per
/// client, from p50 to p99.99 read from the row's merged histogram. Both axes are logarithmic: the
/// percentile axis spaces p90, p99, p99.9 and p99.99 evenly (by `1 / (1 - p)`), so a tail that one
/// p99 bar hides shows as a line turning up.
enum PercentileChart {
    /// The percentiles each line passes through.
    static let percentiles: [Double] = [50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99]

    /// One client's line in one cell: its latency in milliseconds at each of ``percentiles``.
    struct Line {
        var label: String
        var milliseconds: [Double]
    }

    /// The lines of each cell with a histogram, in the rows' order; rows without recorded
    /// latencies (unsupported, or every call failed) draw nothing.
    static func panels(_ rows: [ResultRow]) -> [(title: String, lines: [Line])] {
        var panels: [(title: String, lines: [Line])] = []
        for row in rows where row.repeats > 0 {
            guard let histogram = row.latencyHistogram, histogram.count > 0 else { continue }
            let values = percentiles.compactMap { histogram.microseconds(atPercentile: $0).map { max($0, 1) / 1000 } }
            let line = Line(label: row.transport, milliseconds: values)
            if panels.last?.title == row.cellTitle {
                panels[panels.count - 1].lines.append(line)
            } else {
                panels.append((row.cellTitle, [line]))
            }
        }
        return panels
    }

    /// The percentile axis position of `percentile`: `log10(1 / (1 - p))`, 0.3 for p50, 4 for p99.99.
    static func position(_ percentile: Double) -> Double {
        log10(1 / (1 - percentile / 100))
    }

    /// Renders every cell's panel, top to bottom.
    static func render(_ rows: [ResultRow]) -> String {
        let width = 900.0
        let panelHeight = 240.0
        let left = 70.0
        let right = width - 130
        var body: [String] = []
        var top = 40.0
        let panels = panels(rows)
        for panel in panels {
            let plotTop = top + 24
            let plotBottom = top + panelHeight - 30
            let all = panel.lines.flatMap(\.milliseconds)
            // Whole decades around the values, so the grid lines are 0.1, 1, 10 ms …
            let lowest = floor(log10(all.min() ?? 0.1))
            let highest = max(ceil(log10(all.max() ?? 1)), lowest + 1)
            let xFirst = position(percentiles[0])
            let xLast = position(percentiles[percentiles.count - 1])
            func x(_ percentile: Double) -> Double { left + (right - left) * (position(percentile) - xFirst) / (xLast - xFirst) }
            func y(_ milliseconds: Double) -> Double {
                plotBottom - (plotBottom - plotTop) * (log10(milliseconds) - lowest) / (highest - lowest)
            }
            body.append(#"<text x="10" y="\#(top + 14)" font-weight="bold">\#(SVGChart.escape(panel.title))</text>"#)
            for decade in stride(from: lowest, through: highest, by: 1) {
                let value = pow(10, decade)
                let at = SVGChart.format(y(value))
                body.append(##"<line x1="\##(left)" y1="\##(at)" x2="\##(right)" y2="\##(at)" stroke="#dddddd"/>"##)
                body.append(#"<text x="\#(left - 6)" y="\#(at)" text-anchor="end" dy="4">\#(String(format: "%g", value)) ms</text>"#)
            }
            for percentile in [50.0, 90, 99, 99.9, 99.99] {
                let at = SVGChart.format(x(percentile))
                body.append(##"<line x1="\##(at)" y1="\##(plotTop)" x2="\##(at)" y2="\##(plotBottom)" stroke="#dddddd"/>"##)
                body.append(
                    #"<text x="\#(at)" y="\#(plotBottom + 16)" text-anchor="middle">p\#(SVGChart.format(percentile))</text>"#)
            }
            for (index, line) in panel.lines.enumerated() where line.milliseconds.count == percentiles.count {
                let color = SVGChart.palette[line.label] ?? "#17becf"
                let points = zip(percentiles, line.milliseconds).map { "\(SVGChart.format(x($0))),\(SVGChart.format(y($1)))" }
                body.append(
                    #"<polyline points="\#(points.joined(separator: " "))" fill="none" stroke="\#(color)" stroke-width="2"/>"#)
                let legendY = plotTop + 16 * Double(index)
                body.append(
                    #"<line x1="\#(right + 12)" y1="\#(legendY)" x2="\#(right + 32)" y2="\#(legendY)" stroke="\#(color)" stroke-width="2"/>"#
                )
                body.append(#"<text x="\#(right + 36)" y="\#(legendY)" dy="4">\#(SVGChart.escape(line.label))</text>"#)
            }
            top += panelHeight
        }
        if panels.isEmpty {
            body.append(#"<text x="10" y="60">No latencies were recorded.</text>"#)
            top += 40
        }
        let height = top + 10
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(SVGChart.format(width))" height="\(SVGChart.format(height))" viewBox="0 0 \(SVGChart.format(width)) \(SVGChart.format(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="22" font-size="16" font-weight="bold">Latency by percentile (log scales; lower is better)</text>
            \(body.joined(separator: "\n"))
            </svg>

            """
    }
}
