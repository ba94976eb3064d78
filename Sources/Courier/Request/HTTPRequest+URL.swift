import HTTPTypes

extension HTTPRequest {
    /// The request's absolute URL as text (`scheme://authority/path?query`), written from the
    /// request head the client resolved once.
    ///
    /// The one place Courier turns a request back into URL text: logs, error summaries, tracing,
    /// redirect resolution, and adapters whose library takes a URL string. A request without a
    /// scheme is `http`, without a path `/`.
    public var urlText: String { describedURL(after: "") }

    /// ``urlText`` after `prefix`, in one string (the response cache's keys are the method, a
    /// space and the URL, made on every lookup).
    package func describedURL(after prefix: String) -> String {
        let scheme = self.scheme ?? "http"
        let authority = self.authority ?? ""
        let path = self.path ?? "/"
        var text = ""
        text.reserveCapacity(prefix.utf8.count + scheme.utf8.count + 3 + authority.utf8.count + path.utf8.count)
        text += prefix
        text += scheme
        text += "://"
        text += authority
        text += path
        return text
    }
}
