/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The PCR states of the sealed file and the signature file (sealed.c). Internal. The rest of
 * their JSON is shared/json-doc.h. */
#ifndef MB_SEAL_JSON_H
#define MB_SEAL_JSON_H

#include <stdint.h>
#include "shared/json-doc.h"
#include <mboot/error.h>
#include <mboot/replay.h>

/* A PCR state {"bank", "selection", "values"}; name is its place, for messages. */
int seal_json_pcr_state(json_t *o, const char *name, mb_pcr_bank *bank, uint32_t *mask, mb_error *err);
json_t *seal_json_pcr_state_obj(const mb_pcr_bank *b, uint32_t mask);

#endif
