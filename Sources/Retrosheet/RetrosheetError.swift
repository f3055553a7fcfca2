/// A problem with a Retrosheet file, with where it is and the text at fault.
package struct RetrosheetError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file it was read from.
    package var file: String
    /// 1-based line number, 0 when the problem is not on one line.
    package var line: Int
    /// The line as written.
    package var text: String
    /// What is wrong, and why it matters.
    package var reason: String
    /// The game it belongs to, when known.
    package var gameID: String?

    package init(file: String, line: Int, text: String, reason: String, gameID: String? = nil) {
        self.file = file
        self.line = line
        self.text = text
        self.reason = reason
        self.gameID = gameID
    }

    package var description: String {
        let game = gameID.map { " (game \($0))" } ?? ""
        let place = line > 0 ? "\(file):\(line)" : file
        return "\(place): \(reason)\(game)" + (text.isEmpty ? "" : ": \(text)")
    }
}
