// libgphoto2 behind a few C functions for FerryKit's camera backend
// (Sources/FerryKit/Backends/Camera). Every call returns libgphoto2's result code
// (GP_OK or a negative GP_ERROR_*; gp_result_as_string names it). Prefix `ferry_gp_`.
#ifndef FERRY_CGPHOTO2_SHIM_H
#define FERRY_CGPHOTO2_SHIM_H

#include <gphoto2/gphoto2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/// The driver's last error message (`gp_context_error`: "Could not get information
/// about 'X' in '/DCIM' (No such file or directory)."), kept for Ferry's error.
typedef struct {
    char text[512];
} ferry_gp_messages;

static void ferry_gp_on_error(GPContext *context, const char *text, void *data) {
    (void)context;
    ferry_gp_messages *messages = (ferry_gp_messages *)data;
    snprintf(messages->text, sizeof messages->text, "%s", text ? text : "");
}

/// Keeps the context's error messages in `messages` (which outlives the context).
static inline void ferry_gp_catch_errors(GPContext *context, ferry_gp_messages *messages) {
    gp_context_set_error_func(context, ferry_gp_on_error, messages);
}

/// Opens a camera: at `port` (`disk:/srv/folder`, `usb:001,004`) with `model` (NULL: the
/// "Directory Browse" driver for a `disk:` port, else whatever answers at the port), or,
/// with no port, the first camera libgphoto2 finds. On success `*camera` is initialised.
static inline int ferry_gp_open(const char *model, const char *port, GPContext *context, Camera **out) {
    Camera *camera = NULL;
    int r = gp_camera_new(&camera);
    if (r < GP_OK) return r;
    if (port && *port) {
        const char *chosen = model && *model ? model : (strncmp(port, "disk:", 5) == 0 ? "Directory Browse" : NULL);
        if (chosen) {
            CameraAbilitiesList *list = NULL;
            CameraAbilities abilities;
            r = gp_abilities_list_new(&list);
            if (r >= GP_OK) r = gp_abilities_list_load(list, context);
            int index = r >= GP_OK ? gp_abilities_list_lookup_model(list, chosen) : r;
            r = index;
            if (index >= GP_OK) r = gp_abilities_list_get_abilities(list, index, &abilities);
            if (r >= GP_OK) r = gp_camera_set_abilities(camera, abilities);
            if (list) gp_abilities_list_free(list);
            if (r < GP_OK) {
                gp_camera_free(camera);
                return r;
            }
        }
        GPPortInfoList *ports = NULL;
        GPPortInfo info;
        r = gp_port_info_list_new(&ports);
        if (r >= GP_OK) r = gp_port_info_list_load(ports);
        int index = r >= GP_OK ? gp_port_info_list_lookup_path(ports, port) : r;
        r = index;
        if (index >= GP_OK) r = gp_port_info_list_get_info(ports, index, &info);
        if (r >= GP_OK) r = gp_camera_set_port_info(camera, info);
        if (ports) gp_port_info_list_free(ports);
        if (r < GP_OK) {
            gp_camera_free(camera);
            return r;
        }
    }
    r = gp_camera_init(camera, context);
    if (r < GP_OK) {
        gp_camera_free(camera);
        return r;
    }
    *out = camera;
    return GP_OK;
}

/// Size (-1 when the camera does not say), modification time (0 when it does not say)
/// and whether the camera lets the file be deleted (`GP_FILE_PERM_DELETE`: 1, 0, or -1
/// when it does not say).
static inline int ferry_gp_file_info(Camera *camera, const char *folder, const char *name, GPContext *context,
                                     long long *size, long long *mtime, int *deletable) {
    CameraFileInfo info;
    memset(&info, 0, sizeof info);
    int r = gp_camera_file_get_info(camera, folder, name, &info, context);
    if (r < GP_OK) return r;
    *size = (info.file.fields & GP_FILE_INFO_SIZE) ? (long long)info.file.size : -1;
    *mtime = (info.file.fields & GP_FILE_INFO_MTIME) ? (long long)info.file.mtime : 0;
    *deletable = (info.file.fields & GP_FILE_INFO_PERMISSIONS)
                     ? ((info.file.permissions & GP_FILE_PERM_DELETE) ? 1 : 0) : -1;
    return GP_OK;
}

