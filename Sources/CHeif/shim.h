// libheif behind a few C functions for FerryWeb's HEIC/HEIF thumbnails, previews
// and Exif (Sources/FerryWeb/Imaging/HEIFCodec.swift). libheif reports errors as
// returned structs (no longjmp, no exit), so each function only has to release
// what it allocated and copy the message. Prefix `ferry_heif_`.
#ifndef FERRY_CHEIF_SHIM_H
#define FERRY_CHEIF_SHIM_H

#include <libheif/heif.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <pthread.h>

// libheif is opened on first use (dlopen), not linked: loading it (and libde265, whose
// start-up builds its tables, x265, aom, dav1d) cost every `ferry` process about 28M
// instructions (callgrind of an empty program linked with it), thumbnails or not
// (bench/RESULTS.md, issue 32 item 4). The functions below are looked up once.
#define FERRY_HEIF_FUNCTIONS(X) X(heif_image_handle_get_list_of_thumbnail_IDs) X(heif_image_handle_get_list_of_metadata_block_IDs) X(heif_context_add_exif_metadata) X(heif_context_alloc) X(heif_context_encode_image) X(heif_context_encode_thumbnail) X(heif_context_free) X(heif_context_get_encoder_for_format) X(heif_context_get_primary_image_handle) X(heif_context_read_from_file) X(heif_context_read_from_memory_without_copy) X(heif_context_read_from_reader) X(heif_context_set_maximum_image_size_limit) X(heif_context_write_to_file) X(heif_decode_image) X(heif_encoder_release) X(heif_encoder_set_lossy_quality) X(heif_encoding_options_alloc) X(heif_encoding_options_free) X(heif_image_add_plane) X(heif_image_create) X(heif_image_get_height) X(heif_image_get_plane) X(heif_image_get_plane_readonly) X(heif_image_get_width) X(heif_image_handle_get_height) X(heif_image_handle_get_metadata) X(heif_image_handle_get_metadata_size) X(heif_image_handle_get_thumbnail) X(heif_image_handle_get_width) X(heif_image_handle_release) X(heif_image_release)

typedef struct {
#define FERRY_HEIF_FIELD(name) __typeof__(&name) name;
    FERRY_HEIF_FUNCTIONS(FERRY_HEIF_FIELD)
#undef FERRY_HEIF_FIELD
    int loaded;
} ferry_heif_library;

// The table lives in a function: Swift imports a header's static variables as
// references to be linked, and nothing would define them.
static inline ferry_heif_library *ferry_heif_table(void) {
    static ferry_heif_library table;
    return &table;
}

