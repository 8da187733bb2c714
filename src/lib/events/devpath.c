/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * UEFI device paths to text (UEFI spec 2.10 §10.3 "Device Path Nodes" for the
 * layouts, §10.6 "Device Path to Text" for the text form). Nodes are
 * EFI_DEVICE_PATH_PROTOCOL { u8 Type; u8 SubType; u16 Length; ... } with Length
 * counting the 4-byte header; End nodes are type 0x7f (0x01 ends an instance,
 * 0xff the whole path). Nodes we do not name print as Path(type,subtype,hex).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/hex.h"
#include "decode-internal.h"

typedef struct text {
	char *s;
	size_t len;
	bool full;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->s + t->len, MB_DEC_MAX_DEVPATH_TEXT + 1 - t->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t) n > MB_DEC_MAX_DEVPATH_TEXT - t->len) {
		t->full = true;
		t->s[t->len] = 0;
		return;
	}
	t->len += (size_t) n;
}

static void put_hex(text *t, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n && !t->full; i++)
		put(t, "%02x", p[i]);
}

static void put_guid(text *t, const uint8_t *g)
{
	char buf[MB_GUID_STR];

	put(t, "%s", guid_format(g, buf));
}

/* Vendor nodes (HW 4, MSG 10, MEDIA 3): GUID then optional vendor data. */
static int vendor(text *t, const char *name, byte_reader *r)
{
	const uint8_t *g;

	if (read_bytes(r, 16, &g) < 0)
		return -EBADMSG;
	put(t, "%s(", name);
	put_guid(t, g);
	if (reader_left(r) > 0) {
		put(t, ",");
		put_hex(t, reader_cur(r), reader_left(r));
	}
	put(t, ")");
	return 0;
}

static int hardware_node(text *t, uint8_t sub, byte_reader *r)
{
	uint8_t fn, dev;
	uint32_t u32;

	switch (sub) {
	case 1: /* PCI: Function, Device */
		if (read_u8(r, &fn) < 0 || read_u8(r, &dev) < 0)
			return -EBADMSG;
		put(t, "Pci(0x%x,0x%x)", dev, fn);
		return 0;
	case 3: { /* Memory mapped: memory type, start, end */
		uint64_t start, end;

		if (read_u32le(r, &u32) < 0 || read_u64le(r, &start) < 0 || read_u64le(r, &end) < 0)
			return -EBADMSG;
		put(t, "MemoryMapped(0x%x,0x%" PRIx64 ",0x%" PRIx64 ")", u32, start, end);
		return 0;
	}
	case 4:
		return vendor(t, "VenHw", r);
	case 5: /* Controller */
		if (read_u32le(r, &u32) < 0)
			return -EBADMSG;
		put(t, "Ctrl(0x%x)", u32);
		return 0;
	}
	return -EOPNOTSUPP;
}

static int acpi_node(text *t, uint8_t sub, byte_reader *r)
{
	uint32_t hid, uid;

	switch (sub) {
	case 1: /* ACPI_HID_DEVICE_PATH: _HID, _UID; EISA ids are (PNP << 16) | 0x41d0 */
		if (read_u32le(r, &hid) < 0 || read_u32le(r, &uid) < 0)
			return -EBADMSG;
		if ((hid & 0xffff) == 0x41d0) {
			switch (hid >> 16) {
			case 0x0a03: put(t, "PciRoot(0x%x)", uid); return 0;
			case 0x0a08: put(t, "PcieRoot(0x%x)", uid); return 0;
			case 0x0604: put(t, "Floppy(0x%x)", uid); return 0;
			case 0x0301: put(t, "Keyboard(0x%x)", uid); return 0;
			case 0x0501: put(t, "Serial(0x%x)", uid); return 0;
			case 0x0401: put(t, "ParallelPort(0x%x)", uid); return 0;
			}
			put(t, "Acpi(PNP%04x,0x%x)", hid >> 16, uid);
			return 0;
		}
		put(t, "Acpi(0x%08x,0x%x)", hid, uid);
		return 0;
	case 3: /* _ADR */
		if (read_u32le(r, &hid) < 0)
			return -EBADMSG;
		put(t, "AcpiAdr(0x%x)", hid);
		return 0;
	}
	return -EOPNOTSUPP;
}

