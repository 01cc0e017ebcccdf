/// The MPRIS bus name of a run: `org.mpris.MediaPlayer2.graphhost.NAME`, NAME being the run's node name (`--name`)
/// made a valid D-Bus name element: every character other than an ASCII letter, digit or underscore becomes an
/// underscore, a leading digit gets an underscore before it, and an empty name becomes `_`.
public enum MPRISBusName {
    public static let prefix = "org.mpris.MediaPlayer2.graphhost."

    /// The bus name for a run called `name`.
    public static func forRun(name: String) -> String { prefix + element(name) }

    /// `name` as one element of a bus name (at most what keeps the whole name within D-Bus's 255 bytes).
    public static func element(_ name: String) -> String {
        var element = String(
            name.unicodeScalars.prefix(255 - prefix.utf8.count - 1).map { scalar -> Character in
                scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_")
                    ? Character(scalar) : "_"
            })
        if element.isEmpty || element.first!.isNumber { element = "_" + element }
        return element
    }
}
