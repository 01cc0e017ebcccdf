#ifndef GH_FFMPEG_GLUE_H
#define GH_FFMPEG_GLUE_H

/* FFmpeg's types from its headers; its functions through gh_* entry points that load libavformat, libavcodec and
 * libavutil with dlopen on first use. Linked directly, FFmpeg's libraries and their ~130 dependencies cost every
 * graphhost process about 27 ms of start-up and 25 MiB of resident memory, though MP3 streams never use them. */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/dict.h>
#include <libavutil/channel_layout.h>
#include <libswresample/swresample.h>

/* The functions graphhost calls: library, return type, name, parameters, arguments. */
#define GH_FFMPEG_FUNCTIONS(X) \
    X(util, int, av_strerror, (int errnum, char *errbuf, size_t errbuf_size), (errnum, errbuf, errbuf_size)) \
    X(util, int, av_sample_fmt_is_planar, (enum AVSampleFormat f), (f)) \
    X(util, enum AVSampleFormat, av_get_packed_sample_fmt, (enum AVSampleFormat f), (f)) \
    X(util, void *, av_malloc, (size_t size), (size)) \
    X(util, void, av_freep, (void *ptr), (ptr)) \
    X(util, void, av_log_set_level, (int level), (level)) \
    X(util, AVFrame *, av_frame_alloc, (void), ()) \
    X(util, void, av_frame_unref, (AVFrame *frame), (frame)) \
    X(util, void, av_frame_free, (AVFrame **frame), (frame)) \
    X(util, AVDictionaryEntry *, av_dict_get, (const AVDictionary *m, const char *key, const AVDictionaryEntry *prev, int flags), (m, key, prev, flags)) \
    X(codec, AVPacket *, av_packet_alloc, (void), ()) \
    X(codec, void, av_packet_unref, (AVPacket *pkt), (pkt)) \
    X(codec, void, av_packet_free, (AVPacket **pkt), (pkt)) \
    X(codec, const char *, avcodec_get_name, (enum AVCodecID id), (id)) \
    X(codec, AVCodecContext *, avcodec_alloc_context3, (const AVCodec *codec), (codec)) \
    X(codec, void, avcodec_free_context, (AVCodecContext **avctx), (avctx)) \
    X(codec, int, avcodec_parameters_to_context, (AVCodecContext *codec, const AVCodecParameters *par), (codec, par)) \
    X(codec, int, avcodec_open2, (AVCodecContext *avctx, const AVCodec *codec, AVDictionary **options), (avctx, codec, options)) \
    X(codec, int, avcodec_send_packet, (AVCodecContext *avctx, const AVPacket *avpkt), (avctx, avpkt)) \
    X(codec, int, avcodec_receive_frame, (AVCodecContext *avctx, AVFrame *frame), (avctx, frame)) \
    X(codec, void, avcodec_flush_buffers, (AVCodecContext *avctx), (avctx)) \
    X(format, const AVInputFormat *, av_probe_input_format3, (const AVProbeData *pd, int is_opened, int *score_ret), (pd, is_opened, score_ret)) \
    X(format, AVFormatContext *, avformat_alloc_context, (void), ()) \
    X(format, int, avformat_open_input, (AVFormatContext **ps, const char *url, const AVInputFormat *fmt, AVDictionary **options), (ps, url, fmt, options)) \
    X(format, int, avformat_find_stream_info, (AVFormatContext *ic, AVDictionary **options), (ic, options)) \
    X(format, void, avformat_close_input, (AVFormatContext **s), (s)) \
    X(format, int, av_find_best_stream, (AVFormatContext *ic, enum AVMediaType type, int wanted, int related, const AVCodec **decoder_ret, int flags), (ic, type, wanted, related, decoder_ret, flags)) \
    X(format, int, av_read_frame, (AVFormatContext *s, AVPacket *pkt), (s, pkt)) \
    X(format, int, avformat_seek_file, (AVFormatContext *s, int stream_index, int64_t min_ts, int64_t ts, int64_t max_ts, int flags), (s, stream_index, min_ts, ts, max_ts, flags)) \
    X(format, AVIOContext *, avio_alloc_context, (unsigned char *buffer, int buffer_size, int write_flag, void *opaque, \
        int (*read_packet)(void *opaque, uint8_t *buf, int buf_size), int (*write_packet)(void *opaque, uint8_t *buf, int buf_size), \
        int64_t (*seek)(void *opaque, int64_t offset, int whence)), (buffer, buffer_size, write_flag, opaque, read_packet, write_packet, seek)) \
    X(format, void, avio_context_free, (AVIOContext **s), (s))

#define GH_FFMPEG_DECLARE(lib, ret, name, params, args) ret gh_##name params;
GH_FFMPEG_FUNCTIONS(GH_FFMPEG_DECLARE)

/* libswresample's channel matrix builder, loaded apart from the decoders (with libavutil only), so that mapping an MP3
 * stream's channels never maps libavformat and libavcodec. */
#define GH_SWRESAMPLE_FUNCTIONS(X) \
    X(resample, int, swr_build_matrix2, (const AVChannelLayout *in_layout, const AVChannelLayout *out_layout, \
        double center_mix_level, double surround_mix_level, double lfe_mix_level, double maxval, double rematrix_volume, \
        double *matrix, ptrdiff_t stride, enum AVMatrixEncoding matrix_encoding, void *log_context), \
        (in_layout, out_layout, center_mix_level, surround_mix_level, lfe_mix_level, maxval, rematrix_volume, matrix, stride, \
         matrix_encoding, log_context))

GH_SWRESAMPLE_FUNCTIONS(GH_FFMPEG_DECLARE)
#undef GH_FFMPEG_DECLARE

/* Loads libswresample once; NULL when done, else why it could not be loaded. Call it before gh_swr_build_matrix2. */
const char *gh_swresample_load(void);

/* A layout of the channels in `mask`, in FFmpeg's native order. */
static inline AVChannelLayout gh_channel_layout(uint64_t mask) {
    AVChannelLayout layout = { .order = AV_CHANNEL_ORDER_NATIVE, .nb_channels = __builtin_popcountll(mask), .u = { .mask = mask } };
    return layout;
}

/* The mask of a layout in FFmpeg's native order; 0 for any other order (unspecified, custom, ambisonic). */
static inline uint64_t gh_channel_mask(const AVChannelLayout *layout) {
    return layout->order == AV_CHANNEL_ORDER_NATIVE ? layout->u.mask : 0;
}

/* Loads the libraries and every function once; NULL when done, else why they could not be loaded (dlerror's text).
 * Call it before any gh_* function. Thread-safe. */
const char *gh_ffmpeg_load(void);

/* Error codes that are function-like macros in FFmpeg's headers. */
static inline int gh_averror_eof(void) { return AVERROR_EOF; }
static inline int gh_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int gh_averror_eio(void) { return AVERROR(EIO); }
static inline int gh_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int gh_avseek_size(void) { return AVSEEK_SIZE; }
static inline int64_t gh_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int gh_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }

#endif
