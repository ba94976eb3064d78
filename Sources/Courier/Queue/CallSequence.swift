import Dispatch

/// Calls that depend on each other: each step builds its request from the previous step's output.
///
/// ```swift
/// let sequence = CallSequence("log in", Login(user: "ana"))
///     .then("load profile") { token in GetProfile(token: token.value) }
///     .then("load avatar") { profile in GetImage(url: profile.avatarURL) }
/// let avatar = try await sequence.run(on: client)
/// ```
///
/// The first failure stops the sequence: the error is the step's ``NetworkError`` with
/// ``NetworkError/sequenceStep`` saying which step (its index from 0 and its name). A step whose
/// builder throws fails with ``NetworkError/Kind/invalidRequest`` and sends nothing. A sequence is a
/// description: it can be run any number of times (steps that make ``BaseAPI`` objects make a new
/// one each run).
public struct CallSequence<Output: Sendable>: Sendable {
    /// Told after each step, with the step and its result (the output as `any Sendable`).
    public typealias StepHandler = @Sendable (CallSequenceStep, Result<any Sendable, NetworkError>) -> Void

    /// The steps' names, in order.
    public let stepNames: [String]
    private let body: @Sendable (NetworkClient, StepHandler?) async throws(NetworkError) -> Output

    private init(
        stepNames: [String], body: @escaping @Sendable (NetworkClient, StepHandler?) async throws(NetworkError) -> Output
    ) {
        self.stepNames = stepNames
        self.body = body
    }

    /// A sequence whose first step runs `endpoint`.
    /// - Parameters:
    ///   - name: The step's name, for errors and step callbacks.
    ///   - endpoint: The first call.
    public init<E: Endpoint>(_ name: String, _ endpoint: E) where E.Output == Output {
        let step = CallSequenceStep(index: 0, name: name)
        self.init(stepNames: [name]) { client, onStep throws(NetworkError) in
            try await Self.perform(step, onStep) { () async throws(NetworkError) in try await Self.send(endpoint, on: client) }
        }
    }

    /// A sequence whose first step runs the API object `make` returns (a new one per run).
    /// - Parameters:
    ///   - name: The step's name.
    ///   - make: Makes the first API object.
    public init(_ name: String, api make: @escaping @Sendable () -> BaseAPI<Output>) {
        let step = CallSequenceStep(index: 0, name: name)
        self.init(stepNames: [name]) { _, onStep throws(NetworkError) in
            try await Self.perform(step, onStep) { () async throws(NetworkError) in try await Self.response(of: make()) }
        }
    }

    /// Adds a step that builds an endpoint from this sequence's output.
    /// - Parameters:
    ///   - name: The step's name.
    ///   - make: Builds the next call from the previous output; a thrown error stops the sequence.
    /// - Returns: The longer sequence.
    public func then<E: Endpoint>(_ name: String, _ make: @escaping @Sendable (Output) throws -> E) -> CallSequence<E.Output> {
        let step = CallSequenceStep(index: stepNames.count, name: name)
        let previous = body
        return CallSequence<E.Output>(stepNames: stepNames + [name]) { client, onStep throws(NetworkError) in
            let input = try await previous(client, onStep)
            return try await CallSequence<E.Output>.perform(step, onStep) { () async throws(NetworkError) in
                try await CallSequence<E.Output>.send(try CallSequence<E.Output>.build(step) { try make(input) }, on: client)
            }
        }
    }

    /// Adds a step that builds an API object from this sequence's output.
    /// - Parameters:
    ///   - name: The step's name.
    ///   - make: Builds the next API object from the previous output.
    /// - Returns: The longer sequence.
    public func then<Next: Sendable>(_ name: String, api make: @escaping @Sendable (Output) throws -> BaseAPI<Next>) -> CallSequence<Next> {
        let step = CallSequenceStep(index: stepNames.count, name: name)
        let previous = body
        return CallSequence<Next>(stepNames: stepNames + [name]) { client, onStep throws(NetworkError) in
            let input = try await previous(client, onStep)
            return try await CallSequence<Next>.perform(step, onStep) { () async throws(NetworkError) in
                try await CallSequence<Next>.response(of: try CallSequence<Next>.build(step) { try make(input) })
            }
        }
    }

