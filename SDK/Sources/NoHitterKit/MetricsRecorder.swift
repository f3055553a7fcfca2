import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Records an app's sessions, screens, taps and opened notifications as Keen events, keeps them
/// on disk, and uploads them in batches to a `nohit serve` (`/3.0/projects/{id}/events`) or to
/// Keen itself, following Keen's iOS client: one batch `POST /events` with the write key, each
/// event's result matched by its index; a success or an event Keen calls invalid
/// (`InvalidCollectionNameError`, `InvalidPropertyNameError`, `InvalidPropertyValueError`) leaves
/// the queue, anything else is an attempt, and an event is dropped after `maximumAttempts`.
/// Beyond it: a failed upload waits (exponential backoff with jitter) before the next, and a full
/// queue drops its oldest events; every drop is counted.
///
/// Every event carries `keen.timestamp`, `keen.uniqueness_token` (made once, so a batch resent
/// after a lost answer is not counted twice), `session_id`, `user.id_hash` (a salted SHA-256 of the
/// user's id, or of this install's random id; with `saltRotation = .daily` the day is in the salt,
/// so one day's hashes cannot be joined to another's) and `standard_properties`; in `testMode`
/// (debug builds) also `test_mode: true`, so dashboards leave them out.
///
/// Errors the app reports (`recordError`) and, on iOS, MetricKit's crash and hang diagnostics
/// (`MetricKitReporter`) go to the `errors` collection. A session the app did not end (it crashed
/// or was killed) is closed at the next start with `clean_exit: false`: crash-free sessions are the
/// `app_launch` events with `clean_exit` true.
public actor MetricsRecorder {
    public struct Configuration: Sendable {
        public var projectID: String
        public var writeKey: String
        /// The analytics server: a `nohit serve` (`https://alerts.example.org`) or
        /// `https://api.keen.io`.
        public var baseURL: URL
        /// Where the queue and the recorder's state live (the app's Application Support).
        public var directory: URL
        public var app: AppInfo
        /// Mixed into `user.id_hash`, so the ids cannot be looked up from the hashes.
        public var salt: String
        /// `.daily`: the day (UTC) is mixed into the salt too, so a device's hash changes every day
        /// (as Aptabase does): no one can follow a device across days, and so no retention beyond
        /// a day can be computed either.
        public var saltRotation: SaltRotation = .never
        /// Debug builds: every event says `test_mode: true`, and the dashboards leave them out.
        public var testMode = false
        public var batchSize = 500
        public var maximumAttempts = 3
        /// Events kept at most; past it the oldest go.
        public var capacity = 10_000
        public var initialBackoff: TimeInterval = 2
        public var maximumBackoff: TimeInterval = 300

        public init(
            projectID: String, writeKey: String, baseURL: URL = URL(string: "https://api.keen.io")!, directory: URL,
            app: AppInfo, salt: String
        ) {
            self.projectID = projectID
            self.writeKey = writeKey
            self.baseURL = baseURL
            self.directory = directory
            self.app = app
            self.salt = salt
        }
    }

    public enum SaltRotation: String, Sendable, Hashable {
        case never, daily
    }

    /// What `standard_properties` says of the app and the device.
    public struct AppInfo: Sendable, Hashable {
        public var version: String
        public var build: String
        /// e.g. `iPhone15,2`.
        public var model: String
        public var systemVersion: String
        public var language: String
        public var screenScale: Double

        public init(
            version: String, build: String, model: String, systemVersion: String, language: String, screenScale: Double
        ) {
            self.version = version
            self.build = build
            self.model = model
            self.systemVersion = systemVersion
            self.language = language
            self.screenScale = screenScale
        }
    }

    /// The queue and what became of the events so far (since the recorder's directory was made).
    public struct Statistics: Sendable, Hashable {
        public var queued: Int
        public var uploaded: Int
        public var droppedQueueFull: Int
        public var droppedAfterAttempts: Int
        public var droppedInvalid: Int
        /// Events that could not be written to disk (never queued).
        public var lostToStorage: Int
        public var consecutiveFailures: Int
        /// No upload before this, unless forced.
        public var nextUploadAt: Date?
    }

    /// What one `flush` did.
    public enum FlushResult: Sendable, Hashable {
        case nothingToSend
        /// Uploads are waiting after failures; `flush(force: true)` sends anyway.
        case waiting(until: Date)
        /// Every batch answered: `uploaded` stored, `kept` to try again, `dropped` given up.
        case sent(uploaded: Int, kept: Int, dropped: Int)
        /// A batch failed (`status` nil: no answer); its events stay unless out of attempts.
        case failed(status: Int?, message: String, retryAt: Date)
    }

    /// Kept in `state.json` beside the queue.
    struct State: Codable {
        var installID = UUID().uuidString.lowercased()
        var launches = 0
        var session: Session?
        var userID: String?
        var notificationTypes: [String] = []
        var uploaded = 0
        var droppedQueueFull = 0
        var droppedAfterAttempts = 0
        var droppedInvalid = 0
        var lostToStorage = 0
        var consecutiveFailures = 0
        var nextUploadAt: Date?

        struct Session: Codable {
            var id: String
            var start: Date
            var lastActivity: Date
            var firstLaunch: Bool
        }
    }

    public let configuration: Configuration
    private let transport: any HTTPTransport
    private let now: @Sendable () -> Date
    private let queue: EventQueue
    private var state: State
    private var openViews: [String: Date] = [:]
    /// The session's last activity as `state.json` has it.
    private var savedActivity: Date?

    static let invalidNames: Set<String> = [
        "InvalidCollectionNameError", "InvalidPropertyNameError", "InvalidPropertyValueError",
    ]

    public init(
        configuration: Configuration, transport: any HTTPTransport = URLSessionTransport(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        guard configuration.maximumAttempts >= 1, configuration.batchSize >= 1, configuration.capacity >= 1 else {
            throw NoHitterError.invalid("maximumAttempts, batchSize and capacity must be at least 1")
        }
        guard !configuration.projectID.isEmpty, !configuration.writeKey.isEmpty else {
            throw NoHitterError.invalid("a project id and a write key are needed to upload events")
        }
        self.configuration = configuration
        self.transport = transport
        self.now = now
        queue = try EventQueue(directory: configuration.directory.appendingPathComponent("events"))
        let stateURL = configuration.directory.appendingPathComponent("state.json")
        if let data = try? Data(contentsOf: stateURL) {
            do {
                state = try JSONDecoder().decode(State.self, from: data)
            } catch {
                throw NoHitterError.invalid("\(stateURL.path) is not the recorder's state: \(error)")
            }
        } else {
            state = State()
        }
    }

    // MARK: Recording

    /// Starts a session (the app came to the foreground). A session still open from before (the
    /// app crashed or was killed) is closed first, ending at its last activity, `clean_exit: false`.
    public func startSession() {
        let time = now()
        closeSession(clean: false)
        state.session = State.Session(
            id: UUID().uuidString.lowercased(), start: time, lastActivity: time, firstLaunch: state.launches == 0)
        state.launches += 1
        saveState()
    }

    /// Ends the session (the app went to the background): one `app_launch` event with its start,
    /// end and duration.
    public func endSession() {
        state.session?.lastActivity = now()
        closeSession(clean: true)
        saveState()
    }

    /// An error the app met: its domain and code (an `NSError`'s, or the Swift error's type), what
    /// it says, whether it ended what the user was doing (`fatal`), on which screen; one `errors`
    /// event with `kind: "error"`.
    public func recordError(
        _ error: any Error, fatal: Bool = false, screen: String? = nil, properties: [String: MetricValue] = [:]
    ) {
        let bridged = error as NSError
        var event = properties
        event["kind"] = .string("error")
        event["domain"] = .string(bridged.domain)
        event["code"] = .number(Double(bridged.code))
        event["message"] = .string(String(String(describing: error).prefix(1_000)))
        event["fatal"] = .bool(fatal)
        if let screen { event["screen"] = .string(screen) }
        record("errors", event)
    }

    /// A crash or hang diagnostic (MetricKit's, delivered at a later launch): `kind` "crash" or
    /// "hang", when it happened, the app version and OS it happened on (which may not be this
    /// launch's), and what it says; one `errors` event.
    public func recordDiagnostic(
        kind: String, at time: Date, appVersion: String?, osVersion: String?, properties: [String: MetricValue]
    ) {
        var event = properties
        event["kind"] = .string(kind)
        event["fatal"] = .bool(kind == "crash")
        if let appVersion { event["diagnostic_app_version"] = .string(appVersion) }
        if let osVersion { event["diagnostic_os_version"] = .string(osVersion) }
        touchSession()
        append("errors", event, at: time, session: nil)
        saveState()
    }

    /// A screen appeared; its `views` event is recorded when it disappears.
    public func viewAppeared(_ name: String) {
        openViews[name] = now()
        touchSession()
    }

    /// A screen disappeared: a `views` event with its appear and disappear times and duration,
    /// timestamped when it appeared.
    public func viewDisappeared(_ name: String, properties: [String: MetricValue] = [:]) {
        let end = now()
        let start = openViews.removeValue(forKey: name) ?? end
        var event = properties
        event["class_name"] = .string(name)
        event["appear_time"] = .string(Self.timestamp(start))
        event["disappear_time"] = .string(Self.timestamp(end))
        event["appearance_duration"] = .number(end.timeIntervalSince(start))
        record("views", event, at: start)
    }

    /// A tap: what it did (`action`), on what (`target`), on which screen.
    public func touch(action: String, target: String, screen: String? = nil) {
        var event: [String: MetricValue] = ["action": .string(action), "target": .string(target)]
        if let screen { event["view_controller"] = .string(screen) }
        record("touches", event)
    }

    /// A notification was opened: its channel (`apns`, `web-push`), what it said (`kind`).
    public func pushOpened(channel: String, kind: String?, properties: [String: MetricValue] = [:]) {
        var event = properties
        event["channel"] = .string(channel)
        if let kind { event["kind"] = .string(kind) }
        record("pushes", event)
    }

    /// Any other event.
    public func record(_ collection: String, _ properties: [String: MetricValue]) {
        record(collection, properties, at: now())
    }

    /// Who uses the app: `nil` when logged out (the install's own id is hashed then).
    public func setUser(id: String?) {
        state.userID = id
        saveState()
    }

    /// The notification types the user allowed (`alert`, `sound`, `badge`), for every later event.
    public func setNotificationTypes(_ types: [String]) {
        state.notificationTypes = types
        saveState()
    }

    public var statistics: Statistics {
        Statistics(
            queued: queue.count, uploaded: state.uploaded, droppedQueueFull: state.droppedQueueFull,
            droppedAfterAttempts: state.droppedAfterAttempts, droppedInvalid: state.droppedInvalid,
            lostToStorage: state.lostToStorage, consecutiveFailures: state.consecutiveFailures,
            nextUploadAt: state.nextUploadAt)
    }

    /// `user.id_hash`: SHA-256 of the salt and the user's id (or the install's), in hex; with a
    /// daily rotation, of the salt, the day (UTC) and the id.
    public var idHash: String { idHash(at: now()) }

    func idHash(at time: Date) -> String {
        var salt = configuration.salt
        if configuration.saltRotation == .daily { salt += ":" + String(Self.timestamp(time).prefix(10)) }
        return SHA256.hex(salt + ":" + (state.userID ?? "install:" + state.installID))
    }

    private func closeSession(clean: Bool) {
        guard let session = state.session else { return }
        state.session = nil
        let event: [String: MetricValue] = [
            "session_start": .string(Self.timestamp(session.start)),
            "session_end": .string(Self.timestamp(session.lastActivity)),
            "session_duration": .number(session.lastActivity.timeIntervalSince(session.start)),
            "clean_exit": .bool(clean),
        ]
        append("app_launch", event, at: session.start, session: session)
    }

    private func touchSession() {
        state.session?.lastActivity = now()
    }

    private func record(_ collection: String, _ properties: [String: MetricValue], at time: Date) {
        touchSession()
        let drops = state.droppedQueueFull + state.lostToStorage
        append(collection, properties, at: time, session: state.session)
        // The event is on disk already; the state is written again only when a drop was counted or
        // the session's last activity moved on by `activitySaveInterval` (what a kill can lose).
        var activityMoved = false
        if let activity = state.session?.lastActivity {
            activityMoved = savedActivity.map { activity.timeIntervalSince($0) >= Self.activitySaveInterval } ?? true
        }
        if activityMoved || drops != state.droppedQueueFull + state.lostToStorage { saveState() }
    }

    /// How far the saved last activity of a session may fall behind (a session left open by a
    /// killed app ends at most this much before its real last activity).
    static let activitySaveInterval: TimeInterval = 15

    private func append(
        _ collection: String, _ properties: [String: MetricValue], at time: Date, session: State.Session?
    ) {
        var event = properties
        event["keen"] = [
            "timestamp": .string(Self.timestamp(time)), "uniqueness_token": .string(UUID().uuidString.lowercased()),
        ]
        event["session_id"] = session.map { .string($0.id) } ?? .null
        event["user"] = ["id_hash": .string(idHash(at: time))]
        if configuration.testMode { event["test_mode"] = .bool(true) }
        let app = configuration.app
        event["standard_properties"] = [
            "app_version": .string(app.version), "app_build_number": .string(app.build),
            "model": .string(app.model), "system_version": .string(app.systemVersion),
            "language": .string(app.language), "screen_scale": .number(app.screenScale),
            "first_time_app_launch": .bool(session?.firstLaunch ?? false), "logged_in": .bool(state.userID != nil),
            "enabled_remote_notification_types": .array(state.notificationTypes.map { .string($0) }),
        ]
        while queue.count >= configuration.capacity, let oldest = queue.entries.first {
            queue.remove(oldest)
            state.droppedQueueFull += 1
        }
        do {
            try queue.append(collection: collection, event: event)
        } catch {
            state.lostToStorage += 1
        }
    }

    private func saveState() {
        savedActivity = state.session?.lastActivity
        let url = configuration.directory.appendingPathComponent("state.json")
        guard let data = try? JSONEncoder.sorted.encode(state) else { return }
        try? data.write(to: url, options: .atomic)
    }

    // MARK: Uploading

    /// Uploads the queue, a batch at a time, until it is empty or a batch fails. Waits out the
    /// backoff after failures unless `force`.
    public func flush(force: Bool = false) async -> FlushResult {
        if !force, let next = state.nextUploadAt, next > now() { return .waiting(until: next) }
        guard queue.count > 0 else { return .nothingToSend }
        var (uploaded, kept, dropped) = (0, 0, 0)
        var tried = Set<Int>()
        while true {
            let batch = queue.oldest(configuration.batchSize, excluding: tried)
            guard !batch.isEmpty else { break }
            tried.formUnion(batch.map(\.entry.sequence))
            switch await send(batch) {
            case .answered(let outcome):
                uploaded += outcome.uploaded
                kept += outcome.kept
                dropped += outcome.dropped
            case .failed(let status, let message):
                let retryAt = failed(batch.map(\.entry))
                return .failed(status: status, message: message, retryAt: retryAt)
            }
        }
        state.consecutiveFailures = 0
        state.nextUploadAt = nil
        saveState()
        return .sent(uploaded: uploaded, kept: kept, dropped: dropped)
    }

    enum Sent {
        case answered((uploaded: Int, kept: Int, dropped: Int))
        case failed(status: Int?, message: String)
    }

    private func send(_ batch: [(entry: EventQueue.Entry, stored: EventQueue.Stored)]) async -> Sent {
        // Collections in the order first seen; in each, events in queue order.
        var order: [String] = []
        var byCollection: [String: [(EventQueue.Entry, [String: MetricValue])]] = [:]
        for (entry, stored) in batch {
            if byCollection[stored.collection] == nil { order.append(stored.collection) }
            byCollection[stored.collection, default: []].append((entry, stored.event))
        }
        let body: Data
        do {
            body = try JSONEncoder.sorted.encode(byCollection.mapValues { $0.map(\.1) })
        } catch {
            return .failed(status: nil, message: "the batch could not be encoded: \(error)")
        }
        let url = configuration.baseURL.appendingPathComponent("3.0/projects/\(configuration.projectID)/events")
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.timeoutInterval = 30
        request.httpBody = body
        request.setValue(configuration.writeKey, forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("nohitterkit-1.0.0", forHTTPHeaderField: "Keen-Sdk")
        let status: Int
        let answer: Data
        do {
            (status, answer) = try await transport.send(request)
        } catch {
            return .failed(status: nil, message: "\(error)")
        }
        guard (200..<300).contains(status) else {
            return .failed(status: status, message: NoHitterClient.message(answer))
        }
        let results = (try? JSONDecoder().decode([String: [BatchResult]].self, from: answer)) ?? [:]
        var outcome = (uploaded: 0, kept: 0, dropped: 0)
        for collection in order {
            let answers = results[collection] ?? []
            for (index, (entry, _)) in byCollection[collection, default: []].enumerated() {
                let result = index < answers.count ? answers[index] : nil
                if result?.success == true {
                    queue.remove(entry)
                    state.uploaded += 1
                    outcome.uploaded += 1
                } else if let name = result?.error?.name, Self.invalidNames.contains(name) {
                    queue.remove(entry)
                    state.droppedInvalid += 1
                    outcome.dropped += 1
                } else if queue.failed(entry) >= configuration.maximumAttempts {
                    queue.remove(EventQueue.Entry(sequence: entry.sequence, attempts: entry.attempts + 1))
                    state.droppedAfterAttempts += 1
                    outcome.dropped += 1
                } else {
                    outcome.kept += 1
                }
            }
        }
        saveState()
        return .answered(outcome)
    }

    struct BatchResult: Decodable {
        var success: Bool
        var error: Failure?

        struct Failure: Decodable {
            var name: String?
            var description: String?
        }
    }

    /// A batch that got no good answer: one attempt on each of its events (dropped when out of
    /// attempts), and the next upload put off.
    private func failed(_ entries: [EventQueue.Entry]) -> Date {
        for entry in entries where queue.failed(entry) >= configuration.maximumAttempts {
            queue.remove(EventQueue.Entry(sequence: entry.sequence, attempts: entry.attempts + 1))
            state.droppedAfterAttempts += 1
        }
        state.consecutiveFailures += 1
        let delay = Self.backoff(
            failures: state.consecutiveFailures, initial: configuration.initialBackoff,
            maximum: configuration.maximumBackoff, jitter: Double.random(in: 0.5...1))
        let retryAt = now().addingTimeInterval(delay)
        state.nextUploadAt = retryAt
        saveState()
        return retryAt
    }

}
