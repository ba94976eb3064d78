// Courier re-exports HTTPTypes: API objects, middleware and transports speak in its
// `HTTPRequest`, `HTTPResponse` and `HTTPFields`.
@_exported import HTTPTypes
