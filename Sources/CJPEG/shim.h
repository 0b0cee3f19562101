// libjpeg-turbo behind three C functions, so Swift never meets libjpeg's
// error handling: its default error_exit calls exit(), and the only way to
// recover is setjmp/longjmp, which must not cross Swift frames. Each
// function below sets its own jump point, runs the whole decode or encode
// in C, and returns 0 or a negative code with libjpeg's message.
// Prefix `ferry_jpeg_` (the CNIOLinux / CFURLSessionInterface pattern).
#ifndef FERRY_CJPEG_SHIM_H
#define FERRY_CJPEG_SHIM_H

#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

// Return codes of the ferry_jpeg_ functions.
#define FERRY_JPEG_OK 0
#define FERRY_JPEG_ERROR (-1)     // libjpeg rejected the data; see the message
#define FERRY_JPEG_OPEN (-2)      // the file could not be opened; errno is set
#define FERRY_JPEG_MEMORY (-3)    // out of memory
#define FERRY_JPEG_ARGUMENT (-4)  // a bad size or pointer

// Bounds on what one decode may take, whatever the file claims: libjpeg's own
// working memory, and the decoded pixels (50 MP, 150 MB of RGB; a thumbnail
// decode at 1/8 reaches that only for a source of 3 gigapixels).
#define FERRY_JPEG_MAX_MEMORY 1073741824L  // 1 GiB
#define FERRY_JPEG_MAX_OUTPUT_PIXELS 50000000ULL

/// Pixels decoded by ferry_jpeg_decode: RGB, 3 bytes a pixel, rows packed.
/// `pixels` is malloc'd; release it with ferry_jpeg_free.
typedef struct {
    unsigned char *pixels;
    int width;          // decoded (scaled) size
    int height;
    int source_width;   // size of the image in the file
    int source_height;
    int scale_denom;    // 1, 2, 4 or 8: the DCT scaling used
} ferry_jpeg_image;

/// libjpeg's error manager plus the jump point and the formatted message.
typedef struct {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
} ferry_jpeg_error_state;

static inline void ferry_jpeg_error_exit(j_common_ptr info) {
    ferry_jpeg_error_state *state = (ferry_jpeg_error_state *)info->err;
    (*info->err->format_message)(info, state->message);
    longjmp(state->jump, 1);
}

static inline void ferry_jpeg_silent(j_common_ptr info) {
    (void)info;  // warnings (corrupt data that libjpeg can recover from) are not printed
}

/// Sets `state` up as a coder's error manager: errors jump back to `state->jump` with
/// their message kept, warnings are not printed.
static inline struct jpeg_error_mgr *ferry_jpeg_errors(ferry_jpeg_error_state *state) {
    memset(state, 0, sizeof *state);
    struct jpeg_error_mgr *manager = jpeg_std_error(&state->manager);
    state->manager.error_exit = ferry_jpeg_error_exit;
    state->manager.output_message = ferry_jpeg_silent;
    return manager;
}

static inline void ferry_jpeg_copy_message(const ferry_jpeg_error_state *state, char *message, size_t size) {
    if (message && size > 0) {
        strncpy(message, state->message, size - 1);
        message[size - 1] = 0;
    }
}

