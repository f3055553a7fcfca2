import FakeProviders
import Foundation
import Testing

extension InstancesTests {
    /// How a day ended with one instance set apart by a fault (on a fake APNs of its own, so that
    /// every request is known by its sender) and the others on the harness's fake: what each fake
    /// accepted, the outbox's rows, and what the promise allows.
    struct Verdict {
        typealias Row = (
            id: UUID, state: Int, attempts: Int, resentInDoubt: Int, error: String?, leaseOwner: String?,
            takenFrom: String?
        )
        /// Acceptances by `apns-id`, on both fakes.
        let counts: [String: Int]
        let othersAccepted: Set<String>
        let rows: [Row]
        let superseded: Set<String>
        /// Rows taken back from the instance set apart (`apart`: its name, where it has faults of
        /// its own: what is taken back from it is their doubt).
        let takenFromApart: Set<String>
        /// Rows taken back from another instance: it stalled past its lease on a loaded machine
        /// with deliveries in flight, in doubt as the one set apart's are.
        let lapsed: Set<String>
        /// Requests an instance gave up on while a fake held them: delivered at the release all
        /// the same, as a provider that had them would, and so in doubt for their sender.
        let gaveUp: Set<String>
        let missing: Set<String>
        let unexpected: Set<String>
        let repeated: Set<String>

        init(
            harness: Harness, own: FakeProviderServer, others: FakeProviderServer, expected: Set<String>,
            apart: String?
        ) async throws {
            let ownAccepted = own.state.accepted
            let othersAccepted = others.state.accepted
            var counts: [String: Int] = [:]
            for (id, count) in ownAccepted + othersAccepted { counts[id, default: 0] += count }
            self.counts = counts
            self.othersAccepted = Set(othersAccepted.map(\.apnsID))
            rows = try await harness.store { try await $0.outboxRows() }
            func ids(_ rows: [Row]) -> Set<String> { Set(rows.map { $0.id.uuidString.lowercased() }) }
            superseded = ids(rows.filter { $0.state == 4 })
            let rows = rows
            takenFromApart = apart.map { apart in ids(rows.filter { $0.takenFrom == apart }) } ?? []
            lapsed = ids(rows.filter { $0.takenFrom.map { $0 != apart } ?? false })
            gaveUp = own.state.gaveUpAPNsIDs.union(others.state.gaveUpAPNsIDs)
            missing = expected.subtracting(counts.keys).subtracting(superseded)
            unexpected = Set(counts.keys).subtracting(expected)
            repeated = Set(counts.filter { $0.value > 1 }.keys)
        }

        /// The promise: every row delivered or superseded (none failed, none left), every planned
        /// alert accepted, nothing else, and a repeat only for a delivery in doubt — at a fault
        /// (`inDoubtAt`: what each left in doubt), or lapsed, or given up on — each doubt allowing
        /// one send more.
        func expectThePromise(inDoubtAt faults: [Set<String>], _ label: String) {
            let inDoubt = faults.reduce(into: Set<String>()) { $0.formUnion($1) }
            for row in rows where row.state != 2 && row.state != 4 {
                print("\(label): left in state \(row.state): \(row)")
            }
            let held = rows.filter { inDoubt.contains($0.id.uuidString.lowercased()) }
            #expect(held.allSatisfy { $0.state == 2 || $0.state == 4 }, "\(held.filter { $0.state != 2 }) (\(label))")
            #expect(rows.allSatisfy { $0.state == 2 || $0.state == 4 }, "\(label)")
            #expect(missing.isEmpty, "\(missing.count) missing (\(label))")
            #expect(unexpected.isEmpty, "\(label)")
            let others = lapsed.union(gaveUp)
            let allowed = inDoubt.union(others)
            #expect(repeated.isSubset(of: allowed), "\(repeated.subtracting(allowed).count) repeated (\(label))")
            #expect(superseded.isSubset(of: allowed), "\(label)")
            // One doubt, one send more: a fault's, or a lapse (which may be the fault's doubt seen
            // again, so not added to it); and one more for a request given up on while the fake held
            // it (the instance's deadline passed): the fake delivered it all the same, and the
            // instance sent it again, a send of its own beside the fault's (seen under a loaded full
            // run: held through a crash, given up, resent, and its outcome's write lost to the crash).
            let overSent = repeated.filter { id in
                let doubts =
                    max(faults.filter { $0.contains(id) }.count, lapsed.contains(id) ? 1 : 0)
                    + (gaveUp.contains(id) ? 1 : 0)
                return counts[id, default: 0] > 1 + doubts
            }
            for id in overSent.sorted().prefix(10) {
                let row = rows.first { $0.id.uuidString.lowercased() == id }
                print(
                    "\(label): \(id) accepted \(counts[id, default: 0]) times (in doubt at "
                        + "\(faults.filter { $0.contains(id) }.count) faults, lapsed \(lapsed.contains(id)), given up "
                        + "on while held \(gaveUp.contains(id))): \(String(describing: row))")
            }
            #expect(overSent.isEmpty, "\(label)")
        }

        /// Every game followed by one instance at a time, to its end, in one run, its log the
        /// replayed game's items, item by item.
        static func expectFollowedOneAtATime(_ harness: Harness, _ label: String) async throws {
            let said = try InstancesTests.dayItems()
            let report = try await harness.store { store in
                let runs = try await store.runIDs()
                try #require(runs.count == 1, "one run for every instance: \(runs)")
                return try await InstancesTests.followReport(store: store, run: runs[0], said: said)
            }
            print("\(label): \(report.summary)")
            #expect(report.problems.isEmpty, "\(report.problems) (\(label))")
            #expect(report.games == 16)
        }
    }
}
