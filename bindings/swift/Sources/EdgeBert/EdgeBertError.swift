// SPDX-License-Identifier: Apache-2.0
// EdgeBertError: a failed edgebert call, carrying the C eb_status and the C message.
import CEdgeBert

/// The C API's status codes (eb_status).
public enum Status: Int32, Sendable {
    case ok = 0
    case invalidArgument = 1
    case io = 2
    case invalidModel = 3
    case unsupported = 4
    case outOfMemory = 5
    case backend = 6
    case sequenceTooLong = 7
    case badState = 8
}

public struct EdgeBertError: Error, CustomStringConvertible, Sendable {
    /// The C eb_status code (an unknown code from a newer library maps to .backend).
    public let status: Status
    public let message: String

    public init(_ status: Status, _ message: String) {
        self.status = status
        self.message = message
    }

    init(code: eb_status, message: String) {
        self.init(Status(rawValue: Int32(truncatingIfNeeded: code.rawValue)) ?? .backend,
                  message.isEmpty ? String(cString: eb_status_string(code)) : message)
    }

    public var description: String { "edgebert error \(status.rawValue) (\(status)): \(message)" }
}