static const char *ip_protocol(uint16_t p, char buf[8])
{
	if (p == 6)
		return "TCP";
	if (p == 17)
		return "UDP";
	snprintf(buf, 8, "0x%x", p);
	return buf;
}

static int messaging_node(text *t, uint8_t sub, byte_reader *r)
{
	uint8_t b0, b1;
	uint16_t w0, w1, w2;
	uint32_t u32;
	const uint8_t *p, *q;
	char proto[8], a1[INET6_ADDRSTRLEN], a2[INET6_ADDRSTRLEN];

	switch (sub) {
	case 2: /* SCSI: Pun, Lun */
		if (read_u16le(r, &w0) < 0 || read_u16le(r, &w1) < 0)
			return -EBADMSG;
		put(t, "Scsi(0x%x,0x%x)", w0, w1);
		return 0;
	case 5: /* USB: ParentPortNumber, InterfaceNumber */
		if (read_u8(r, &b0) < 0 || read_u8(r, &b1) < 0)
			return -EBADMSG;
		put(t, "USB(0x%x,0x%x)", b0, b1);
		return 0;
	case 10:
		return vendor(t, "VenMsg", r);
	case 11: /* MAC: 32-byte address, IfType; Ethernet (0, 1) uses the first 6 bytes */
		if (read_bytes(r, 32, &p) < 0 || read_u8(r, &b0) < 0)
			return -EBADMSG;
		put(t, "MAC(");
		put_hex(t, p, b0 <= 1 ? 6 : 32);
		put(t, ",0x%x)", b0);
		return 0;
	case 12: /* IPv4: local, remote, local port, remote port, protocol, static, [gateway, mask] */
		if (read_bytes(r, 4, &p) < 0 || read_bytes(r, 4, &q) < 0 || read_u16le(r, &w0) < 0 ||
		    read_u16le(r, &w1) < 0 || read_u16le(r, &w2) < 0 || read_u8(r, &b0) < 0)
			return -EBADMSG;
		put(t, "IPv4(%u.%u.%u.%u,%s,%s,%u.%u.%u.%u", q[0], q[1], q[2], q[3], ip_protocol(w2, proto),
		    b0 ? "Static" : "DHCP", p[0], p[1], p[2], p[3]);
		if (reader_left(r) >= 8) {
			const uint8_t *g = reader_cur(r);

			put(t, ",%u.%u.%u.%u,%u.%u.%u.%u", g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7]);
		}
		put(t, ")");
		return 0;
	case 13: /* IPv6: local, remote, ports, protocol, origin, [prefix, gateway] */
		if (read_bytes(r, 16, &p) < 0 || read_bytes(r, 16, &q) < 0 || read_u16le(r, &w0) < 0 ||
		    read_u16le(r, &w1) < 0 || read_u16le(r, &w2) < 0 || read_u8(r, &b0) < 0)
			return -EBADMSG;
		inet_ntop(AF_INET6, q, a1, sizeof(a1));
		inet_ntop(AF_INET6, p, a2, sizeof(a2));
		put(t, "IPv6(%s,%s,%s,%s)", a1, ip_protocol(w2, proto),
		    b0 == 0 ? "Static" : b0 == 1 ? "StatelessAutoConfigure" : "StatefulAutoConfigure", a2);
		return 0;
	case 1: /* ATAPI: primary/secondary, master/slave, LUN */
		if (read_u8(r, &b0) < 0 || read_u8(r, &b1) < 0 || read_u16le(r, &w0) < 0)
			return -EBADMSG;
		put(t, "Ata(%s,%s,0x%x)", b0 ? "Secondary" : "Primary", b1 ? "Slave" : "Master", w0);
		return 0;
	case 15: { /* USB class: vendor, product, class, subclass, protocol */
		uint8_t cls, subcls, proto8;

		if (read_u16le(r, &w0) < 0 || read_u16le(r, &w1) < 0 || read_u8(r, &cls) < 0 ||
		    read_u8(r, &subcls) < 0 || read_u8(r, &proto8) < 0)
			return -EBADMSG;
		put(t, "UsbClass(0x%x,0x%x,0x%x,0x%x,0x%x)", w0, w1, cls, subcls, proto8);
		return 0;
	}
	case 20: /* VLAN */
		if (read_u16le(r, &w0) < 0)
			return -EBADMSG;
		put(t, "Vlan(%u)", w0);
		return 0;
	case 25: /* UFS: target id, LUN */
		if (read_u8(r, &b0) < 0 || read_u8(r, &b1) < 0)
			return -EBADMSG;
		put(t, "UFS(0x%x,0x%x)", b0, b1);
		return 0;
	case 26: /* SD: slot */
	case 29: /* eMMC: slot */
		if (read_u8(r, &b0) < 0)
			return -EBADMSG;
		put(t, "%s(0x%x)", sub == 26 ? "SD" : "eMMC", b0);
		return 0;
	case 17: /* Device logical unit */
		if (read_u8(r, &b0) < 0)
			return -EBADMSG;
		put(t, "Unit(0x%x)", b0);
		return 0;
	case 18: /* SATA: HBA port, port multiplier port, LUN */
		if (read_u16le(r, &w0) < 0 || read_u16le(r, &w1) < 0 || read_u16le(r, &w2) < 0)
			return -EBADMSG;
		put(t, "Sata(0x%x,0x%x,0x%x)", w0, w1, w2);
		return 0;
	case 23: /* NVMe: namespace id, EUI-64 */
		if (read_u32le(r, &u32) < 0 || read_bytes(r, 8, &p) < 0)
			return -EBADMSG;
		put(t, "NVMe(0x%x,%02X-%02X-%02X-%02X-%02X-%02X-%02X-%02X)", u32,
		    p[7], p[6], p[5], p[4], p[3], p[2], p[1], p[0]);
		return 0;
	case 24: { /* URI: the rest of the node, not NUL-terminated */
		size_t n = reader_left(r), i;

		if (read_bytes(r, n, &p) < 0)
			return -EBADMSG;
		put(t, "Uri(");
		for (i = 0; i < n && p[i]; i++)
			put(t, "%c", p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?');
		put(t, ")");
		return 0;
	}
	}
	return -EOPNOTSUPP;
}

