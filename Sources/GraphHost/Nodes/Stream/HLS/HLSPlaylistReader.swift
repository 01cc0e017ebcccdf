/// Reads an HLS playlist from the start of a stream and gives the byte source of its segments.
enum HLSPlaylistReader {
    static func source(reading input: MediaInput) throws -> ByteSource {
        throw StreamError.unsupportedMedia(input.name, "HLS playlists are not read yet")
    }
}
