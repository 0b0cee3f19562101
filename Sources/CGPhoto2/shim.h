// libgphoto2 behind a few C functions for FerryKit's camera backend
// (Sources/FerryKit/Backends/Camera). Every call returns libgphoto2's result code
// (GP_OK or a negative GP_ERROR_*; gp_result_as_string names it). Prefix `ferry_gp_`.
#ifndef FERRY_CGPHOTO2_SHIM_H
#define FERRY_CGPHOTO2_SHIM_H

#include <gphoto2/gphoto2.h>
#include <string.h>
#include <unistd.h>

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

/// Size (-1 when the camera does not say) and modification time (0 when it does not say).
static inline int ferry_gp_file_info(Camera *camera, const char *folder, const char *name, GPContext *context,
                                     long long *size, long long *mtime) {
    CameraFileInfo info;
    memset(&info, 0, sizeof info);
    int r = gp_camera_file_get_info(camera, folder, name, &info, context);
    if (r < GP_OK) return r;
    *size = (info.file.fields & GP_FILE_INFO_SIZE) ? (long long)info.file.size : -1;
    *mtime = (info.file.fields & GP_FILE_INFO_MTIME) ? (long long)info.file.mtime : 0;
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
