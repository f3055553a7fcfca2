#if canImport(MetricKit) && os(iOS)
    import Foundation
    import MetricKit

    /// MetricKit's crash and hang diagnostics as `errors` events: iOS delivers the last day's
    /// diagnostics at a later launch (`didReceive(_:)`), each with the app version and OS it
    /// happened on; a crash becomes `kind: "crash"` (exception type and code, signal, termination
    /// reason), a hang `kind: "hang"` (its duration). Subscribe once, early:
    /// `MetricKitReporter.shared.start(recorder)`. This file builds only where MetricKit exists
    /// (iOS 14+); what it records goes through `MetricsRecorder.recordDiagnostic`, tested on Linux.
    @available(iOS 14.0, *)
    public final class MetricKitReporter: NSObject, MXMetricManagerSubscriber, @unchecked Sendable {
        public static let shared = MetricKitReporter()
        private var recorder: MetricsRecorder?

        public func start(_ recorder: MetricsRecorder) {
            guard self.recorder == nil else { return }
            self.recorder = recorder
            MXMetricManager.shared.add(self)
        }

        public func didReceive(_ payloads: [MXDiagnosticPayload]) {
            guard let recorder else { return }
            for payload in payloads {
                let time = payload.timeStampEnd
                for crash in payload.crashDiagnostics ?? [] {
                    var properties: [String: MetricValue] = [:]
                    if let type = crash.exceptionType { properties["exception_type"] = .number(type.doubleValue) }
                    if let code = crash.exceptionCode { properties["exception_code"] = .number(code.doubleValue) }
                    if let signal = crash.signal { properties["signal"] = .number(signal.doubleValue) }
                    if let reason = crash.terminationReason { properties["termination_reason"] = .string(reason) }
                    let meta = crash.metaData
                    Task {
                        await recorder.recordDiagnostic(
                            kind: "crash", at: time, appVersion: meta.applicationBuildVersion,
                            osVersion: meta.osVersion, properties: properties)
                    }
                }
                for hang in payload.hangDiagnostics ?? [] {
                    let seconds = hang.hangDuration.converted(to: .seconds).value
                    let meta = hang.metaData
                    Task {
                        await recorder.recordDiagnostic(
                            kind: "hang", at: time, appVersion: meta.applicationBuildVersion,
                            osVersion: meta.osVersion, properties: ["hang_duration": .number(seconds)])
                    }
                }
            }
        }
    }
#endif
