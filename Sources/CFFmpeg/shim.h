#include <errno.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/dict.h>

/* Error codes that are function-like macros in FFmpeg's headers. */
static inline int graphhost_averror_eof(void) { return AVERROR_EOF; }
static inline int graphhost_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int graphhost_averror_eio(void) { return AVERROR(EIO); }
static inline int graphhost_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int graphhost_avseek_size(void) { return AVSEEK_SIZE; }
static inline int64_t graphhost_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int graphhost_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
