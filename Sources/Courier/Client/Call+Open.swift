import HTTPTypes
import Logging

extension Call {
    /// Opens the call: its deadline, its place among the client's running calls (both held in the
    /// call's record, ``CallLifecycle/Holdings``), and the chain up to the response head. The scope
    /// it returns ends the call, releasing them, after the body (a buffered call reads it at once;
    /// a streamed call hands it over).
    /// - Throws: ``NetworkError`` (the call has ended already).
    func open() async throws(NetworkError) -> OpenedCall {
        let signal = context.deadlineSignal
        guard let slot = client.admission.enter(signal) else { throw Self.shuttingDown }
        let networkStart = client.now()
        // One deadline for everything under the call: queue waiting, attempts, hops, backoff, and
        // the body until the caller has read it (a long transfer's body: its ``BodyWatch``).
        let alarm = Deadline.arm(signal, at: context.deadlineMoment, on: client.onSystemClock ? nil : context.clock, now: networkStart)
        // One lock on the call's record: what it holds (its place and its alarm, which its end
        // releases), the bytes it sends, and its phase, before the chain runs, so a deadline that
        // strikes before the transport does not report the call as still being built.
        context.call.admit(.init(slot: slot, alarm: alarm), entering: context.placement == nil ? .sending : .queued) {
            $0.bytesSent = body?.length ?? 0
        }
        if logLevel <= .trace { traceStart(request) }
        progress?.start(sending: body == nil ? 0 : body?.length)
        let scope = CallScope(self, networkStart: networkStart)
        do {
            return OpenedCall(response: try await client.chain.run(request, body, context), scope: scope)
        } catch {
            scope.end()
            throw scope.failure(error)
        }
    }
}

extension Call {
    /// The failure of a call (or a long call's next connection) asked for while the client shuts down.
    static let shuttingDown = NetworkError(
        kind: .shutDown, phase: .building, message: "the client is shutting down and takes no new calls; nothing was sent")
}

/// A call opened up to its response head (see ``Call/open()``), with the scope that ends once the
/// body is done.
struct OpenedCall: Sendable {
    let response: TransportResponse
    let scope: CallScope
}
