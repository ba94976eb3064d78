// The system zlib, for Courier's content decoding (gzip and deflate). zlib's init functions are
// macros that pass the library version and the stream's size; these wrappers make them callable
// from Swift.
#include <zlib.h>

/// inflateInit2: windowBits 15 + 16 reads gzip, 15 reads zlib-wrapped deflate, -15 raw deflate.
static inline int czlib_inflate_init(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

/// deflateInit2 with the default memory level and strategy (for test servers).
static inline int czlib_deflate_init(z_streamp stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}
