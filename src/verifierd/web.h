/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MBOOT_VERIFIERD_WEB_H
#define MBOOT_VERIFIERD_WEB_H
/* The fleet's web page (web/index.html, built into the binary: one file, no assets). */
extern const unsigned char verifierd_web_page[];
extern const unsigned int verifierd_web_page_len;
#endif
