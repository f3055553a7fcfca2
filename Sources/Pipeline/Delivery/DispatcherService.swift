import ServiceLifecycle

/// One channel's dispatcher as a Service: it delivers until graceful shutdown, then lets the
/// requests in flight finish and records them (claimed deliveries not yet sent go back to the
/// outbox untouched).
package struct DispatcherService: Service {
    package let dispatcher: Dispatcher

    package init(_ dispatcher: Dispatcher) {
        self.dispatcher = dispatcher
    }

    package func run() async throws {
        let stop = StopSignal()
        stop.wakes([dispatcher.wake])
        try await withGracefulShutdownHandler {
            try await dispatcher.run(stop: stop)
        } onGracefulShutdown: {
            stop.request()
        }
    }
}
