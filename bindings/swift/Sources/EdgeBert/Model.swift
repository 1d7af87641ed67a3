// SPDX-License-Identifier: Apache-2.0
// Model: a loaded .ebm model (file or bytes, optionally with a packed-weight cache file), its info,
// label names, weight cache state and shared memory; creates Sessions.
import CEdgeBert
import Foundation

/// An immutable model: any number of sessions on any threads may share it. `close()` (or
/// deinit) closes the model's open sessions first; calls after close throw `.badState`.
public final class Model: @unchecked Sendable {
    private var handle: OpaquePointer?
    private var owned: UnsafeMutableRawPointer?  // aligned copy for init(data:)
    private var sessions: [ObjectIdentifier: WeakSession] = [:]
    private var closing = false
    private let lock = NSLock()

    /// Maps the file read-only and verifies it. With `weightCachePath` the packed GEMM weights are
    /// kept in that file: the first load writes it, later loads map it (never a load error of its
    /// own, never other outputs: `weightCache` says what happened).
    public init(path: String, weightCachePath: String? = nil) throws {
        guard !path.utf8.contains(0) else { throw EdgeBertError(.invalidArgument, "path contains a NUL character") }
        var error = [CChar](repeating: 0, count: 512)
        var m: OpaquePointer?
        let st: eb_status
        if let cache = weightCachePath {
            let load = try TaskAPI.function("eb_model_load_file_with_options", as: TaskAPI.LoadFileWithOptions.self)
            st = try Model.withLoadOptions(cache) { o in load(path, o, &m, &error, error.count) }
        } else {
            st = eb_model_load_file(path, &m, &error, error.count)
        }
        guard st == EB_OK else { throw EdgeBertError(code: st, message: String(cString: error)) }
        handle = m
    }

    /// Loads a model from bytes (copied once into 64-byte aligned memory the model owns),
    /// optionally with a weight cache file as `init(path:weightCachePath:)`.
    public init(data: Data, weightCachePath: String? = nil) throws {
        let size = data.count
        let memory = UnsafeMutableRawPointer.allocate(byteCount: max(size, 1), alignment: 64)
        data.copyBytes(to: memory.assumingMemoryBound(to: UInt8.self), count: size)
        var error = [CChar](repeating: 0, count: 512)
        var m: OpaquePointer?
        let st: eb_status
        do {
            if let cache = weightCachePath {
                let load = try TaskAPI.function("eb_model_load_memory_with_options", as: TaskAPI.LoadMemoryWithOptions.self)
                st = try Model.withLoadOptions(cache) { o in load(memory, size, o, &m, &error, error.count) }
            } else {
                st = eb_model_load_memory(memory, size, &m, &error, error.count)
            }
        } catch let failure {
            memory.deallocate()
            throw failure
        }
        guard st == EB_OK else {
            memory.deallocate()
            throw EdgeBertError(code: st, message: String(cString: error))
        }
        handle = m
        owned = memory
    }

    deinit { close() }

    // eb_load_options naming `cache` (valid during body).
    private static func withLoadOptions(_ cache: String, _ body: (UnsafePointer<eb_load_options>) -> eb_status) throws
        -> eb_status {
        guard !cache.utf8.contains(0) else {
            throw EdgeBertError(.invalidArgument, "weight cache path contains a NUL character")
        }
        let initOptions = try TaskAPI.function("eb_load_options_init", as: TaskAPI.LoadOptionsInit.self)
        return cache.withCString { path in
            var o = eb_load_options()
            initOptions(&o)
            o.weight_cache_path = path
            return withUnsafePointer(to: &o) { body($0) }
        }
    }