static void ferry_heif_load(void) {
    void *handle = dlopen("libheif.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) return;
#define FERRY_HEIF_LOOK_UP(name) \
    if (!(ferry_heif_table()->name = (__typeof__(&name))dlsym(handle, #name))) return;
    FERRY_HEIF_FUNCTIONS(FERRY_HEIF_LOOK_UP)
#undef FERRY_HEIF_LOOK_UP
    ferry_heif_table()->loaded = 1;
}

/// 1 once libheif is loaded (the first call loads it), 0 when it cannot be.
static inline int ferry_heif_available(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, ferry_heif_load);
    return ferry_heif_table()->loaded;
}

/// A libheif function; every entry point below checked ferry_heif_available first. Each
/// object file that uses these inline functions can hold its own table, hence the check.
#define FERRY_HEIF_CALL(name) (ferry_heif_available(), ferry_heif_table()->name)


#define FERRY_HEIF_OK 0
#define FERRY_HEIF_ERROR (-1)     // libheif refused the file; see the message
#define FERRY_HEIF_MEMORY (-3)    // out of memory, or over the pixel bound
#define FERRY_HEIF_ARGUMENT (-4)  // a bad pointer or size
#define FERRY_HEIF_NONE (-5)      // no such item (no Exif block)
#define FERRY_HEIF_MISSING (-6)   // libheif.so.1 could not be loaded

// Whatever the file claims: neither side over 16384 pixels (libheif refuses
// larger images while reading the header), and at most 50 MP decoded.
#define FERRY_HEIF_MAX_SIDE 16384
#define FERRY_HEIF_MAX_PIXELS 50000000ULL

/// Pixels decoded by ferry_heif_decode: RGB, 3 bytes a pixel, rows packed, upright
/// (libheif applies the file's irot/imir/clap transforms). `pixels` is malloc'd:
/// release it with ferry_heif_free.
typedef struct {
    unsigned char *pixels;
    int width;              // of what was decoded (the thumbnail item, or the image)
    int height;
    int image_width;        // of the primary image as shown (after its transforms)
    int image_height;
    int from_thumbnail;     // 1 when the pixels are the file's own thumbnail item
} ferry_heif_image;

static inline void ferry_heif_copy_message(struct heif_error error, char *message, size_t size) {
    if (message && size > 0) {
        strncpy(message, error.message ? error.message : "", size - 1);
        message[size - 1] = 0;
    }
}

/// Opens a file (`path`), bytes (`data`, `size`; not copied: keep them alive) or a reader
/// (`reader`, `reader_data`) with the size limit set. On failure the message is copied out
/// before the context goes (libheif's messages can live in the context).
static inline int ferry_heif_open(const char *path, const void *data, size_t size, const struct heif_reader *reader,
                                  void *reader_data, struct heif_context **out, char *message, size_t message_size) {
    *out = NULL;
    if (!ferry_heif_available()) {
        ferry_heif_copy_message((struct heif_error){heif_error_Unsupported_feature, heif_suberror_Unspecified,
                                                    "libheif.so.1 could not be loaded (apt install libheif1)"},
                                message, message_size);
        return FERRY_HEIF_MISSING;
    }
    struct heif_context *ctx = FERRY_HEIF_CALL(heif_context_alloc)();
    if (!ctx) return FERRY_HEIF_MEMORY;
    FERRY_HEIF_CALL(heif_context_set_maximum_image_size_limit)(ctx, FERRY_HEIF_MAX_SIDE);
    struct heif_error error = path     ? FERRY_HEIF_CALL(heif_context_read_from_file)(ctx, path, NULL)
                              : reader ? FERRY_HEIF_CALL(heif_context_read_from_reader)(ctx, reader, reader_data, NULL)
                                       : FERRY_HEIF_CALL(heif_context_read_from_memory_without_copy)(ctx, data, size, NULL);
    if (error.code != heif_error_Ok) {
        ferry_heif_copy_message(error, message, message_size);
        FERRY_HEIF_CALL(heif_context_free)(ctx);
        return FERRY_HEIF_ERROR;
    }
    *out = ctx;
    return FERRY_HEIF_OK;
}

/// The primary image of an open file; NULL with libheif's message copied out and the
/// context freed when there is none.
static inline struct heif_image_handle *ferry_heif_primary(struct heif_context *ctx, char *message,
                                                           size_t message_size) {
    struct heif_image_handle *primary = NULL;
    struct heif_error error = FERRY_HEIF_CALL(heif_context_get_primary_image_handle)(ctx, &primary);
    if (error.code != heif_error_Ok) {
        ferry_heif_copy_message(error, message, message_size);
        FERRY_HEIF_CALL(heif_context_free)(ctx);
        return NULL;
    }
    return primary;
}

/// Decodes the primary image of an open file to upright RGB and frees the context. When
/// `min_side` > 0 and the file has a thumbnail item whose longer side is at least `min_side`,
/// that (small) item is decoded instead of the whole image: an iPhone's 12 MP photo carries
/// one of 320 x 240 or so. When `only_thumbnail` > 0, that thumbnail item of the primary
/// image is decoded, or nothing (FERRY_HEIF_NONE): the bytes of a sparse copy are only its own.
static inline int ferry_heif_decode_context(struct heif_context *ctx, int min_side, heif_item_id only_thumbnail,
                                            ferry_heif_image *out, char *message, size_t message_size) {
    struct heif_image_handle *primary = ferry_heif_primary(ctx, message, message_size);
    if (!primary) return FERRY_HEIF_ERROR;
    out->image_width = FERRY_HEIF_CALL(heif_image_handle_get_width)(primary);
    out->image_height = FERRY_HEIF_CALL(heif_image_handle_get_height)(primary);
    struct heif_image_handle *chosen = primary;
    struct heif_image_handle *thumbnail = NULL;
    if (min_side > 0 || only_thumbnail > 0) {
        heif_item_id ids[8];
        int n = FERRY_HEIF_CALL(heif_image_handle_get_list_of_thumbnail_IDs)(primary, ids, 8);
        for (int i = 0; i < n; i++) {
            struct heif_image_handle *t = NULL;
            if (only_thumbnail > 0 && ids[i] != only_thumbnail) continue;
            if (FERRY_HEIF_CALL(heif_image_handle_get_thumbnail)(primary, ids[i], &t).code != heif_error_Ok) continue;
            int w = FERRY_HEIF_CALL(heif_image_handle_get_width)(t), h = FERRY_HEIF_CALL(heif_image_handle_get_height)(t);
            int longer = w > h ? w : h;
            int best = 0;
            if (thumbnail) {
                int bw = FERRY_HEIF_CALL(heif_image_handle_get_width)(thumbnail), bh = FERRY_HEIF_CALL(heif_image_handle_get_height)(thumbnail);
                best = bw > bh ? bw : bh;
            }
            // The smallest thumbnail that is large enough.
            if ((only_thumbnail > 0 || longer >= min_side) && (!thumbnail || longer < best)) {
                if (thumbnail) FERRY_HEIF_CALL(heif_image_handle_release)(thumbnail);
                thumbnail = t;
            } else {
                FERRY_HEIF_CALL(heif_image_handle_release)(t);
            }
        }
        if (thumbnail) chosen = thumbnail;
    }
    if (only_thumbnail > 0 && !thumbnail) {
        FERRY_HEIF_CALL(heif_image_handle_release)(primary);
        FERRY_HEIF_CALL(heif_context_free)(ctx);
        return FERRY_HEIF_NONE;
    }
    int cw = FERRY_HEIF_CALL(heif_image_handle_get_width)(chosen), ch = FERRY_HEIF_CALL(heif_image_handle_get_height)(chosen);
    if (cw <= 0 || ch <= 0 || (unsigned long long)cw * (unsigned long long)ch > FERRY_HEIF_MAX_PIXELS) {
        if (thumbnail) FERRY_HEIF_CALL(heif_image_handle_release)(thumbnail);
        FERRY_HEIF_CALL(heif_image_handle_release)(primary);
        FERRY_HEIF_CALL(heif_context_free)(ctx);
        return FERRY_HEIF_MEMORY;
    }
    struct heif_image *image = NULL;
    struct heif_error error = FERRY_HEIF_CALL(heif_decode_image)(chosen, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGB, NULL);
    int status = FERRY_HEIF_OK;
    if (error.code != heif_error_Ok) {
        ferry_heif_copy_message(error, message, message_size);
        status = FERRY_HEIF_ERROR;
    } else {
        int stride = 0;
        const uint8_t *plane = FERRY_HEIF_CALL(heif_image_get_plane_readonly)(image, heif_channel_interleaved, &stride);
        int w = FERRY_HEIF_CALL(heif_image_get_width)(image, heif_channel_interleaved);
        int h = FERRY_HEIF_CALL(heif_image_get_height)(image, heif_channel_interleaved);
        unsigned char *pixels = (plane && w > 0 && h > 0 && stride >= w * 3)
                                    ? (unsigned char *)malloc((size_t)w * h * 3)
                                    : NULL;
        if (!pixels) {
            status = plane ? FERRY_HEIF_MEMORY : FERRY_HEIF_ERROR;
        } else {
            for (int y = 0; y < h; y++) memcpy(pixels + (size_t)y * w * 3, plane + (size_t)y * stride, (size_t)w * 3);
            out->pixels = pixels;
            out->width = w;
            out->height = h;
            out->from_thumbnail = thumbnail != NULL;
        }
        FERRY_HEIF_CALL(heif_image_release)(image);
    }
    if (thumbnail) FERRY_HEIF_CALL(heif_image_handle_release)(thumbnail);
    FERRY_HEIF_CALL(heif_image_handle_release)(primary);
    FERRY_HEIF_CALL(heif_context_free)(ctx);
    return status;
}

/// Decodes the primary image of a HEIF file (`path`) or of bytes in memory; see
/// ferry_heif_decode_context.
static inline int ferry_heif_decode(const char *path, const void *data, size_t size, int min_side,
                                    ferry_heif_image *out, char *message, size_t message_size) {
    if (!out || (!path && (!data || size == 0))) return FERRY_HEIF_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (message && message_size) message[0] = 0;
    struct heif_context *ctx = NULL;
    int opened = ferry_heif_open(path, data, size, NULL, NULL, &ctx, message, message_size);
    if (opened != FERRY_HEIF_OK) return opened;
    return ferry_heif_decode_context(ctx, min_side, 0, out, message, message_size);
}

/// A byte range of a sparse copy of a file: `length` bytes at file offset `offset`, found at
/// `at` in the copy's buffer.
typedef struct {
    int64_t offset;
    int64_t length;
    int64_t at;
} ferry_heif_span;

/// A file of `size` bytes of which only `spans` are known (the rest reads as zeros): what
/// a range read fetched (the `meta` box, a thumbnail item's extents).
typedef struct {
    const unsigned char *buffer;
    const ferry_heif_span *spans;
    int count;
    int64_t size;
    int64_t position;
} ferry_heif_sparse;

static inline int64_t ferry_heif_sparse_position(void *userdata) { return ((ferry_heif_sparse *)userdata)->position; }

static inline int ferry_heif_sparse_read(void *data, size_t size, void *userdata) {
    ferry_heif_sparse *file = (ferry_heif_sparse *)userdata;
    int64_t start = file->position;
    if (start < 0 || start > file->size || (uint64_t)size > (uint64_t)(file->size - start)) return 1;
    int64_t end = start + (int64_t)size;
    memset(data, 0, size);
    for (int i = 0; i < file->count; i++) {
        const ferry_heif_span *s = &file->spans[i];
        int64_t from = s->offset > start ? s->offset : start;
        int64_t to = s->offset + s->length < end ? s->offset + s->length : end;
        if (from < to) memcpy((unsigned char *)data + (from - start), file->buffer + s->at + (from - s->offset), (size_t)(to - from));
    }
    file->position = end;
    return 0;
}

static inline int ferry_heif_sparse_seek(int64_t position, void *userdata) {
    ferry_heif_sparse *file = (ferry_heif_sparse *)userdata;
    if (position < 0 || position > file->size) return 1;
    file->position = position;
    return 0;
}

static inline enum heif_reader_grow_status ferry_heif_sparse_wait(int64_t target, void *userdata) {
    return target <= ((ferry_heif_sparse *)userdata)->size ? heif_reader_grow_status_size_reached
                                                           : heif_reader_grow_status_size_beyond_eof;
}

/// Decodes thumbnail item `thumbnail` of a file of `size` bytes known only by `spans` of
/// `buffer` (each span inside the file and the buffer: the caller checks). FERRY_HEIF_NONE
/// when the file has no such thumbnail item; the primary image is never decoded.
static inline int ferry_heif_decode_sparse(const unsigned char *buffer, const ferry_heif_span *spans, int count,
                                           int64_t size, uint32_t thumbnail, ferry_heif_image *out, char *message,
                                           size_t message_size) {
    if (!out || !buffer || !spans || count <= 0 || size <= 0 || thumbnail == 0) return FERRY_HEIF_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (message && message_size) message[0] = 0;
    ferry_heif_sparse file = {buffer, spans, count, size, 0};
    static const struct heif_reader reader = {1, ferry_heif_sparse_position, ferry_heif_sparse_read,
                                              ferry_heif_sparse_seek, ferry_heif_sparse_wait};
    struct heif_context *ctx = NULL;
    int opened = ferry_heif_open(NULL, NULL, 0, &reader, &file, &ctx, message, message_size);
    if (opened != FERRY_HEIF_OK) return opened;
    return ferry_heif_decode_context(ctx, 0, thumbnail, out, message, message_size);
}

/// The primary image's Exif block (from its TIFF header on: the block's leading offset
/// is skipped), malloc'd into `*out`; FERRY_HEIF_NONE when the file has none.
/// `*width` and `*height` get the image's size as shown.
static inline int ferry_heif_exif(const char *path, unsigned char **out, size_t *out_size, int *width, int *height,
                                  char *message, size_t message_size) {
    if (!path || !out || !out_size) return FERRY_HEIF_ARGUMENT;
    *out = NULL;
    *out_size = 0;
    struct heif_context *ctx = NULL;
    int opened = ferry_heif_open(path, NULL, 0, NULL, NULL, &ctx, message, message_size);
    if (opened != FERRY_HEIF_OK) return opened;
    struct heif_image_handle *primary = ferry_heif_primary(ctx, message, message_size);
    if (!primary) return FERRY_HEIF_ERROR;
    if (width) *width = FERRY_HEIF_CALL(heif_image_handle_get_width)(primary);
    if (height) *height = FERRY_HEIF_CALL(heif_image_handle_get_height)(primary);
    int status = FERRY_HEIF_NONE;
    heif_item_id id;
    if (FERRY_HEIF_CALL(heif_image_handle_get_list_of_metadata_block_IDs)(primary, "Exif", &id, 1) == 1) {
        size_t size = FERRY_HEIF_CALL(heif_image_handle_get_metadata_size)(primary, id);
        unsigned char *block = size >= 4 && size <= (1u << 24) ? (unsigned char *)malloc(size) : NULL;
        if (block && FERRY_HEIF_CALL(heif_image_handle_get_metadata)(primary, id, block).code == heif_error_Ok) {
            // ISO/IEC 23008-12 A.2.1: a 32-bit big-endian offset to the TIFF header, then the Exif data.
            size_t skip = 4 + ((size_t)block[0] << 24 | (size_t)block[1] << 16 | (size_t)block[2] << 8 | block[3]);
            if (skip < size) {
                memmove(block, block + skip, size - skip);
                *out = block;
                *out_size = size - skip;
                block = NULL;
                status = FERRY_HEIF_OK;
            }
        }
        free(block);
    }
    FERRY_HEIF_CALL(heif_image_handle_release)(primary);
    FERRY_HEIF_CALL(heif_context_free)(ctx);
    return status;
}

/// Encodes RGB pixels as a HEIC file at `path` (HEVC, `quality`), its orientation
/// written as irot/imir boxes (1...8, Exif's meaning), with a thumbnail item of at
/// most `thumbnail_side` pixels when > 0 and `exif` (TIFF data, from "II"/"MM") when
/// given. For the tests' samples: phones write their photos this way.
static inline int ferry_heif_encode(const unsigned char *pixels, int width, int height, int quality, int orientation,
                                    int thumbnail_side, const unsigned char *exif, int exif_size, const char *path,
                                    char *message, size_t message_size) {
    if (!pixels || !path || width <= 0 || height <= 0) return FERRY_HEIF_ARGUMENT;
    if (!ferry_heif_available()) return FERRY_HEIF_MISSING;
    struct heif_context *ctx = FERRY_HEIF_CALL(heif_context_alloc)();
    struct heif_encoder *encoder = NULL;
    struct heif_image *image = NULL;
    struct heif_image_handle *handle = NULL;
    struct heif_encoding_options *options = NULL;
    struct heif_error error = FERRY_HEIF_CALL(heif_context_get_encoder_for_format)(ctx, heif_compression_HEVC, &encoder);
    if (error.code == heif_error_Ok) {
        FERRY_HEIF_CALL(heif_encoder_set_lossy_quality)(encoder, quality);
        error = FERRY_HEIF_CALL(heif_image_create)(width, height, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image);
    }
    if (error.code == heif_error_Ok) error = FERRY_HEIF_CALL(heif_image_add_plane)(image, heif_channel_interleaved, width, height, 8);
    if (error.code == heif_error_Ok) {
        int stride = 0;
        uint8_t *plane = FERRY_HEIF_CALL(heif_image_get_plane)(image, heif_channel_interleaved, &stride);
        for (int y = 0; y < height; y++) memcpy(plane + (size_t)y * stride, pixels + (size_t)y * width * 3, (size_t)width * 3);
        options = FERRY_HEIF_CALL(heif_encoding_options_alloc)();
        options->image_orientation = (enum heif_orientation)(orientation >= 1 && orientation <= 8 ? orientation : 1);
        error = FERRY_HEIF_CALL(heif_context_encode_image)(ctx, image, encoder, options, &handle);
    }
    if (error.code == heif_error_Ok && thumbnail_side > 0) {
        struct heif_image_handle *thumb = NULL;
        error = FERRY_HEIF_CALL(heif_context_encode_thumbnail)(ctx, image, handle, encoder, options, thumbnail_side, &thumb);
        if (thumb) FERRY_HEIF_CALL(heif_image_handle_release)(thumb);
    }
    if (error.code == heif_error_Ok && exif && exif_size > 0) {
        error = FERRY_HEIF_CALL(heif_context_add_exif_metadata)(ctx, handle, exif, exif_size);
    }
    if (error.code == heif_error_Ok) error = FERRY_HEIF_CALL(heif_context_write_to_file)(ctx, path);
    int status = error.code == heif_error_Ok ? FERRY_HEIF_OK : FERRY_HEIF_ERROR;
    if (status != FERRY_HEIF_OK) ferry_heif_copy_message(error, message, message_size);
    if (options) FERRY_HEIF_CALL(heif_encoding_options_free)(options);
    if (handle) FERRY_HEIF_CALL(heif_image_handle_release)(handle);
    if (image) FERRY_HEIF_CALL(heif_image_release)(image);
    if (encoder) FERRY_HEIF_CALL(heif_encoder_release)(encoder);
    FERRY_HEIF_CALL(heif_context_free)(ctx);
    return status;
}

/// Releases memory returned by ferry_heif_decode or ferry_heif_exif.
static inline void ferry_heif_free(void *pointer) { free(pointer); }

#endif