static int media_node(text *t, uint8_t sub, byte_reader *r)
{
	uint32_t u32;
	uint64_t start, size;
	const uint8_t *sig;
	uint8_t mbr_type, sig_type;

	switch (sub) {
	case 1: /* Hard drive: partition number, start LBA, size in LBAs, signature[16], MBR type, signature type */
		if (read_u32le(r, &u32) < 0 || read_u64le(r, &start) < 0 || read_u64le(r, &size) < 0 ||
		    read_bytes(r, 16, &sig) < 0 || read_u8(r, &mbr_type) < 0 || read_u8(r, &sig_type) < 0)
			return -EBADMSG;
		put(t, "HD(%u,", u32);
		if (sig_type == 2) {
			put(t, "GPT,");
			put_guid(t, sig);
		} else if (sig_type == 1) {
			put(t, "MBR,0x%08x", (uint32_t) sig[0] | (uint32_t) sig[1] << 8 | (uint32_t) sig[2] << 16 |
					   (uint32_t) sig[3] << 24);
		} else {
			put(t, "%u,0", sig_type);
		}
		put(t, ",0x%" PRIx64 ",0x%" PRIx64 ")", start, size);
		return 0;
	case 2: /* CD-ROM: boot entry, start, size */
		if (read_u32le(r, &u32) < 0 || read_u64le(r, &start) < 0 || read_u64le(r, &size) < 0)
			return -EBADMSG;
		put(t, "CDROM(0x%x,0x%" PRIx64 ",0x%" PRIx64 ")", u32, start, size);
		return 0;
	case 3:
		return vendor(t, "VenMedia", r);
	case 4: { /* File path: UTF-16 name, NUL-terminated */
		char *s;

		if (reader_left(r) % 2)
			return -EBADMSG;
		s = utf16le_to_utf8(reader_cur(r), reader_left(r));
		if (!s)
			return -ENOMEM;
		put(t, "%s", s);
		free(s);
		return 0;
	}
	case 5: /* Media protocol */
		if (read_bytes(r, 16, &sig) < 0)
			return -EBADMSG;
		put(t, "Media(");
		put_guid(t, sig);
		put(t, ")");
		return 0;
	case 6: /* PIWG firmware file (PI spec vol. 3 §3.2) */
	case 7: /* PIWG firmware volume */
		if (read_bytes(r, 16, &sig) < 0)
			return -EBADMSG;
		put(t, sub == 6 ? "FvFile(" : "Fv(");
		put_guid(t, sig);
		put(t, ")");
		return 0;
	case 8: /* Relative offset range: reserved, start, end */
		if (read_u32le(r, &u32) < 0 || read_u64le(r, &start) < 0 || read_u64le(r, &size) < 0)
			return -EBADMSG;
		put(t, "Offset(0x%" PRIx64 ",0x%" PRIx64 ")", start, size);
		return 0;
	}
	return -EOPNOTSUPP;
}

