import ArgumentParser
import Foundation
import Storage

/// `nohit analytics`: the Keen-compatible analytics' projects.
struct AnalyticsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analytics",
        abstract: "Keen-compatible app analytics: projects and their keys.",
        subcommands: [Project.self]
    )

    struct Project: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create and list analytics projects.", subcommands: [Create.self, List.self])

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
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
            static let configuration = CommandConfiguration(abstract: "List the projects.")
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
