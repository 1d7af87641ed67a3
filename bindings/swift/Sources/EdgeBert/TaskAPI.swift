// TaskAPI: the C functions added with the task heads, looked up at run time so these bindings
// also work (reporting .unsupported) with a libedgebert that predates them.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CEdgeBert

enum TaskAPI {
    typealias RunTextPair = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> eb_status
    typealias TokenOffsetsFn = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafePointer<Int32>?>?,
                                               UnsafeMutablePointer<UnsafePointer<Int32>?>?,
                                               UnsafeMutablePointer<UnsafePointer<Int32>?>?,
                                               UnsafeMutablePointer<Int>?) -> eb_status
    typealias BestSpan = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<eb_span>?) -> eb_status
    typealias GetLabel = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> eb_status

    private static let process = dlopen(nil, RTLD_NOW)

    static func function<T>(_ name: String, as type: T.Type) throws -> T {
        guard let symbol = dlsym(process, name) else {
            throw EdgeBertError(.unsupported, "the loaded libedgebert lacks \(name) (older than these bindings)")
        }
        return unsafeBitCast(symbol, to: type)
    }
}
