/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_LIB_PE_INTERNAL_H
#define MB_LIB_PE_INTERNAL_H

/* The layout of mb_pe_info, for src/lib/pe only: the public header keeps it opaque. */
#include <mboot/pe.h>

struct mb_pe_info {
	mb_pe_summary s;
	size_t n_sections;
	uint64_t section_table_offset; /* file offset of the section table, for messages */
	mb_pe_section sections[MB_PE_MAX_SECTIONS];
	size_t n_certs;             /* WIN_CERTIFICATE entries found in the table */
	mb_pe_cert certs[MB_PE_MAX_CERTS];
	size_t n_ranges;
	mb_pe_range ranges[MB_PE_MAX_RANGES];
};

#endif