/// Decodes a JPEG from a file (`path`) or from memory (`data`, `size`) to RGB,
/// using libjpeg's DCT scaling: the largest reduction (1/8, 1/4, 1/2) that keeps
/// the longer side at least `min_side` pixels (0 = full size). Scaled decoding
/// skips most of the IDCT work, which is what makes thumbnails cheap.
static inline int ferry_jpeg_decode(const char *path, const unsigned char *data, unsigned long size, int min_side,
                                    ferry_jpeg_image *out, char *message, size_t message_size) {
    if (!out || (!path && (!data || size == 0))) return FERRY_JPEG_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (message && message_size) message[0] = 0;
    FILE *volatile file = NULL;
    if (path) {
        file = fopen(path, "rb");
        if (!file) return FERRY_JPEG_OPEN;
    }
    struct jpeg_decompress_struct info;
    ferry_jpeg_error_state state;
    unsigned char *volatile pixels = NULL;
    info.err = ferry_jpeg_errors(&state);
    if (setjmp(state.jump)) {
        ferry_jpeg_copy_message(&state, message, message_size);
        jpeg_destroy_decompress(&info);
        free(pixels);
        if (file) fclose(file);
        return FERRY_JPEG_ERROR;
    }
    jpeg_create_decompress(&info);
    // A few hundred bytes can declare a 65500 x 65500 image; a progressive one would
    // make libjpeg zero ~13 GB of coefficients before reading any data. Past this
    // budget libjpeg stops with "Insufficient memory" instead (a 200 MP progressive
    // photo needs about 600 MB).
    info.mem->max_memory_to_use = FERRY_JPEG_MAX_MEMORY;
    if (file) {
        jpeg_stdio_src(&info, file);
    } else {
        jpeg_mem_src(&info, data, size);
    }
    jpeg_read_header(&info, TRUE);
    int longer = info.image_width > info.image_height ? (int)info.image_width : (int)info.image_height;
    int denom = 1;
    if (min_side > 0) {
        while (denom < 8 && (longer + denom * 2 - 1) / (denom * 2) >= min_side) denom *= 2;
    }
    info.scale_num = 1;
    info.scale_denom = (unsigned int)denom;
    info.out_color_space = JCS_RGB;
    // Thumbnails do not need the last bit of precision: the fast integer IDCT and
    // plain chroma replication cost less, and the reduction averages the difference away.
    info.dct_method = JDCT_IFAST;
    info.do_fancy_upsampling = FALSE;
    info.do_block_smoothing = FALSE;
    jpeg_start_decompress(&info);
    if ((unsigned long long)info.output_width * info.output_height > FERRY_JPEG_MAX_OUTPUT_PIXELS) {
        jpeg_destroy_decompress(&info);
        if (file) fclose(file);
        return FERRY_JPEG_MEMORY;
    }
    size_t stride = (size_t)info.output_width * 3;
    pixels = (unsigned char *)malloc(stride * info.output_height);
    if (!pixels) {
        jpeg_destroy_decompress(&info);
        if (file) fclose(file);
        return FERRY_JPEG_MEMORY;
    }
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = pixels + stride * info.output_scanline;
        jpeg_read_scanlines(&info, &row, 1);
    }
    out->pixels = pixels;
    out->width = (int)info.output_width;
    out->height = (int)info.output_height;
    out->source_width = (int)info.image_width;
    out->source_height = (int)info.image_height;
    out->scale_denom = denom;
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    if (file) fclose(file);
    return FERRY_JPEG_OK;
}

/// Encodes RGB pixels (3 bytes a pixel, rows packed) as a baseline JPEG in
/// memory. `app1`, when not NULL, is written as an APP1 segment right after
/// SOI (Exif goes there; no JFIF APP0 is written then). On success `*out`
/// is malloc'd: release it with ferry_jpeg_free.
static inline int ferry_jpeg_encode(const unsigned char *pixels, int width, int height, int quality,
                                    const unsigned char *app1, unsigned int app1_size, unsigned char **out,
                                    unsigned long *out_size, char *message, size_t message_size) {
    if (!pixels || !out || !out_size || width <= 0 || height <= 0 || app1_size > 65533) return FERRY_JPEG_ARGUMENT;
    if (message && message_size) message[0] = 0;
    *out = NULL;
    *out_size = 0;
    struct jpeg_compress_struct info;
    ferry_jpeg_error_state state;
    unsigned char *buffer = NULL;
    unsigned long buffer_size = 0;
    info.err = ferry_jpeg_errors(&state);
    if (setjmp(state.jump)) {
        ferry_jpeg_copy_message(&state, message, message_size);
        jpeg_destroy_compress(&info);
        // jpeg_mem_dest's buffer belongs to the caller once allocated.
        free(buffer);
        return FERRY_JPEG_ERROR;
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, &buffer, &buffer_size);
    info.image_width = (JDIMENSION)width;
    info.image_height = (JDIMENSION)height;
    info.input_components = 3;
    info.in_color_space = JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality < 1 ? 1 : quality > 100 ? 100 : quality, TRUE);
    if (app1) info.write_JFIF_header = FALSE;
    jpeg_start_compress(&info, TRUE);
    if (app1) jpeg_write_marker(&info, JPEG_APP0 + 1, app1, app1_size);
    size_t stride = (size_t)width * 3;
    while (info.next_scanline < info.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + stride * info.next_scanline);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    *out = buffer;
    *out_size = buffer_size;
    return FERRY_JPEG_OK;
}

