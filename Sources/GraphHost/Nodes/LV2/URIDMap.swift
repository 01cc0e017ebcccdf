import CLV2
import CLilv
import FoundationEssentials
import Glibc
import Synchronization

/// The urid:map and urid:unmap features: URIs to integers and back, growing without bound and safe to
/// call from several threads (a mutex guards it; plugins map at instantiation, never in run()).
public final class URIDMap: Sendable {
    private struct Table {
        var ids: [String: LV2_URID] = [:]
        /// The URIs by URID - 1, as C strings that live as long as the process (plugins keep unmapped pointers).
        var uris: [UnsafeMutablePointer<CChar>] = []
    }
    private let table = Mutex(Table())
    /// The features plugins receive: written once here, then only read.
    nonisolated(unsafe) let mapFeature: UnsafeMutablePointer<LV2_URID_Map>
    nonisolated(unsafe) let unmapFeature: UnsafeMutablePointer<LV2_URID_Unmap>

    public static let shared = URIDMap()

    private init() {
        mapFeature = .allocate(capacity: 1)
        unmapFeature = .allocate(capacity: 1)
        let handle = Unmanaged.passUnretained(self).toOpaque()
        mapFeature.initialize(
            to: LV2_URID_Map(
                handle: handle,
                map: { handle, uri in
                    guard let handle, let uri else { return 0 }
                    return Unmanaged<URIDMap>.fromOpaque(handle).takeUnretainedValue().map(String(cString: uri))
                }))
        unmapFeature.initialize(
            to: LV2_URID_Unmap(
                handle: handle,
                unmap: { handle, urid in
                    guard let handle else { return nil }
                    return Unmanaged<URIDMap>.fromOpaque(handle).takeUnretainedValue().unmapPointer(urid)
                }))
    }

    public func map(_ uri: String) -> LV2_URID {
        table.withLock { table in
            if let id = table.ids[uri] { return id }
            table.uris.append(strdup(uri))
            let id = LV2_URID(table.uris.count)
            table.ids[uri] = id
            return id
        }
    }

    public func unmap(_ urid: LV2_URID) -> String? {
        unmapPointer(urid).map { String(cString: $0) }
    }

    fileprivate func unmapPointer(_ urid: LV2_URID) -> UnsafePointer<CChar>? {
        table.withLock { table in
            urid >= 1 && Int(urid) <= table.uris.count ? UnsafePointer(table.uris[Int(urid) - 1]) : nil
        }
    }

    public var count: Int { table.withLock { $0.uris.count } }

    /// Every URI mapped so far, in URID order.
    public var uris: [String] { table.withLock { $0.uris.map { String(cString: $0) } } }

    /// Maps `uris` in order (a helper process taking its host's table); false when this map already holds a URI at
    /// another number.
    public func take(_ uris: [String]) -> Bool {
        uris.enumerated().allSatisfy { map($0.element) == LV2_URID($0.offset + 1) }
    }
}
