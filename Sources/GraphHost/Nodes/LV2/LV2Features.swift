import CLV2
import CLV2Glue
import CLilv
import FoundationEssentials
import Glibc
import Logging

/// The host features handed to every plugin instance: urid:map/unmap, options (sample rate, nominal block length
/// (the slice the host runs most of the time) and maximum block length, sequence size), bufsz:boundedBlockLength and
/// log. Lives as long as the instance.
final class LV2Features {
    static let sequenceSize = 65536
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    private let featureStructs: UnsafeMutablePointer<LV2_Feature>
    private let options: UnsafeMutablePointer<LV2_Options_Option>
    private let values: UnsafeMutablePointer<Int32>
    private let rate: UnsafeMutablePointer<Float>
    let log: OpaquePointer
    /// NULL-terminated array for lilv_plugin_instantiate.
    let array: UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>
    static let count = 8
    private let mapPath: UnsafeMutablePointer<LV2_State_Map_Path>
    private let makePath: UnsafeMutablePointer<LV2_State_Make_Path>
    private let freePath: UnsafeMutablePointer<LV2_State_Free_Path>

    /// Where plugins may create files (state:makePath).
    static let stateDirectory: String = {
        let base =
            ProcessInfo.processInfo.environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.temporaryDirectory.path
        return base + "/graphhost-lv2-state-\(getpid())"
    }()

    init(sampleRate: Int, nominalFrames: Int, maxFrames: Int) {
        let map = URIDMap.shared
        func uri(_ s: String) -> LV2_URID { map.map(s) }
        func c(_ s: String) -> UnsafeMutablePointer<CChar> {
            let p = strdup(s)!
            return p
        }
        rate = .allocate(capacity: 1)
        rate.initialize(to: Float(sampleRate))
        values = .allocate(capacity: 3)
        values.initialize(from: [Int32(nominalFrames), Int32(maxFrames), Int32(Self.sequenceSize)], count: 3)
        options = .allocate(capacity: 5)
        let floatType = uri("http://lv2plug.in/ns/ext/atom#Float")
        let intType = uri("http://lv2plug.in/ns/ext/atom#Int")
        let instance = LV2_OPTIONS_INSTANCE
        options.initialize(
            from: [
                LV2_Options_Option(
                    context: instance, subject: 0, key: uri("http://lv2plug.in/ns/ext/parameters#sampleRate"), size: 4,
                    type: floatType, value: rate),
                LV2_Options_Option(
                    context: instance, subject: 0, key: uri("http://lv2plug.in/ns/ext/buf-size#nominalBlockLength"),
                    size: 4, type: intType, value: values),
                LV2_Options_Option(
                    context: instance, subject: 0, key: uri("http://lv2plug.in/ns/ext/buf-size#maxBlockLength"),
                    size: 4, type: intType, value: values + 1),
                LV2_Options_Option(
                    context: instance, subject: 0, key: uri("http://lv2plug.in/ns/ext/buf-size#sequenceSize"), size: 4,
                    type: intType, value: values + 2),
                LV2_Options_Option(context: LV2_OPTIONS_INSTANCE, subject: 0, key: 0, size: 0, type: 0, value: nil),
            ], count: 5)
        log = gh_lv2_log_create(
            uri("http://lv2plug.in/ns/ext/log#Error"), uri("http://lv2plug.in/ns/ext/log#Warning"),
            uri("http://lv2plug.in/ns/ext/log#Note"), uri("http://lv2plug.in/ns/ext/log#Trace"))
        // Paths are stored as they are (absolute); made paths live under `stateDirectory`.
        mapPath = .allocate(capacity: 1)
        mapPath.initialize(
            to: LV2_State_Map_Path(
                handle: nil, abstract_path: { _, path in path.map { strdup($0) } ?? nil },
                absolute_path: { _, path in path.map { strdup($0) } ?? nil }))
        makePath = .allocate(capacity: 1)
        makePath.initialize(
            to: LV2_State_Make_Path(
                handle: nil,
                path: { _, path in
                    guard let path else { return nil }
                    let full = LV2Features.stateDirectory + "/" + String(cString: path)
                    try? FileManager.default.createDirectory(
                        atPath: URL(fileURLWithPath: full).deletingLastPathComponent().path,
                        withIntermediateDirectories: true)
                    return strdup(full)
                }))
        freePath = .allocate(capacity: 1)
        freePath.initialize(to: LV2_State_Free_Path(handle: nil, free_path: { _, path in free(path) }))
        let uris = [
            "http://lv2plug.in/ns/ext/urid#map", "http://lv2plug.in/ns/ext/urid#unmap",
            "http://lv2plug.in/ns/ext/options#options", "http://lv2plug.in/ns/ext/buf-size#boundedBlockLength",
            "http://lv2plug.in/ns/ext/log#log", "http://lv2plug.in/ns/ext/state#mapPath",
            "http://lv2plug.in/ns/ext/state#makePath", "http://lv2plug.in/ns/ext/state#freePath",
        ].map(c)
        cStrings = uris
        let data: [UnsafeMutableRawPointer?] = [
            UnsafeMutableRawPointer(map.mapFeature), UnsafeMutableRawPointer(map.unmapFeature),
            UnsafeMutableRawPointer(options), nil, gh_lv2_log_feature_data(log),
            UnsafeMutableRawPointer(mapPath), UnsafeMutableRawPointer(makePath),
            UnsafeMutableRawPointer(freePath),
        ]
        featureStructs = .allocate(capacity: Self.count)
        array = .allocate(capacity: Self.count + 1)
        for i in 0..<Self.count {
            (featureStructs + i).initialize(to: LV2_Feature(URI: uris[i], data: data[i]))
            array[i] = UnsafePointer(featureStructs + i)
        }
        array[Self.count] = nil
    }

