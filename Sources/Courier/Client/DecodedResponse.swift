import HTTPTypes

/// A successful call's output together with the response head and the call's metrics.
public struct DecodedResponse<Output: Sendable>: Sendable {
    /// The decoded output.
    public var value: Output
    /// The response status and headers.
    public var head: HTTPResponse
    /// What the call cost.
    public var metrics: RequestMetrics
}