static int bbs_node(text *t, uint8_t sub, byte_reader *r)
{
	static const char *const types[] = { NULL, "Floppy", "HD", "CDROM", "PCMCIA", "USB", "Network" };
	uint16_t type, status;
	const uint8_t *p;
	size_t n, i;

	if (sub != 1)
		return -EOPNOTSUPP;
	/* BBS: device type, status flags, ASCII description */
	if (read_u16le(r, &type) < 0 || read_u16le(r, &status) < 0)
		return -EBADMSG;
	n = reader_left(r);
	if (read_bytes(r, n, &p) < 0)
		return -EBADMSG;
	if (type < sizeof(types) / sizeof(types[0]) && types[type])
		put(t, "BBS(%s,", types[type]);
	else
		put(t, "BBS(0x%x,", type);
	for (i = 0; i < n && p[i]; i++)
		put(t, "%c", p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?');
	put(t, ",0x%x)", status);
	return 0;
}

/* One node of a device path, its body a reader over the bytes after the 4-byte header. */
typedef struct devpath_node {
	size_t at;
	uint8_t type, sub;
	uint16_t len;
	byte_reader body;
} devpath_node;

/* The next node of r (the whole path is size bytes; nodes counts them): 1, 0 when no bytes are
 * left, or -EBADMSG with the reason. End nodes are returned as any other. */
static int devpath_next(byte_reader *r, size_t size, unsigned *nodes, devpath_node *n, dec_why *why)
{
	if (reader_left(r) == 0)
		return 0;
	n->at = r->pos;
	if (read_u8(r, &n->type) < 0 || read_u8(r, &n->sub) < 0 || read_u16le(r, &n->len) < 0)
		return dec_fail(why, "device path: truncated node header at offset %zu", n->at);
	if (n->len < 4)
		return dec_fail(why, "device path: node at offset %zu has length %u < 4", n->at, n->len);
	if (read_sub(r, n->len - 4u, &n->body) < 0)
		return dec_fail(why, "device path: node at offset %zu (length %u) overruns the path (%zu bytes)", n->at,
				n->len, size);
	if (++*nodes > MB_DEC_MAX_DEVPATH_NODES)
		return dec_fail(why, "device path: more than %d nodes", MB_DEC_MAX_DEVPATH_NODES);
	return 1;
}

int devpath_to_text(const uint8_t *data, size_t size, char **ret, dec_why *why)
{
	text t = { .s = malloc(MB_DEC_MAX_DEVPATH_TEXT + 1) };
	byte_reader r;
	unsigned nodes = 0;
	bool sep = false;
	int rc;

	if (!t.s)
		return -ENOMEM;
	t.s[0] = 0;
	reader_init(&r, data, size, 0);
	for (;;) {
		devpath_node nd;
		uint8_t type, sub;

		if ((rc = devpath_next(&r, size, &nodes, &nd, why)) < 0)
			goto fail;
		if (rc == 0)
			break;
		type = nd.type;
		sub = nd.sub;
		if (type == 0x7f) {
			if (sub == 0xff)
				break; /* End of the whole path: what follows is not ours to show. */
			if (sub == 0x01) {
				put(&t, ",");
				sep = false;
				continue;
			}
		}
		if (sep)
			put(&t, "/");
		sep = true;
		switch (type) {
		case 1: rc = hardware_node(&t, sub, &nd.body); break;
		case 2: rc = acpi_node(&t, sub, &nd.body); break;
		case 3: rc = messaging_node(&t, sub, &nd.body); break;
		case 4: rc = media_node(&t, sub, &nd.body); break;
		case 5: rc = bbs_node(&t, sub, &nd.body); break;
		default: rc = -EOPNOTSUPP; break;
		}
		if (rc == -ENOMEM)
			goto fail;
		if (rc == -EBADMSG) {
			rc = dec_fail(why, "device path: node %u.%u at offset %zu is too short (%u bytes)",
					 type, sub, nd.at, nd.len);
			goto fail;
		}
		if (rc == -EOPNOTSUPP) {
			/* §10.6.1.6: a node without a text form is Path(type,subtype,data). */
			put(&t, "Path(%u,%u", type, sub);
			if (nd.len > 4) {
				put(&t, ",");
				put_hex(&t, data + nd.at + 4, nd.len - 4u);
			}
			put(&t, ")");
		}
		if (t.full) {
			rc = dec_fail(why, "device path: text longer than %d bytes", MB_DEC_MAX_DEVPATH_TEXT);
			goto fail;
		}
	}
	*ret = t.s;
	return 0;
fail:
	free(t.s);
	return rc;
}

int devpath_file_path(const uint8_t *data, size_t size, char **ret, dec_why *why)
{
	text t = { .s = malloc(MB_DEC_MAX_DEVPATH_TEXT + 1) };
	byte_reader r;
	unsigned nodes = 0;
	bool any = false;
	size_t i, k;
	int rc;

	*ret = NULL;
	if (!t.s)
		return -ENOMEM;
	t.s[0] = 0;
	reader_init(&r, data, size, 0);
	for (;;) {
		devpath_node nd;
		char *s;

		if ((rc = devpath_next(&r, size, &nodes, &nd, why)) < 0)
			goto fail;
		if (rc == 0 || nd.type == 0x7f)
			break; /* the first instance is the image's */
		if (nd.type != 4 || nd.sub != 4)
			continue;
		if (reader_left(&nd.body) % 2) {
			rc = dec_fail(why, "device path: file path node at offset %zu has an odd length (%u bytes)", nd.at,
				      nd.len);
			goto fail;
		}
		if (!(s = utf16le_to_utf8(reader_cur(&nd.body), reader_left(&nd.body)))) {
			rc = -ENOMEM;
			goto fail;
		}
		put(&t, "/%s", s);
		free(s);
		any = true;
		if (t.full) {
			rc = dec_fail(why, "device path: file path longer than %d bytes", MB_DEC_MAX_DEVPATH_TEXT);
			goto fail;
		}
	}
	if (!any) {
		free(t.s);
		return -ENOENT;
	}
	/* backslashes as slashes, a run of slashes as one */
	for (i = k = 0; t.s[i]; i++) {
		char ch = t.s[i] == '\\' ? '/' : t.s[i];

		if (ch != '/' || k == 0 || t.s[k - 1] != '/')
			t.s[k++] = ch;
	}
	t.s[k] = 0;
	*ret = t.s;
	return 0;
fail:
	free(t.s);
	return rc;
}
