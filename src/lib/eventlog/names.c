/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mboot/eventlog.h>

/* In ascending order of type (mb_event_type_name searches it by halves). */
static const struct {
	uint32_t type;
	const char *name;
} type_names[] = {
	{ MB_EV_PREBOOT_CERT, "EV_PREBOOT_CERT" },
	{ MB_EV_POST_CODE, "EV_POST_CODE" },
	{ MB_EV_UNUSED, "EV_UNUSED" },
	{ MB_EV_NO_ACTION, "EV_NO_ACTION" },
	{ MB_EV_SEPARATOR, "EV_SEPARATOR" },
	{ MB_EV_ACTION, "EV_ACTION" },
	{ MB_EV_EVENT_TAG, "EV_EVENT_TAG" },
	{ MB_EV_S_CRTM_CONTENTS, "EV_S_CRTM_CONTENTS" },
	{ MB_EV_S_CRTM_VERSION, "EV_S_CRTM_VERSION" },
	{ MB_EV_CPU_MICROCODE, "EV_CPU_MICROCODE" },
	{ MB_EV_PLATFORM_CONFIG_FLAGS, "EV_PLATFORM_CONFIG_FLAGS" },
	{ MB_EV_TABLE_OF_DEVICES, "EV_TABLE_OF_DEVICES" },
	{ MB_EV_COMPACT_HASH, "EV_COMPACT_HASH" },
	{ MB_EV_IPL, "EV_IPL" },
	{ MB_EV_IPL_PARTITION_DATA, "EV_IPL_PARTITION_DATA" },
	{ MB_EV_NONHOST_CODE, "EV_NONHOST_CODE" },
	{ MB_EV_NONHOST_CONFIG, "EV_NONHOST_CONFIG" },
	{ MB_EV_NONHOST_INFO, "EV_NONHOST_INFO" },
	{ MB_EV_OMIT_BOOT_DEVICE_EVENTS, "EV_OMIT_BOOT_DEVICE_EVENTS" },
	{ MB_EV_POST_CODE2, "EV_POST_CODE2" },
	{ MB_EV_EFI_EVENT_BASE, "EV_EFI_EVENT_BASE" },
	{ MB_EV_EFI_VARIABLE_DRIVER_CONFIG, "EV_EFI_VARIABLE_DRIVER_CONFIG" },
	{ MB_EV_EFI_VARIABLE_BOOT, "EV_EFI_VARIABLE_BOOT" },
	{ MB_EV_EFI_BOOT_SERVICES_APPLICATION, "EV_EFI_BOOT_SERVICES_APPLICATION" },
	{ MB_EV_EFI_BOOT_SERVICES_DRIVER, "EV_EFI_BOOT_SERVICES_DRIVER" },
	{ MB_EV_EFI_RUNTIME_SERVICES_DRIVER, "EV_EFI_RUNTIME_SERVICES_DRIVER" },
	{ MB_EV_EFI_GPT_EVENT, "EV_EFI_GPT_EVENT" },
	{ MB_EV_EFI_ACTION, "EV_EFI_ACTION" },
	{ MB_EV_EFI_PLATFORM_FIRMWARE_BLOB, "EV_EFI_PLATFORM_FIRMWARE_BLOB" },
	{ MB_EV_EFI_HANDOFF_TABLES, "EV_EFI_HANDOFF_TABLES" },
	{ MB_EV_EFI_PLATFORM_FIRMWARE_BLOB2, "EV_EFI_PLATFORM_FIRMWARE_BLOB2" },
	{ MB_EV_EFI_HANDOFF_TABLES2, "EV_EFI_HANDOFF_TABLES2" },
	{ MB_EV_EFI_VARIABLE_BOOT2, "EV_EFI_VARIABLE_BOOT2" },
	{ MB_EV_EFI_GPT_EVENT2, "EV_EFI_GPT_EVENT2" },
	{ MB_EV_EFI_HCRTM_EVENT, "EV_EFI_HCRTM_EVENT" },
	{ MB_EV_EFI_VARIABLE_AUTHORITY, "EV_EFI_VARIABLE_AUTHORITY" },
	{ MB_EV_EFI_SPDM_FIRMWARE_BLOB, "EV_EFI_SPDM_FIRMWARE_BLOB" },
	{ MB_EV_EFI_SPDM_FIRMWARE_CONFIG, "EV_EFI_SPDM_FIRMWARE_CONFIG" },
	{ MB_EV_EFI_SPDM_DEVICE_POLICY, "EV_EFI_SPDM_DEVICE_POLICY" },
	{ MB_EV_EFI_SPDM_DEVICE_AUTHORITY, "EV_EFI_SPDM_DEVICE_AUTHORITY" },
};

/* A binary search: every event of a log shown asks. */
MB_EXPORT const char *mb_event_type_name(uint32_t type)
{
	size_t lo = 0, hi = sizeof(type_names) / sizeof(type_names[0]);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (type_names[mid].type == type)
			return type_names[mid].name;
		if (type_names[mid].type < type)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

MB_EXPORT const char *mb_event_type_label(uint32_t type, char buf[MB_EVENT_TYPE_LABEL_SIZE])
{
	const char *name = mb_event_type_name(type);

	if (name)
		return name;
	snprintf(buf, MB_EVENT_TYPE_LABEL_SIZE, "0x%08x", type);
	return buf;
}

MB_EXPORT int mb_event_type_from_name(const char *name, uint32_t *ret)
{
	size_t i;

	for (i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (strcmp(type_names[i].name, name) == 0) {
			*ret = type_names[i].type;
			return 0;
		}
	if (name[0] == '0' && (name[1] == 'x' || name[1] == 'X') && name[2]) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(name + 2, &end, 16);
		if (errno == 0 && *end == 0 && v <= UINT32_MAX) {
			*ret = (uint32_t) v;
			return 0;
		}
	}
	return -EINVAL;
}