    // Runs body with the open model's handle under the lock, else throws .badState.
    private func withHandle<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        guard let h = handle, !closing else { throw EdgeBertError(.badState, "model is closed") }
        return try body(h)
    }

    public var info: ModelInfo {
        get throws {
            try withHandle { h in
                var i = eb_model_info()
                let st = eb_model_get_info(h, &i)
                guard st == EB_OK else { throw EdgeBertError(code: st, message: "") }
                return ModelInfo(i)
            }
        }
    }

    /// Name of label `index` (the checkpoint's id2label, else "LABEL_<i>").
    public func label(_ index: Int) throws -> String {
        let getLabel = try TaskAPI.function("eb_model_get_label", as: TaskAPI.GetLabel.self)
        guard let i = Int32(exactly: index) else { throw EdgeBertError(.invalidArgument, "label index out of range") }
        return try withHandle { h in
            var name: UnsafePointer<CChar>?
            let st = getLabel(h, i, &name)
            guard st == EB_OK, let n = name else { throw EdgeBertError(code: st, message: "no label \(index)") }
            return String(cString: n)
        }
    }

    /// What happened to this model's weight cache file, and why (message "" when nothing to say).
    public var weightCache: (state: WeightCacheState, message: String) {
        get throws {
            let get = try TaskAPI.function("eb_model_get_weight_cache", as: TaskAPI.GetWeightCache.self)
            return try withHandle { h in
                var state = eb_weight_cache_state(rawValue: 0)
                var message: UnsafePointer<CChar>?
                let st = get(h, &state, &message)
                guard st == EB_OK else { throw EdgeBertError(code: st, message: "") }
                guard let s = WeightCacheState(rawValue: UInt32(state.rawValue)) else {
                    throw EdgeBertError(.backend, "unknown weight cache state \(state.rawValue)")
                }
                return (s, message.map { String(cString: $0) } ?? "")
            }
        }
    }

    /// Memory shared by every session: packed GEMM weight bytes (0 on XNNPACK 2022) and the file size.
    public func memory() throws -> (packedWeights: Int, modelFile: Int) {
        let get = try TaskAPI.function("eb_model_get_memory", as: TaskAPI.GetModelMemory.self)
        return try withHandle { h in
            var packed = 0, file = 0
            let st = get(h, &packed, &file)
            guard st == EB_OK else { throw EdgeBertError(code: st, message: "") }
            return (packed, file)
        }
    }

    /// All label names in index order ([] without labels).
    public func labels() throws -> [String] {
        try (0..<info.numLabels).map { try label($0) }
    }

    /// A new session: threads (0 or 1 = single-threaded), maxSequenceLength (0 = the model's
    /// maximum), splitSpecialTokens, maxMemoryBytes (0 = no limit), maxBatchTokens (tokens of one
    /// packed run of embedMany / classifyMany: 0 = maxSequenceLength, else at least that).
    public func session(threads: Int = 1, maxSequenceLength: Int = 0, splitSpecialTokens: Bool = false,
                        maxMemoryBytes: UInt64 = 0, maxBatchTokens: Int = 0) throws -> Session {
        guard let t = Int32(exactly: threads), let n = Int32(exactly: maxSequenceLength),
              let batch = Int32(exactly: maxBatchTokens) else {
            throw EdgeBertError(.invalidArgument, "threads, maxSequenceLength and maxBatchTokens must fit in 32 bits")
        }
        let hidden = try info.hiddenSize
        return try withHandle { h in
            var o = eb_session_options()
            eb_session_options_init(&o)
            o.num_threads = t
            o.max_sequence_length = n
            o.split_special_tokens = splitSpecialTokens ? 1 : 0
            o.max_memory_bytes = maxMemoryBytes
            o.max_batch_tokens = batch
            var error = [CChar](repeating: 0, count: 512)
            var s: OpaquePointer?
            let st = eb_session_create(h, &o, &s, &error, error.count)
            guard st == EB_OK, let created = s else { throw EdgeBertError(code: st, message: String(cString: error)) }
            let session = Session(model: self, handle: created, hiddenSize: hidden)
            sessions[ObjectIdentifier(session)] = WeakSession(session)
            return session
        }
    }

    func forget(_ session: Session) {
        lock.lock()
        sessions[ObjectIdentifier(session)] = nil
        lock.unlock()
    }

    public var isClosed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return handle == nil || closing
    }

    /// Closes the open sessions, then frees the model. Idempotent.
    public func close() {
        lock.lock()
        if handle == nil || closing {
            lock.unlock()
            return
        }
        closing = true
        let open = sessions.values.compactMap { $0.session }
        lock.unlock()
        for s in open { s.close() }
        lock.lock()
        eb_model_free(handle)
        handle = nil
        owned?.deallocate()
        owned = nil
        lock.unlock()
    }
}

// A session the model does not keep alive (sessions keep their model alive instead).
private final class WeakSession {
    weak var session: Session?
    init(_ s: Session) { session = s }
}