    /// The nominal block length the options say.
    var nominalBlockLength: Int { Int(values.pointee) }

    /// Sets the nominal block length and returns the option saying it (its value lives as long as these features),
    /// followed by the terminating option, for an options interface's set().
    func settingNominalBlockLength(_ frames: Int) -> [LV2_Options_Option] {
        values.pointee = Int32(frames)
        return [options[1], options[4]]
    }

    /// The features plus worker:schedule for one instance, NULL-terminated; the caller frees the array.
    func array(
        scheduling schedule: UnsafeMutablePointer<LV2_Worker_Schedule>, feature: UnsafeMutablePointer<LV2_Feature>
    ) -> UnsafeMutablePointer<UnsafePointer<LV2_Feature>?> {
        feature.initialize(to: LV2_Feature(URI: Self.workerURI, data: UnsafeMutableRawPointer(schedule)))
        let list = UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>.allocate(capacity: Self.count + 2)
        for i in 0..<Self.count { list[i] = array[i] }
        list[Self.count] = UnsafePointer(feature)
        list[Self.count + 1] = nil
        return list
    }

    /// Never freed or written: one C string for every instance.
    nonisolated(unsafe) private static let workerURI = UnsafePointer(
        strdup("http://lv2plug.in/ns/ext/worker#schedule")!)

    /// Log lines the ring had no room for, as reported so far.
    private var reportedDropped: UInt64 = 0

    /// Moves the plugins' log messages to swift-log (control world), then says how many were dropped.
    func drainLog(to logger: Logger, plugin: String) {
        var buffer = [CChar](repeating: 0, count: 600)
        defer {
            let dropped = gh_lv2_log_dropped(log)
            if dropped > reportedDropped {
                logger.warning(
                    """
                    \(plugin): \(dropped - reportedDropped) log line(s) dropped \
                    (more than the log holds between two drains; \(dropped) so far)
                    """
                )
                reportedDropped = dropped
            }
        }
        while true {
            let level = gh_lv2_log_next(log, &buffer, buffer.count)
            if level < 0 { return }
            let text = String(cString: buffer).trimmingWhitespace()
            switch level {
            case 0: logger.error("\(plugin): \(text)")
            case 1: logger.warning("\(plugin): \(text)")
            case 2: logger.info("\(plugin): \(text)")
            default: logger.debug("\(plugin): \(text)")
            }
        }
    }

    deinit {
        cStrings.forEach { free($0) }
        featureStructs.deallocate()
        array.deallocate()
        options.deallocate()
        values.deallocate()
        mapPath.deallocate()
        makePath.deallocate()
        freePath.deallocate()
        rate.deallocate()
        gh_lv2_log_destroy(log)
    }
}
