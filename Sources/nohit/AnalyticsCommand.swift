import Analytics
import ArgumentParser
import Foundation
import JSON
import Storage
import Synchronization

/// `nohit analytics`: the Keen-compatible analytics' projects.
struct AnalyticsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analytics",
        abstract: "Keen-compatible app analytics: projects and their keys, and a collection's events out.",
        subcommands: [Project.self, Export.self]
    )

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write a collection's events out, every one, in time order, a page at a time: NDJSON (each "
                + "event as Keen returns it) or CSV (the keen columns, then a column per property path).",
            discussion: """
                An export cut short is resumed with --after-timestamp and --after-id, the last event's \
                keen.timestamp and keen.id written: nothing before or at it is written again, and the \
                output file is appended to.
                """)

        @OptionGroup var store: StoreOptions
        @Argument(help: "The project's id.") var project: String
        @Argument(help: "The event collection.") var collection: String
        @Option(help: "ndjson or csv.") var format = "ndjson"
        @Option(help: "Only events from this time on (ISO 8601, as keen.timestamp).") var start: String?
        @Option(help: "Only events before this time (ISO 8601).") var end: String?
        @Option(help: "Resume after the event of this keen.timestamp…") var afterTimestamp: String?
        @Option(help: "…and this keen.id.") var afterId: String?
        @Option(help: "Only events that pass these filters: Keen's, as JSON (a query's \"filters\" list).")
        var filters: String?
        @Option(name: .shortAndLong, help: "The file to write (standard output by default).") var output: String?

        func run() async throws {
            let format: EventExport.Format
            do {
                format = try EventExport.Format.parse(self.format, name: "--format")
            } catch {
                throw ValidationError(error.message)
            }
            func time(_ text: String?, _ name: String) throws -> Int64? {
                guard let text else { return nil }
                guard let time = KeenTime.parse(text) else {
                    throw ValidationError("--\(name): '\(text)' is not a time (ISO 8601, as 2026-10-01T00:00:00Z)")
                }
                return time
            }
            let timeframe = Timeframe(
                start: try time(start, "start") ?? Timeframe.allTime.start,
                end: try time(end, "end") ?? Timeframe.allTime.end)
            let passing: [KeenFilter]
            do {
                passing = try KeenFilter.parseList(try filters.map { try JSONValue.parse($0) })
            } catch let error as KeenError {
                throw ValidationError("--filters: \(error.message)")
            } catch {
                throw ValidationError("--filters: not JSON (\(error))")
            }
            let cursor: EventExport.Cursor?
            do {
                cursor = try EventExport.Cursor.parse(
                    timestamp: afterTimestamp, id: afterId, names: ("--after-timestamp", "--after-id"))
            } catch {
                throw ValidationError(error.message)
            }
            let out: FileHandle
            var header: String?
            if let output {
                if cursor == nil || !FileManager.default.fileExists(atPath: output) {
                    guard FileManager.default.createFile(atPath: output, contents: nil) else {
                        throw ValidationError("--output: cannot create \(output)")
                    }
                }
                guard let handle = FileHandle(forUpdatingAtPath: output) else {
                    throw ValidationError("--output: cannot write to \(output)")
                }
                // Resumed into what an interrupted run wrote: a last line it did not finish is cut off
                // (its event comes again after the cursor), and a CSV's header is kept to be checked.
                if cursor != nil { header = try AnalyticsCommand.trimToLastLine(handle, path: output) }
                try handle.seekToEnd()
                out = handle
            } else {
                out = FileHandle.standardOutput
            }
            let (project, collection, resumed, kept) = (self.project, self.collection, cursor, header)
            let progress = ExportProgress(resumed)
            do {
                try await store.withStore(existing: true) { opened in
                    guard let analytics = opened.store as? any AnalyticsStore else {
                        throw ValidationError("\(opened.name) keeps no analytics")
                    }
                    guard
                        let schema = try await analytics.schema(project: project).first(where: {
                            $0.name == collection
                        })
                    else {
                        throw ValidationError("no event collection '\(collection)' in project \(project)")
                    }
                    let paths = EventExport.columns(schema.properties.map(\.path))
                    if format == .csv {
                        if let kept, !kept.isEmpty {
                            guard kept == EventExport.csvHeader(paths) else {
                                throw ValidationError(
                                    "the collection's properties are not the ones the file's header names (its "
                                        + "header: \(kept.prefix(200).trimmingCharacters(in: .newlines))); export it again whole"
                                )
                            }
                        } else {
                            try out.write(contentsOf: Data(EventExport.csvHeader(paths).utf8))
                        }
                    }
                    var after = resumed
                    while true {
                        let page = try await analytics.exportPage(
                            project: project, collection: collection, timeframe: timeframe, after: after,
                            limit: EventExport.pageSize, filters: passing)
                        try out.write(contentsOf: Data(EventExport.text(page, format: format, columns: paths).utf8))
                        guard let last = page.last else { break }
                        progress.wrote(page.count, through: last.cursor)
                        after = last.cursor
                        if page.count < EventExport.pageSize { break }
                    }
                }
                if output != nil { try out.synchronize() }
            } catch {
                // What was written is whole up to the last page: said, so the run is resumed from it.
                FileHandle.standardError.write(Data((progress.said(project, collection, to: output) + "\n").utf8))
                throw error
            }
            FileHandle.standardError.write(Data((progress.said(project, collection, to: output) + "\n").utf8))
        }
    }

    /// How far an export got: events written and the last one's cursor.
    final class ExportProgress: Sendable {
        let state: Mutex<(count: Int, last: EventExport.Cursor?)>

        init(_ resumed: EventExport.Cursor?) { state = Mutex((0, resumed)) }

        func wrote(_ count: Int, through last: EventExport.Cursor) {
            state.withLock { $0 = ($0.count + count, last) }
        }

        func said(_ project: String, _ collection: String, to output: String?) -> String {
            let (count, last) = state.withLock { $0 }
            var said = "nohit: exported \(count) events of \(project)/\(collection) to \(output ?? "standard output")"
            if let last {
                said +=
                    "; the last: keen.timestamp \(KeenTime.format(last.timestamp)), keen.id \(QueryEngine.eventID(last.rowID))"
                    + " (--after-timestamp \(KeenTime.format(last.timestamp)) --after-id \(QueryEngine.eventID(last.rowID)) resumes after it)"
            }
            return said
        }
    }

    /// Cuts an interrupted export's file back to its last whole line; its first line (a CSV's
    /// header), or nil for an empty file.
    static func trimToLastLine(_ handle: FileHandle, path: String) throws -> String? {
        let size = try handle.seekToEnd()
        guard size > 0 else { return nil }
        let tail = min(size, 2 << 20)
        try handle.seek(toOffset: size - tail)
        let bytes = try handle.read(upToCount: Int(tail)) ?? Data()
        guard let newline = bytes.lastIndex(of: 0x0A) else {
            throw ValidationError("\(path) holds no whole line in its last \(tail) bytes: export it again whole")
        }
        let keep = size - tail + UInt64(newline - bytes.startIndex + 1)
        if keep < size {
            try handle.truncate(atOffset: keep)
            FileHandle.standardError.write(
                Data("nohit: cut \(size - keep) bytes of an unfinished last line off \(path)\n".utf8))
        }
        try handle.seek(toOffset: 0)
        let first = try handle.read(upToCount: 1 << 16) ?? Data()
        guard let end = first.firstIndex(of: 0x0A) else { return String(decoding: first, as: UTF8.self) }
        return String(decoding: first[...end], as: UTF8.self)
    }

    struct Project: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "project",
            abstract: "Create and list analytics projects.", subcommands: [Create.self, List.self])

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "create",
                abstract: "Create a project and print its id and keys (shown once: only their hashes are kept).")

            @OptionGroup var store: StoreOptions
            @Argument(help: "The project's name.") var name: String
            @Option(help: "The project's id (letters, digits, '_', '-'); a random one by default.") var id: String?
            @Flag(help: "Print the project as JSON.") var json = false

            func run() async throws {
                let name = self.name
                let id = self.id
                let project = try await store.withStore { opened in
                    guard let analytics = opened.store as? any AnalyticsStore else {
                        throw ValidationError("\(opened.name) keeps no analytics projects")
                    }
                    return try await analytics.createProject(name: name, id: id, now: Date())
                }
                if json {
                    print(
                        #"{"project_id":"\#(project.id)","name":"\#(project.name)","master_key":"\#(project.masterKey)","write_key":"\#(project.writeKey)","read_key":"\#(project.readKey)"}"#
                    )
                } else {
                    print("project:    \(project.id) (\(project.name))")
                    print("master key: \(project.masterKey)")
                    print("write key:  \(project.writeKey)")
                    print("read key:   \(project.readKey)")
                }
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "list", abstract: "List the projects.")
            @OptionGroup var store: StoreOptions

            func run() async throws {
                let projects = try await store.withStore(existing: true) { opened in
                    guard let analytics = opened.store as? any AnalyticsStore else {
                        return [(id: String, name: String)]()
                    }
                    return try await analytics.analyticsProjects()
                }
                for project in projects { print("\(project.id)\t\(project.name)") }
            }
        }
    }
}