/// Shrinks RGB pixels by averaging the source pixels under each target pixel
/// (a box filter: no aliasing for the 2x..16x reductions thumbnails need).
static inline void ferry_jpeg_downscale(const unsigned char *src, int src_width, int src_height, unsigned char *dst,
                                        int dst_width, int dst_height) {
    for (int y = 0; y < dst_height; y++) {
        int y0 = (int)((long)y * src_height / dst_height);
        int y1 = (int)((long)(y + 1) * src_height / dst_height);
        if (y1 <= y0) y1 = y0 + 1;
        for (int x = 0; x < dst_width; x++) {
            int x0 = (int)((long)x * src_width / dst_width);
            int x1 = (int)((long)(x + 1) * src_width / dst_width);
            if (x1 <= x0) x1 = x0 + 1;
            unsigned long r = 0, g = 0, b = 0, n = 0;
            for (int sy = y0; sy < y1; sy++) {
                const unsigned char *p = src + ((size_t)sy * src_width + x0) * 3;
                for (int sx = x0; sx < x1; sx++, p += 3) {
                    r += p[0];
                    g += p[1];
                    b += p[2];
                    n++;
                }
            }
            unsigned char *q = dst + ((size_t)y * dst_width + x) * 3;
            q[0] = (unsigned char)((r + n / 2) / n);
            q[1] = (unsigned char)((g + n / 2) / n);
            q[2] = (unsigned char)((b + n / 2) / n);
        }
    }
}

/// Turns RGB pixels upright for an Exif orientation (1...8; anything else copies).
/// `dst` holds `src_width * src_height * 3` bytes; for orientations 5...8 it is
/// `src_height` pixels wide and `src_width` high. Each displayed pixel (dx, dy)
/// takes the stored pixel the Exif definition puts there:
///   2 mirror: (W-1-dx, dy)      3 turn 180: (W-1-dx, H-1-dy)   4 flip: (dx, H-1-dy)
///   5 transpose: (dy, dx)       6 turn 90 cw: (dy, H-1-dx)
///   7 transverse: (W-1-dy, H-1-dx)   8 turn 90 ccw: (W-1-dy, dx)
static inline void ferry_jpeg_orient(const unsigned char *src, int src_width, int src_height, int orientation,
                                     unsigned char *dst) {
    const long w = src_width, h = src_height;
    const int swap = orientation >= 5 && orientation <= 8;
    const long dw = swap ? h : w, dh = swap ? w : h;
    // The stored pixel of displayed (dx, dy) is linear in dx and dy: a start and two steps (in pixels).
    long sx0 = 0, sy0 = 0, sx_dx = 1, sy_dx = 0, sx_dy = 0, sy_dy = 1;
    switch (orientation) {
    case 2: sx0 = w - 1; sx_dx = -1; break;
    case 3: sx0 = w - 1; sy0 = h - 1; sx_dx = -1; sy_dy = -1; break;
    case 4: sy0 = h - 1; sy_dy = -1; break;
    case 5: sx_dx = 0; sy_dx = 1; sx_dy = 1; sy_dy = 0; break;
    case 6: sy0 = h - 1; sx_dx = 0; sy_dx = -1; sx_dy = 1; sy_dy = 0; break;
    case 7: sx0 = w - 1; sy0 = h - 1; sx_dx = 0; sy_dx = -1; sx_dy = -1; sy_dy = 0; break;
    case 8: sx0 = w - 1; sx_dx = 0; sy_dx = 1; sx_dy = -1; sy_dy = 0; break;
    default: break;
    }
    const long step_x = (sx_dx + sy_dx * w) * 3, step_y = (sx_dy + sy_dy * w) * 3;
    const unsigned char *row = src + (sy0 * w + sx0) * 3;
    unsigned char *q = dst;
    for (long dy = 0; dy < dh; dy++, row += step_y) {
        const unsigned char *p = row;
        for (long dx = 0; dx < dw; dx++, p += step_x, q += 3) {
            q[0] = p[0];
            q[1] = p[1];
            q[2] = p[2];
        }
    }
}

/// Releases memory returned by ferry_jpeg_decode or ferry_jpeg_encode.
static inline void ferry_jpeg_free(void *pointer) { free(pointer); }

#endif
