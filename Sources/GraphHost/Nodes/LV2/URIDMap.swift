import CLV2
import CLilv
import Foundation

/// The urid:map and urid:unmap features: URIs to integers and back, growing without bound and safe to
/// call from several threads (a lock guards it; plugins map at instantiation, never in run()).
public final class URIDMap {
    private let lock = NSLock()
    private var ids: [String: LV2_URID] = [:]
    private var uris: [UnsafeMutablePointer<CChar>] = []
    let mapFeature: UnsafeMutablePointer<LV2_URID_Map>
    let unmapFeature: UnsafeMutablePointer<LV2_URID_Unmap>

    public static let shared = URIDMap()

    private init() {
        mapFeature = .allocate(capacity: 1)
        unmapFeature = .allocate(capacity: 1)
        let handle = Unmanaged.passUnretained(self).toOpaque()
        mapFeature.initialize(to: LV2_URID_Map(handle: handle, map: { handle, uri in
            guard let handle, let uri else { return 0 }
            return Unmanaged<URIDMap>.fromOpaque(handle).takeUnretainedValue().map(String(cString: uri))
        }))
        unmapFeature.initialize(to: LV2_URID_Unmap(handle: handle, unmap: { handle, urid in
            guard let handle else { return nil }
            return Unmanaged<URIDMap>.fromOpaque(handle).takeUnretainedValue().unmapPointer(urid)
        }))
    }

    public func map(_ uri: String) -> LV2_URID {
        lock.withLock {
            if let id = ids[uri] { return id }
            uris.append(strdup(uri))
            let id = LV2_URID(uris.count)
            ids[uri] = id
            return id
        }
    }

    public func unmap(_ urid: LV2_URID) -> String? {
        unmapPointer(urid).map { String(cString: $0) }
    }

    fileprivate func unmapPointer(_ urid: LV2_URID) -> UnsafePointer<CChar>? {
        lock.withLock { urid >= 1 && Int(urid) <= uris.count ? UnsafePointer(uris[Int(urid) - 1]) : nil }
    }

    public var count: Int { lock.withLock { uris.count } }
}
