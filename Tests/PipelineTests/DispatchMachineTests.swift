import Alerts
import Delivery
import Foundation
import Testing

@testable import Pipeline
@testable import Storage

/// The dispatcher's decisions on their own: no database, no socket, no clock but the instants
/// given (the dispatcher's I/O is checked by the crash, instances and pipeline tests).
@Suite struct DispatchMachineTests {
    static let start = ContinuousClock.now
    static let now = Date(timeIntervalSince1970: 1_598_400_000)

    static func claimed(_ count: Int, attempts: Int = 1) -> [ClaimedDelivery] {
        (0..<count).map { _ in
            ClaimedDelivery(
                id: UUID(), deviceID: UUID(),
                channel: .apns(token: String(repeating: "a1", count: 32), environment: .production, topic: "t"),
                payload: Data("{}".utf8), bidKey: "CHA202008250-home", createdAt: now, expiresAt: now + 1800,
                deviceRegisteredAt: now - 86_400, attempts: attempts, tokenRefreshed: false)
        }
    }

    static func machine(concurrency: Int = 4) -> DispatchMachine {
        var settings = DispatchMachine.Settings()
        settings.concurrency = concurrency
        return DispatchMachine(settings: settings, start: start)
    }

    static let always: @Sendable (ClaimedDelivery) -> Bool = { _ in true }

    /// The slots and deliveries of the send actions.
    static func sends(_ actions: [DispatchMachine.Action]) -> [(first: Int, ids: [UUID])] {
        actions.compactMap { if case .send(let first, let claimed) = $0 { (first, claimed.map(\.id)) } else { nil } }
    }

    @Test func firstItClaimsTwiceWhatItSendsAtOnceThenWaits() {
        var machine = Self.machine(concurrency: 4)
        #expect(machine.next(now: Self.start, mayStillSend: Self.always) == [.claim(limit: 8), .awaitEvent])
        // Nothing more while the claim is out.
        #expect(machine.next(now: Self.start, mayStillSend: Self.always) == [.awaitEvent])
        // Nothing due: idle, and it claims again once woken.
        machine.claimed([])
        #expect(machine.next(now: Self.start, mayStillSend: Self.always) == [.idle])
        machine.woke()
        #expect(machine.next(now: Self.start, mayStillSend: Self.always) == [.claim(limit: 8), .awaitEvent])
    }

    @Test func itSendsNoMoreThanItsConcurrencyAndListensForTheAnswers() {
        var machine = Self.machine(concurrency: 4)
        _ = machine.next(now: Self.start, mayStillSend: Self.always)
        let claimed = Self.claimed(6)
        machine.claimed(claimed)
        let actions = machine.next(now: Self.start, mayStillSend: Self.always)
        let sends = Self.sends(actions)
        #expect(sends.count == 1)
        #expect(sends.first?.first == 0)
        #expect(sends.first?.ids == claimed.prefix(4).map(\.id))
        #expect(actions.contains(.listen))
        #expect(actions.last == .awaitEvent)
        // Two are waiting; no more are sent until answers free room.
        #expect(machine.waiting == 2)
        #expect(Self.sends(machine.next(now: Self.start, mayStillSend: Self.always)).isEmpty)
        machine.sent()
        let answered = machine.answered([(0, .accepted), (1, .accepted)], now: Self.now) { 0.5 }
        #expect(answered.decisions.map(\.action) == [.markDelivered, .markDelivered])
        let more = Self.sends(machine.next(now: Self.start, mayStillSend: Self.always))
        #expect(more.first?.first == 4)
        #expect(more.first?.ids == claimed.suffix(2).map(\.id))
    }

