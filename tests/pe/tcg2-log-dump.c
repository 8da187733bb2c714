/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tiny EFI application (gnu-efi) for tests/pe/test-firmware-measure.sh: it asks the
 * firmware's EFI_TCG2_PROTOCOL for the TCG 2.0 event log (TCG PC Client Platform Firmware
 * Profile, GetEventLog) and prints it in hex on the console, "MBLOG:" lines between
 * "MBLOG-BEGIN" and "MBLOG-END". The firmware measured this very application into PCR 4
 * before starting it, so the host can compare that event's digest with mboot's
 * Authenticode digest of the file it booted.
 */
#include <efi.h>
#include <efilib.h>

static EFI_GUID tcg2_guid = { 0x607f766c, 0x7455, 0x42be, { 0x93, 0x0b, 0xe4, 0xd7, 0x6d, 0xb2, 0x72, 0x0f } };

typedef struct tcg2_protocol tcg2_protocol;
struct tcg2_protocol {
	EFI_STATUS (EFIAPI *get_capability)(tcg2_protocol *self, void *cap);
	EFI_STATUS (EFIAPI *get_event_log)(tcg2_protocol *self, UINT32 format, EFI_PHYSICAL_ADDRESS *location,
					   EFI_PHYSICAL_ADDRESS *last_entry, BOOLEAN *truncated);
};

static UINT32 rd32(const UINT8 *p) { return p[0] | p[1] << 8 | p[2] << 16 | (UINT32) p[3] << 24; }
static UINT16 rd16(const UINT8 *p) { return p[0] | p[1] << 8; }

static UINTN digest_size(UINT16 alg)
{
	switch (alg) {
	case 0x0004: return 20;
	case 0x000b: case 0x0012: return 32;
	case 0x000c: return 48;
	case 0x000d: return 64;
	default: return 0;
	}
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
	static const CHAR16 hexd[] = L"0123456789abcdef";
	tcg2_protocol *tcg2 = NULL;
	EFI_PHYSICAL_ADDRESS loc = 0, last = 0;
	BOOLEAN trunc = FALSE;
	EFI_STATUS s;
	const UINT8 *p, *end;
	UINT32 n;
	CHAR16 line[80];

	InitializeLib(image, st);
	s = uefi_call_wrapper(BS->LocateProtocol, 3, &tcg2_guid, NULL, (void **) &tcg2);
	if (EFI_ERROR(s) || !tcg2) {
		Print(L"MBLOG-ERROR no TCG2 protocol %r\n", s);
		return EFI_SUCCESS;
	}
	s = tcg2->get_event_log(tcg2, 2 /* EFI_TCG2_EVENT_LOG_FORMAT_TCG_2 */, &loc, &last, &trunc);
	if (EFI_ERROR(s) || !loc || !last) {
		Print(L"MBLOG-ERROR GetEventLog %r\n", s);
		return EFI_SUCCESS;
	}
	/* the last entry is a TCG_PCR_EVENT2: PCR, type, digest count, digests, size, data */
	p = (const UINT8 *) (UINTN) last + 8;
	n = rd32(p);
	p += 4;
	while (n--) {
		UINTN d = digest_size(rd16(p));

		if (!d) {
			Print(L"MBLOG-ERROR unknown algorithm\n");
			return EFI_SUCCESS;
		}
		p += 2 + d;
	}
	end = p + 4 + rd32(p);
	Print(L"MBLOG-BEGIN truncated=%d\n", trunc);
	for (p = (const UINT8 *) (UINTN) loc; p < end;) {
		UINTN i = 0;

		line[i++] = 'M'; line[i++] = 'B'; line[i++] = 'L'; line[i++] = 'O'; line[i++] = 'G'; line[i++] = ':';
		for (UINTN k = 0; k < 32 && p < end; k++, p++) {
			line[i++] = hexd[*p >> 4];
			line[i++] = hexd[*p & 15];
		}
		line[i++] = '\n';
		line[i] = 0;
		Print(L"%s", line);
	}
	Print(L"MBLOG-END\n");
	return EFI_SUCCESS;
}
