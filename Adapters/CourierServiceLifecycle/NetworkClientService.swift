#if ServiceLifecycle
    import Courier
    import ServiceLifecycle

    /// A `NetworkClient` as a swift-service-lifecycle `Service`: it runs until the service
    /// group shuts down gracefully, then shuts the client down gracefully (see
    /// `NetworkClient/shutdown(gracePeriod:)`).
    ///
    /// When the group shuts down, the client takes no new calls, lets running calls finish for up to
    /// ``gracePeriod``, ends the rest and stops its transport. Put the service after the services
    /// that call through the client in the group's list: a group shuts its services down in reverse
    /// order, so the callers stop first.
    ///
    /// ```swift
    /// let client = try NetworkClient(configuration: configuration, registry: registry)
    /// let group = ServiceGroup(
    ///     configuration: .init(services: [.init(service: NetworkClientService(client)), .init(service: httpServer)],
    ///                          gracefulShutdownSignals: [.sigterm], logger: logger))
    /// try await group.run()
    /// ```
    public struct NetworkClientService: Service {
        /// The client.
        public let client: NetworkClient
        /// How long running calls may take once the shutdown has begun.
        public let gracePeriod: Duration

        /// Wraps a client.
        /// - Parameters:
        ///   - client: The client; the service shuts it down.
        ///   - gracePeriod: How long running calls may take once the shutdown has begun; 10 seconds
        ///     by default.
        public init(_ client: NetworkClient, gracePeriod: Duration = .seconds(10)) {
            self.client = client
            self.gracePeriod = gracePeriod
        }

        /// Waits for the graceful shutdown, then shuts the client down. When the task is cancelled
        /// instead (the group ended at once), running calls are ended without a grace period.
        public func run() async throws {
            do {
                try await gracefulShutdown()
            } catch {
                await client.shutdown(gracePeriod: .zero)
                return
            }
            await client.shutdown(gracePeriod: gracePeriod)
        }
    }
#endif
