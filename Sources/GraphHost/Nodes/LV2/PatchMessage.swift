import CLV2
import FoundationEssentials
import Glibc

/// patch:Set and patch:Get messages for plugin properties, as the bytes of an atom:Object (control world; the kernel
/// copies them into the plugin's control sequence).
enum PatchMessage {
    /// A patch:Get with no property: the plugin is asked to report every property's value on its notify port.
    static func get() -> [UInt8] {
        let map = URIDMap.shared
        return bytes(of: UInt32(8)) + bytes(of: map.map(LV2URI.atomObject)) + bytes(of: UInt32(0))
            + bytes(of: map.map(LV2URI.patchGet))
    }

    /// The value of `property` given as text: a path (must name a readable file), a number, a boolean or a string,
    /// as the property's range says. Throws the reason when the text does not fit.
    static func set(_ property: LV2Property, text: String) throws -> [UInt8] {
        let map = URIDMap.shared
        var value: (type: String, bytes: [UInt8])
        switch property.range {
        case LV2URI.atomPath?:
            let path = Format.expandingTilde(text)
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw NodeCommandError.invalidValue(
                    "\(property.symbol): cannot read '\(path)' "
                        + "(\(FileManager.default.fileExists(atPath: path) ? "permission denied" : "no such file"))"
                )
            }
            value = (LV2URI.atomPath, Array(URL(fileURLWithPath: path).standardizedFileURL.path.utf8) + [0])
        case LV2URI.atomFloat?, LV2URI.atomDouble?:
            guard let number = Float(text), number.isFinite else {
                throw NodeCommandError.invalidValue("\(property.symbol) takes a number, not '\(text)'")
            }
            value = (LV2URI.atomFloat, bytes(of: number))
        case LV2URI.atomInt?, LV2URI.atomLong?:
            guard let number = Int32(text) else {
                throw NodeCommandError.invalidValue("\(property.symbol) takes a whole number, not '\(text)'")
            }
            value = (LV2URI.atomInt, bytes(of: number))
        case LV2URI.atomBool?:
            guard
                let flag = [
                    "on": true, "true": true, "yes": true, "1": true, "off": false, "false": false, "no": false,
                    "0": false,
                ][text.lowercased()]
            else {
                throw NodeCommandError.invalidValue("\(property.symbol) takes on or off, not '\(text)'")
            }
            value = (LV2URI.atomBool, bytes(of: Int32(flag ? 1 : 0)))
        default:
            value = (LV2URI.atomString, Array(text.utf8) + [0])
        }
        // patch:property: a URID; patch:value: the value. Each property body is padded to 8 bytes.
        var body = bytes(of: UInt32(0)) + bytes(of: map.map(LV2URI.patchSet))
        body += bytes(of: map.map(LV2URI.patchProperty)) + bytes(of: UInt32(0))
        body += bytes(of: UInt32(4)) + bytes(of: map.map(LV2URI.atomURID)) + bytes(of: map.map(property.uri))
        body = padded(body)
        body += bytes(of: map.map(LV2URI.patchValue)) + bytes(of: UInt32(0))
        body += bytes(of: UInt32(value.bytes.count)) + bytes(of: map.map(value.type)) + value.bytes
        body = padded(body)
        return bytes(of: UInt32(body.count)) + bytes(of: map.map(LV2URI.atomObject)) + body
    }

    /// The property URI and the value as text of a patch:Set object (atom header included); nil for anything else.
    static func parseSet(_ object: UnsafeRawBufferPointer) -> (uri: String, text: String)? {
        let map = URIDMap.shared
        func u32(_ at: Int) -> UInt32? {
            at + 4 <= object.count ? object.loadUnaligned(fromByteOffset: at, as: UInt32.self) : nil
        }
        guard let size = u32(0), Int(size) + 8 <= object.count, u32(4) == map.map(LV2URI.atomObject),
            u32(12) == map.map(LV2URI.patchSet)
        else { return nil }
        var property: UInt32?
        var value: (type: UInt32, body: UnsafeRawBufferPointer)?
        var offset = 16
        while offset + 16 <= 8 + Int(size), let key = u32(offset), let length = u32(offset + 8),
            let type = u32(offset + 12)
        {
            let body = offset + 16
            let end = body + Int(length)
            guard end <= object.count else { return nil }
            if key == map.map(LV2URI.patchProperty), type == map.map(LV2URI.atomURID), length >= 4 {
                property = u32(body)
            }
            if key == map.map(LV2URI.patchValue) {
                value = (type, UnsafeRawBufferPointer(rebasing: object[body..<end]))
            }
            offset = (end + 7) & ~7
        }
        guard let property, let uri = map.unmap(property), let (type, body) = value else { return nil }
        switch map.unmap(type) {
        case LV2URI.atomPath?, LV2URI.atomString?:
            return (uri, String(decoding: body.prefix { $0 != 0 }, as: UTF8.self))
        case LV2URI.atomFloat? where body.count >= 4:
            return (uri, Format.number(body.loadUnaligned(as: Float.self)))
        case LV2URI.atomDouble? where body.count >= 8:
            return (uri, Format.number(body.loadUnaligned(as: Double.self)))
        case LV2URI.atomInt? where body.count >= 4:
            return (uri, String(body.loadUnaligned(as: Int32.self)))
        case LV2URI.atomLong? where body.count >= 8:
            return (uri, String(body.loadUnaligned(as: Int64.self)))
        case LV2URI.atomBool? where body.count >= 4:
            return (uri, body.loadUnaligned(as: Int32.self) != 0 ? "on" : "off")
        default:
            return nil
        }
    }

    /// Why `text` cannot be the value of `property`, or nil when it can.
    static func problem(_ property: LV2Property, text: String) -> String? {
        do {
            _ = try set(property, text: text)
            return nil
        } catch {
            return "\(error)"
        }
    }

    static func bytes<T>(of value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }

    static func padded(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: (8 - bytes.count % 8) % 8) }
}