    @Test func eachKindOfAnswerBecomesItsResult() {
        var machine = Self.machine(concurrency: 8)
        _ = machine.next(now: Self.start, mayStillSend: Self.always)
        let claimed = Self.claimed(6)
        machine.claimed(claimed)
        _ = machine.next(now: Self.start, mayStillSend: Self.always)
        let outcomes: [ProviderOutcome] = [
            .accepted, .transient(reason: "429 TooManyRequests", retryAfter: 30),
            .gone(reason: "Unregistered", since: Self.now), .rejected(status: 400, reason: "BadDeviceToken"),
            .connectionLost(reason: "GOAWAY"), .expiredProviderToken,
        ]
        let (decisions, resend) = machine.answered(
            Array(outcomes.enumerated().map { ($0.offset, $0.element) }), now: Self.now
        ) { 0.5 }
        #expect(decisions.map(\.delivery.id) == claimed.map(\.id))
        #expect(
            decisions.map(\.action) == [
                .markDelivered, .retry(at: Self.now + 30, reason: "429 TooManyRequests"),
                .pruneDevice(reason: "Unregistered"), .fail(reason: "400 BadDeviceToken"),
                .retry(at: Self.now, reason: "GOAWAY"), .refreshTokenAndRetry,
            ])
        #expect(
            machine.results == [
                .delivered(id: claimed[0].id, at: Self.now),
                .retry(id: claimed[1].id, at: Self.now + 30, reason: "429 TooManyRequests", tokenRefreshed: false),
                .pruned(id: claimed[2].id, deviceID: claimed[2].deviceID, reason: "Unregistered", at: Self.now),
                .failed(id: claimed[3].id, reason: "400 BadDeviceToken", at: Self.now),
                .retry(id: claimed[4].id, at: Self.now, reason: "GOAWAY", tokenRefreshed: false),
            ])
        // The one refused for its credentials goes out again (after the refresh), in a new slot,
        // marked as refreshed: a second refusal is then backed off, not refreshed again.
        #expect(resend.map(\.claimed.id) == [claimed[5].id])
        #expect(resend.first?.retry.tokenRefreshed == true)
        let again = machine.resend(resend, mayStillSend: Self.always)
        #expect(Self.sends(again).map(\.first) == [6])
        let second = machine.answered([(6, .expiredProviderToken)], now: Self.now) { 0 }
        #expect(second.resend.isEmpty)
        #expect(
            second.decisions.map(\.action) == [
                .retry(at: Self.now, reason: "ExpiredProviderToken after a refresh")
            ])
        // An answer for no delivery in flight (twice, or unknown) changes nothing.
        let stray = machine.answered([(6, .accepted), (99, .accepted)], now: Self.now) { 0 }
        #expect(stray.decisions.isEmpty)
    }

    /// A refusal for the server's configuration is held, not failed and not sent again.
    @Test func aConfigurationRefusalIsHeld() {
        var machine = Self.machine(concurrency: 8)
        _ = machine.next(now: Self.start, mayStillSend: Self.always)
        let claimed = Self.claimed(2)
        machine.claimed(claimed)
        _ = machine.next(now: Self.start, mayStillSend: Self.always)
        let (decisions, resend) = machine.answered(
            [(0, .misconfigured(reason: "TopicDisallowed")), (1, .accepted)], now: Self.now
        ) { 0.5 }
        #expect(resend.isEmpty)
        #expect(decisions.map(\.action) == [.hold(reason: "TopicDisallowed"), .markDelivered])
        #expect(
            machine.results == [
                .held(id: claimed[0].id, reason: "TopicDisallowed", at: Self.now),
                .delivered(id: claimed[1].id, at: Self.now),
            ])
    }

    @Test func resultsAreRecordedInBatchesAndAtOnceWhenNothingIsInFlight() {
        var settings = DispatchMachine.Settings()
        settings.concurrency = 8
        settings.flushEvery = 3
        settings.flushInterval = .seconds(1)
        var machine = DispatchMachine(settings: settings, start: Self.start)
        _ = machine.next(now: Self.start, mayStillSend: Self.always)
        machine.claimed(Self.claimed(5))
        _ = machine.next(now: Self.start, mayStillSend: Self.always)
        // Two answers, three still in flight, within the interval: not yet recorded.
        _ = machine.answered([(0, .accepted), (1, .accepted)], now: Self.now) { 0 }
        var actions = machine.next(now: Self.start + .milliseconds(10), mayStillSend: Self.always)
        #expect(!actions.contains { if case .record = $0 { true } else { false } })
        // A third: the batch is full.
        _ = machine.answered([(2, .accepted)], now: Self.now) { 0 }
        actions = machine.next(now: Self.start + .milliseconds(20), mayStillSend: Self.always)
        #expect(actions.contains { if case .record(let results) = $0 { results.count == 3 } else { false } })
        // One recording at a time; the last two answers are recorded once it is back and nothing
        // is in flight.
        _ = machine.answered([(3, .accepted), (4, .accepted)], now: Self.now) { 0 }
        actions = machine.next(now: Self.start + .seconds(5), mayStillSend: Self.always)
        #expect(!actions.contains { if case .record = $0 { true } else { false } })
        machine.recorded()
        actions = machine.next(now: Self.start + .seconds(5), mayStillSend: Self.always)
        #expect(actions.contains { if case .record(let results) = $0 { results.count == 2 } else { false } })
    }

    @Test func aDeliveryWhoseLeaseMayHaveLapsedIsGivenBackNotSent() {
        var machine = Self.machine(concurrency: 4)
        _ = machine.next(now: Self.start, mayStillSend: Self.always)
        let claimed = Self.claimed(3)
        machine.claimed(claimed)
        let lapsed = claimed[1].id
        let actions = machine.next(now: Self.start) { $0.id != lapsed }
        #expect(actions.contains(.release([lapsed])))
        #expect(Self.sends(actions).first?.ids == [claimed[0].id, claimed[2].id])
        // Every lease lapsed: nothing is sent, nothing is listened for.
        var other = Self.machine(concurrency: 4)
        _ = other.next(now: Self.start, mayStillSend: Self.always)
        other.claimed(claimed)
        let none = other.next(now: Self.start) { _ in false }
        #expect(none.contains(.release(claimed.map(\.id))))
        #expect(Self.sends(none).isEmpty)
        #expect(!none.contains(.listen))
    }

    @Test func stoppingFinishesWhatIsInFlightAndGivesBackWhatWasNotSent() {
        var machine = Self.machine(concurrency: 2)
        _ = machine.next(now: Self.start, mayStillSend: Self.always)
        let claimed = Self.claimed(3)
        machine.claimed(claimed)
        let sending = machine.next(now: Self.start, mayStillSend: Self.always)
        #expect(Self.sends(sending).first?.ids == claimed.prefix(2).map(\.id))
        machine.stop()
        // The send and its listener are out: it waits for them, and claims and sends nothing new.
        #expect(machine.next(now: Self.start, mayStillSend: Self.always) == [.awaitEvent])
        machine.sent()
        #expect(machine.next(now: Self.start, mayStillSend: Self.always) == [.awaitEvent])
        _ = machine.answered([(0, .accepted), (1, .transient(reason: "503", retryAfter: nil))], now: Self.now) {
            0
        }
        let finish = machine.next(now: Self.start, mayStillSend: Self.always)
        #expect(
            finish == [
                .finish(
                    record: [
                        .delivered(id: claimed[0].id, at: Self.now),
                        .retry(id: claimed[1].id, at: Self.now, reason: "503", tokenRefreshed: false),
                    ],
                    release: [claimed[2].id])
            ])
    }

    @Test func aClaimOutWhenItStopsIsWaitedForAndGivenBack() {
        var machine = Self.machine(concurrency: 2)
        #expect(machine.next(now: Self.start, mayStillSend: Self.always) == [.claim(limit: 4), .awaitEvent])
        machine.stop()
        #expect(machine.next(now: Self.start, mayStillSend: Self.always) == [.awaitEvent])
        let late = Self.claimed(2)
        machine.claimed(late)
        #expect(
            machine.next(now: Self.start, mayStillSend: Self.always) == [.finish(record: [], release: late.map(\.id))])
    }
}