    /// Runs every step in order.
    /// - Parameters:
    ///   - client: Runs the endpoint steps (API objects use their own client).
    ///   - onStep: Told after each step, on the running task.
    /// - Returns: The last step's output.
    /// - Throws: The failing step's ``NetworkError``, with ``NetworkError/sequenceStep`` set;
    ///   cancelling the task cancels the running step.
    ///
    /// Like ``NetworkClient/response(for:)``, the steps run on Swift's global executor, never on
    /// the caller's actor.
    @concurrent
    public func run(on client: NetworkClient, onStep: StepHandler? = nil) async throws(NetworkError) -> Output {
        try await body(client, onStep)
    }

    /// Runs the sequence in a task of its own; the result goes to `completion`.
    /// - Parameters:
    ///   - client: Runs the endpoint steps.
    ///   - callbackQueue: Where `onStep` and `completion` run; the global queue by default.
    ///   - onStep: Told after each step.
    ///   - completion: Called once with the result (a cancelled sequence fails with `cancelled`).
    /// - Returns: A handle that cancels the sequence.
    @discardableResult
    public func start(
        on client: NetworkClient, callbackQueue: DispatchQueue = .global(), onStep: StepHandler? = nil,
        completion: @escaping @Sendable (Result<Output, NetworkError>) -> Void
    ) -> CallSequenceHandle {
        let serial = DispatchQueue(label: "courier.call-sequence", target: callbackQueue)
        var relay: StepHandler?
        if let onStep {
            relay = { step, result in serial.async { onStep(step, result) } }
        }
        let task = Task { [relay] in
            let result = await outcome(on: client, relay)
            serial.async { completion(result) }
        }
        return CallSequenceHandle(cancelTask: { task.cancel() })
    }

    private func outcome(on client: NetworkClient, _ onStep: StepHandler?) async -> Result<Output, NetworkError> {
        do throws(NetworkError) {
            return .success(try await body(client, onStep))
        } catch {
            return .failure(error)
        }
    }

    private static func send<E: Endpoint>(_ endpoint: E, on client: NetworkClient) async throws(NetworkError) -> Output
    where E.Output == Output {
        try await client.perform(Call(endpoint, on: client), decoder: endpoint.decoder).value
    }

    private static func perform(
        _ step: CallSequenceStep, _ onStep: StepHandler?, _ operation: () async throws(NetworkError) -> Output
    ) async throws(NetworkError) -> Output {
        do throws(NetworkError) {
            if Task.isCancelled { throw NetworkError.cancelled(phase: .building) }
            let output = try await operation()
            onStep?(step, .success(output))
            return output
        } catch {
            var failure = error
            failure.sequenceStep = step
            onStep?(step, .failure(failure))
            throw failure
        }
    }

    private static func build<Call>(_ step: CallSequenceStep, _ make: () throws -> Call) throws(NetworkError) -> Call {
        do {
            return try make()
        } catch {
            var failure = NetworkError.invalidRequest("step \(step) could not build its request: \(error)")
            failure.underlying = error
            throw failure
        }
    }

    private static func response(of api: BaseAPI<Output>) async throws(NetworkError) -> Output {
        do {
            return try await api.response()
        } catch {
            throw NetworkError.converting(error, phase: .transfer)
        }
    }
}

/// One step of a ``CallSequence``: its index (from 0) and name.
public struct CallSequenceStep: Sendable, Hashable, CustomStringConvertible {
    /// The step's position, from 0.
    public var index: Int
    /// The step's name.
    public var name: String

    /// Creates a step description.
    /// - Parameters:
    ///   - index: The step's position, from 0.
    ///   - name: The step's name.
    public init(index: Int, name: String) {
        self.index = index
        self.name = name
    }

    /// `2 (load avatar)`.
    public var description: String { "\(index) (\(name))" }
}

/// Cancels a sequence started with ``CallSequence/start(on:callbackQueue:onStep:completion:)``.
public struct CallSequenceHandle: Sendable {
    let cancelTask: @Sendable () -> Void

    /// Cancels the running step and stops the sequence; its completion gets ``NetworkError/Kind/cancelled``.
    public func cancel() { cancelTask() }
}
