/// An HTTP date (RFC 9110 §5.6.7) as whole seconds since 1970-01-01 00:00:00 UTC.
///
/// Parsed by hand, without Foundation's date formatters: the three formats are fixed, a formatter
/// per call would cost more than the rest of a cache lookup, and a value a server sends must never
/// be able to do more than fail to parse.
package struct HTTPDate: Sendable, Hashable, Comparable {
    /// Seconds since the epoch.
    package var seconds: Int64

    package init(seconds: Int64) { self.seconds = seconds }

    package static func < (left: HTTPDate, right: HTTPDate) -> Bool { left.seconds < right.seconds }

    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let months = monthNames.map { $0.lowercased() }
    private static let shortDays = dayNames.map { $0.lowercased() }
    private static let longDays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// Parses the preferred format (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two obsolete ones a
    /// recipient must still accept (`Sunday, 06-Nov-94 08:49:37 GMT` and asctime's
    /// `Sun Nov  6 08:49:37 1994`). Anything else, a date out of range included, is `nil`.
    package init?(_ text: some StringProtocol) {
        let trimmed = text.trimmingHTTPWhitespace()
        guard trimmed.utf8.count <= 64 else { return nil }
        let parts = trimmed.split(separator: " ", omittingEmptySubsequences: true).map { $0.lowercased() }
        if parts.count == 6, parts[0].hasSuffix(","), Self.shortDays.contains(String(parts[0].dropLast())), parts[5] == "gmt" {
            // IMF-fixdate: day-name "," SP day SP month SP year SP time SP "GMT"
            guard parts[1].count == 2, parts[3].count == 4, let month = Self.months.firstIndex(of: parts[2]),
                let day = Int(parts[1]), let year = Int(parts[3])
            else { return nil }
            self.init(year: year, month: month + 1, day: day, time: parts[4])
        } else if parts.count == 4, parts[0].hasSuffix(","), Self.longDays.contains(String(parts[0].dropLast())), parts[3] == "gmt" {
            // rfc850-date: day-name-l "," SP dd-mon-yy SP time SP "GMT"
            let pieces = parts[1].split(separator: "-", omittingEmptySubsequences: false)
            guard pieces.count == 3, pieces[0].count == 2, pieces[2].count == 2,
                let month = Self.months.firstIndex(of: String(pieces[1])), let day = Int(pieces[0]), let shortYear = Int(pieces[2])
            else { return nil }
            // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
            // Without a clock here, 70 to 99 are 19xx and 00 to 69 are 20xx, as most clients do.
            self.init(year: shortYear < 70 ? 2000 + shortYear : 1900 + shortYear, month: month + 1, day: day, time: parts[2])
        } else if parts.count == 5, Self.shortDays.contains(parts[0]) {
            // asctime-date: day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time SP year
            guard let month = Self.months.firstIndex(of: parts[1]), (1...2).contains(parts[2].count), parts[4].count == 4,
                let day = Int(parts[2]), let year = Int(parts[4])
            else { return nil }
            self.init(year: year, month: month + 1, day: day, time: parts[3])
        } else {
            return nil
        }
    }

    /// From calendar fields and `hh:mm:ss`, checked.
    private init?(year: Int, month: Int, day: Int, time: String) {
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 && $0.utf8.allSatisfy { (48...57).contains($0) } }),
            let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            hour < 24, minute < 60, second <= 60,  // 60: a leap second, counted as the next one
            (1...31).contains(day), (1...12).contains(month), (1900...9999).contains(year),
            day <= Self.daysIn(month: month, year: year)
        else { return nil }
        let days = Self.daysSinceEpoch(year: year, month: month, day: day)
        seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// The preferred format, `Sun, 06 Nov 1994 08:49:37 GMT`.
    var imfFixdate: String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let inDay = Int(seconds - days * 86_400)
        let (year, month, day) = Self.civil(fromDays: days)
        // 1970-01-01 was a Thursday (index 3 from Monday).
        let weekday = Int(((days % 7) + 7 + 3) % 7)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let dayName = Self.dayNames[weekday]
        let monthName = Self.monthNames[month - 1]
        return "\(dayName), \(two(day)) \(monthName) \(year) \(two(inDay / 3600)):\(two(inDay / 60 % 60)):\(two(inDay % 60)) GMT"
    }

    private static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day count from 1970-01-01 (`civil_from_days`).
    private static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    package func trimmingHTTPWhitespace() -> Substring {
        let text = Substring(self)
        guard let start = text.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        let end = text.lastIndex(where: { $0 != " " && $0 != "\t" }) ?? start
        return text[start...end]
    }
}
