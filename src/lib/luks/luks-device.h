/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * luks-device.c's device (libcryptsetup, its messages caught) for the other files of this
 * folder that open one (luks-recovery.c). Internal.
 */
#ifndef MB_LUKS_DEVICE_H
#define MB_LUKS_DEVICE_H

#include <stdbool.h>
#include <mboot/luks.h>

struct crypt_device;
typedef struct device luks_device;

/* crypt_init and crypt_load (LUKS2 only) of path; -EINVAL when it is not LUKS2. */
int luks_device_open(luks_device **ret, const char *path, mb_error *err);
void luks_device_free(luks_device *d);
/* Its libcryptsetup handle; forgets libcryptsetup's last error (call it before each call). */
struct crypt_device *luks_device_cd(luks_device *d);
/* libcryptsetup's last error message when it gave one, else strerror(-r). */
const char *luks_device_why(const luks_device *d, int r);
int luks_device_max_tokens(const luks_device *d);
bool luks_device_is_mboot_token(luks_device *d, int id);
/* Token id's type when it is active, else NULL. */
const char *luks_device_token_type(luks_device *d, int id);
/* Token id, parsed ("token N: " before its errors). */
int luks_device_token_read(luks_device *d, int id, mb_luks_token **ret, mb_error *err);
/* Whether a token of the device other than except is assigned to keyslot slot (recovery tokens do not count). */
bool luks_device_slot_has_token(luks_device *d, int slot, int except);

#endif
