import JSON

/// An error as Keen's API answers it: `{"message": ..., "error_code": ...}` with an HTTP status.
/// The codes are those Keen's own clients know (keen-sdk-net `KeenUtil.cs`, KeenClient-iOS
/// `KeenConstants.h`); the query errors' codes are ours where Keen's could not be confirmed
/// (`docs/analytics.md` lists them).
public struct KeenError: Error, Sendable, Hashable, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String
    /// Seconds to wait before trying again (a 429's or 503's `Retry-After`).
    public var retryAfter: Int?

    public init(status: Int, code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }

    public var body: JSONValue { ["message": .string(message), "error_code": .string(code)] }

    // Keys.
    public static func invalidKey(_ message: String) -> KeenError {
        KeenError(status: 401, code: "InvalidApiKeyError", message)
    }
    public static func notFound(_ message: String) -> KeenError {
        KeenError(status: 404, code: "ResourceNotFoundError", message)
    }
    // Events.
    public static func invalidEvent(_ message: String) -> KeenError {
        KeenError(status: 400, code: "InvalidEventError", message)
    }
    public static func invalidBatch(_ message: String) -> KeenError {
        KeenError(status: 400, code: "InvalidBatchError", message)
    }
    public static func invalidCollectionName(_ message: String) -> KeenError {
        KeenError(status: 400, code: "InvalidCollectionNameError", message)
    }
    public static func invalidPropertyName(_ message: String) -> KeenError {
        KeenError(status: 400, code: "InvalidPropertyNameError", message)
    }
    public static func invalidPropertyValue(_ message: String) -> KeenError {
        KeenError(status: 400, code: "InvalidPropertyValueError", message)
    }
    public static func namespaceType(_ message: String) -> KeenError {
        KeenError(status: 400, code: "NamespaceTypeError", message)
    }
    public static func invalidKeenProperty(_ message: String) -> KeenError {
        KeenError(status: 400, code: "InvalidKeenNamespaceProperty", message)
    }
    public static func tooLarge(_ message: String) -> KeenError {
        KeenError(status: 413, code: "RequestEntityTooLargeError", message)
    }
    // Queries.
    public static func missingParameter(_ name: String, _ why: String) -> KeenError {
        KeenError(status: 400, code: "MissingRequiredPropertyError", "\(name) is required \(why)")
    }
    public static func badParameter(_ name: String, _ why: String) -> KeenError {
        KeenError(status: 400, code: "InvalidParameterError", "\(name): \(why)")
    }
    public static func timeframe(_ why: String) -> KeenError {
        KeenError(status: 400, code: "TimeframeDefinitionError", "timeframe: \(why)")
    }
    public static func timezone(_ why: String) -> KeenError {
        KeenError(status: 400, code: "InvalidTimezoneError", "timezone: \(why)")
    }
    public static func interval(_ why: String) -> KeenError {
        KeenError(status: 400, code: "IntervalDefinitionError", "interval: \(why)")
    }
    public static func filter(_ index: Int, _ why: String) -> KeenError {
        KeenError(status: 400, code: "FilterDefinitionError", "filters[\(index)]: \(why)")
    }
    public static func tooMany(_ why: String) -> KeenError {
        KeenError(status: 400, code: "QueryTooLargeError", why)
    }
    /// A query past its time limit (Keen answers 504 past its own, 300 s).
    public static func timeout(seconds: Double) -> KeenError {
        let limit = seconds == seconds.rounded() ? "\(Int(seconds))" : "\(seconds)"
        return KeenError(
            status: 504, code: "QueryTimeoutError",
            "the query ran longer than its limit of \(limit) s and was stopped; narrow its timeframe or filters")
    }
    /// A query stopped before it finished (the server is stopping).
    public static func cancelled(_ why: String) -> KeenError {
        KeenError(status: 503, code: "ServiceUnavailableError", "the query was stopped: \(why)")
    }
    /// Over a rate limit: Keen answers 429 and blocks the kind of request for the rest of the minute.
    public static func rateLimited(_ why: String) -> KeenError {
        KeenError(status: 429, code: "TooManyRequestsError", why)
    }
    public static func unknownAnalysis(_ name: String) -> KeenError {
        KeenError(status: 404, code: "ResourceNotFoundError", "no analysis called '\(name)'")
    }
}
