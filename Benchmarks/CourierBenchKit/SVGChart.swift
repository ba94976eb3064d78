/// A horizontal bar chart as SVG: one group of bars per cell, one bar per client.
enum SVGChart {
    /// One bar.
    struct Bar {
        var label: String
        var value: Double
        var marked: Bool
        /// Drawn on a scale of its own (the longest such bar spans the chart), hatched and labelled
        /// so: the mock, which does no I/O and would squeeze every real client into a corner.
        var ownScale = false
    }

    /// One group of bars.
    struct Group {
        var title: String
        var bars: [Bar]
    }

    static let palette = [
        "curl": "#1f77b4", "urlsession": "#ff7f0e", "ahc": "#2ca02c", "mock": "#9467bd", "reference": "#7f7f7f", "wrk": "#d62728",
        "h2load": "#d62728",
    ]

    /// Renders the chart.
    /// - Parameters:
    ///   - title: The heading.
    ///   - unit: The unit after each value (`req/s`, `ms`).
    ///   - groups: The groups, top to bottom.
    static func render(title: String, unit: String, groups: [Group]) -> String {
        let width = 900.0
        let labelWidth = 110.0
        let valueWidth = 130.0
        let barHeight = 18.0
        let chartWidth = width - labelWidth - valueWidth - 20
        let bars = groups.flatMap(\.bars)
        let largest = bars.filter { !$0.ownScale }.map(\.value).filter(\.isFinite).max() ?? 0
        let largestApart = bars.filter(\.ownScale).map(\.value).filter(\.isFinite).max() ?? 0
        var y = 40.0
        var body: [String] = []
        for group in groups {
            body.append(#"<text x="10" y="\#(y + 14)" font-weight="bold">\#(escape(group.title))</text>"#)
            y += 22
            for bar in group.bars {
                let scale = bar.ownScale ? largestApart : largest
                let length = scale > 0 && bar.value.isFinite ? max(1, chartWidth * bar.value / scale) : 0
                let color = palette[bar.label] ?? "#17becf"
                let name = escape(bar.label + (bar.marked ? " !" : ""))
                let fill = bar.ownScale ? "url(#apart)" : color
                body.append(#"<text x="\#(labelWidth - 6)" y="\#(y + 13)" text-anchor="end">\#(name)</text>"#)
                body.append(
                    #"<rect x="\#(labelWidth)" y="\#(y)" width="\#(format(length))" height="\#(barHeight)" fill="\#(fill)" stroke="\#(color)"/>"#
                )
                let value = valueText(bar.value, unit: unit) + (bar.ownScale ? " (own scale)" : "")
                body.append(#"<text x="\#(format(labelWidth + length + 6))" y="\#(y + 13)">\#(escape(value))</text>"#)
                y += barHeight + 4
            }
            y += 10
        }
        let height = y + 10
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(format(width))" height="\(format(height))" viewBox="0 0 \(format(width)) \(format(height))" font-family="sans-serif" font-size="12">
            <defs><pattern id="apart" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="white"/><line x1="0" y1="0" x2="0" y2="6" stroke="\(palette["mock"] ?? "#9467bd")" stroke-width="3"/></pattern></defs>
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="22" font-size="16" font-weight="bold">\(escape(title))</text>
            \(body.joined(separator: "\n"))
            </svg>

            """
    }

    private static func valueText(_ value: Double, unit: String) -> String {
        guard value.isFinite else { return "n/a" }
        return value >= 100 ? "\(Int(value.rounded())) \(unit)" : "\(format(value)) \(unit)"
    }

    static func format(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    /// Escapes text for an XML text node or attribute.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