/// A file's preview (`GP_FILE_TYPE_PREVIEW`: the camera's own thumbnail) or Exif block
/// (`GP_FILE_TYPE_EXIF`) in memory: `*out` is a CameraFile the caller reads with
/// `gp_file_get_data_and_size` and releases with `gp_file_unref`.
static inline int ferry_gp_get_in_memory(Camera *camera, const char *folder, const char *name, CameraFileType type,
                                         GPContext *context, CameraFile **out) {
    CameraFile *file = NULL;
    int r = gp_file_new(&file);
    if (r < GP_OK) return r;
    r = gp_camera_file_get(camera, folder, name, type, file, context);
    if (r < GP_OK) {
        gp_file_unref(file);
        return r;
    }
    *out = file;
    return GP_OK;
}

/// Whether the camera's driver offers previews (`GP_FILE_OPERATION_PREVIEW`) that are
/// its own small images: the Directory Browse driver says it does but answers with
/// the whole file, so it counts as not offering them.
static inline int ferry_gp_has_previews(Camera *camera) {
    CameraAbilities abilities;
    if (gp_camera_get_abilities(camera, &abilities) < GP_OK) return 0;
    if (strcmp(abilities.model, "Directory Browse") == 0) return 0;
    return (abilities.file_operations & GP_FILE_OPERATION_PREVIEW) ? 1 : 0;
}

/// Forgets what libgphoto2 remembers of the camera's folders, so the next listing asks
/// the camera again (it keeps listings until told: a new photo would not show).
static inline void ferry_gp_forget_listings(Camera *camera) { gp_filesystem_reset(camera->fs); }

/// Takes what the camera has to say (a new photo, a removed one), waiting 10 ms at most
/// (not 0, which a driver could take for "no limit"): the
/// driver updates its listings from these events (PTP's ObjectAdded). Returns how
/// many files were added; drivers without events (Directory Browse) say nothing.
static inline int ferry_gp_take_events(Camera *camera, GPContext *context) {
    int added = 0;
    for (int i = 0; i < 100; i++) {
        CameraEventType type;
        void *data = NULL;
        int r = gp_camera_wait_for_event(camera, 10, &type, &data, context);
        if (data) free(data);
        if (r < GP_OK || type == GP_EVENT_TIMEOUT) break;
        if (type == GP_EVENT_FILE_ADDED) added++;
    }
    return added;
}

/// Closes the camera and frees it (after it went away, to open it afresh next time).
static inline void ferry_gp_close(Camera *camera, GPContext *context) {
    gp_camera_exit(camera, context);
    gp_camera_unref(camera);
}

/// The cameras libgphoto2 finds on USB (and other ports it can probe), as a list of
/// (model, port) pairs: the caller frees it with `gp_list_free`.
static inline int ferry_gp_autodetect(GPContext *context, CameraList **out) {
    CameraList *list = NULL;
    int r = gp_list_new(&list);
    if (r < GP_OK) return r;
    r = gp_camera_autodetect(list, context);
    if (r < GP_OK) {
        gp_list_free(list);
        return r;
    }
    *out = list;
    return GP_OK;
}

/// Writes a file's bytes to the open descriptor `fd`, which stays open (libgphoto2
/// closes the descriptor of a CameraFile when it frees it: it gets a duplicate).
static inline int ferry_gp_get_to_fd(Camera *camera, const char *folder, const char *name, int fd,
                                     GPContext *context) {
    CameraFile *file = NULL;
    int copy = dup(fd);
    if (copy < 0) return GP_ERROR_IO;
    int r = gp_file_new_from_fd(&file, copy);
    if (r < GP_OK) {
        close(copy);
        return r;
    }
    if (r < GP_OK) return r;
    r = gp_camera_file_get(camera, folder, name, GP_FILE_TYPE_NORMAL, file, context);
    gp_file_unref(file);
    return r;
}

#endif