extension DispatchMachineTests {
    /// A delivery not put on the wire (its time to be sent had passed: this process was held up)
    /// is neither a result nor an attempt: it goes back to the front of the queue, sent again with
    /// the next send if its lease still holds, given back if not.
    @Test func aDeliveryNotSentIsSentAgainWhileItsLeaseHoldsAndGivenBackOnceItMayHaveLapsed() {
        var machine = Self.machine(concurrency: 4)
        _ = machine.next(now: Self.start, mayStillSend: Self.always)
        let claimed = Self.claimed(3)
        machine.claimed(claimed)
        _ = machine.next(now: Self.start, mayStillSend: Self.always)
        machine.sent()
        let notSent = ProviderOutcome.notSent(reason: "its time to be sent had passed")
        let answered = machine.answered([(0, notSent), (1, .accepted), (2, notSent)], now: Self.now) { 0.5 }
        #expect(answered.decisions.map(\.delivery.id) == [claimed[1].id])
        #expect(answered.resend.isEmpty)
        #expect(machine.results == [.delivered(id: claimed[1].id, at: Self.now)])
        #expect(machine.waiting == 2)
        // The first still holds its lease, the third may not.
        let actions = machine.next(now: Self.start, mayStillSend: { $0.id != claimed[2].id })
        #expect(Self.sends(actions).map(\.ids) == [[claimed[0].id]])
        #expect(actions.contains(.release([claimed[2].id])))
        #expect(machine.waiting == 0)
    }
}
