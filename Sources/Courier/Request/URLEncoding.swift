import Foundation

/// Percent-encoding helpers for callers who build paths from data.
public enum URLEncoding {
    /// Encodes a value to stand as one path segment, including any `/` it contains.
    ///
    /// An API object's ``BaseAPI/path`` treats `/` as a separator; wrap values that may contain
    /// one: `"files/\(URLEncoding.pathSegment(name))"` sends `a/b` as `a%2Fb`.
    /// - Parameter value: The plain-text value.
    /// - Returns: The encoded segment.
    public static func pathSegment(_ value: String) -> String {
        PercentEncoding.pathSegment(value.replacingOccurrences(of: "%", with: "%25"))
    }
}
