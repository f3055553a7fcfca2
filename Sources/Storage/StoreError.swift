/// A store operation that cannot be done: what kind of failure, what it is about (the record and
/// its key, the setting, the request), and why when there is more to say. A struct around a kind,
/// as AsyncHTTPClient's errors are, so a kind can be added without breaking a caller; two errors
/// are equal when they say the same.
package struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Kind: String, Sendable, Hashable {
        /// A record with that key exists already.
        case duplicate
        /// A stored record cannot be read.
        case corrupt
        /// The store cannot be opened as configured (a malformed URL, a database that cannot be
        /// reached, a key that does not fit).
        case configuration
        /// A request the store refuses.
        case invalid
    }

    package var kind: Kind
    /// What it is about: a record's kind (`device`, `outbox row`), a setting, a request.
    package var subject: String
    /// The record's key (its id, its address), when it is about one record.
    package var key: String?
    /// Why, when there is more to say than the kind (the underlying error).
    package var reason: String?

    package init(_ kind: Kind, _ subject: String, key: String? = nil, reason: String? = nil) {
        self.kind = kind
        self.subject = subject
        self.key = key
        self.reason = reason
    }

    /// A record with that key exists already.
    package static func duplicate(_ subject: String, key: String? = nil) -> StoreError {
        StoreError(.duplicate, subject, key: key)
    }

    /// A stored record (`subject` `key`) cannot be read, and why.
    package static func corrupt(_ subject: String, key: String? = nil, reason: String? = nil) -> StoreError {
        StoreError(.corrupt, subject, key: key, reason: reason)
    }

    /// The store cannot be opened as configured: what is wrong, in a sentence.
    package static func configuration(_ what: String) -> StoreError { StoreError(.configuration, what) }

    /// A request the store refuses: what and why, in a sentence.
    package static func invalid(_ what: String) -> StoreError { StoreError(.invalid, what) }

    package var description: String {
        let about = key.map { "\(subject) \($0)" } ?? subject
        let why = reason.map { ": \($0)" } ?? ""
        switch kind {
        case .duplicate: return "already exists: \(about)"
        case .corrupt: return "stored data cannot be read: \(about)\(why)"
        case .configuration, .invalid: return about + why
        }
    }
}

/// Every store protocol the service runs on.
package typealias ServiceStore = DeviceStore & SubscriptionStore & MomentStore & OutboxStore & DealStore & FeedbackStore
