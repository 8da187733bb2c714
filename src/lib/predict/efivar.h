/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef MB_PREDICT_EFIVAR_H
#define MB_PREDICT_EFIVAR_H

/*
 * The Secure Boot variables of the next boot (PCR 7) and shim's MOK state (PCR 14) in a
 * prediction: the files read and checked up front, then each of today's events looked at.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mboot/predict.h>

#define EFIVAR_MAX 32

typedef enum efivar_kind {
	EFIVAR_SECDB,  /* PK, KEK, db, dbx, dbt, dbr: PCR 7 EV_EFI_VARIABLE_DRIVER_CONFIG */
	EFIVAR_SBAT,   /* shim's SbatLevel: PCR 7 EV_EFI_VARIABLE_AUTHORITY */
	EFIVAR_MOK,    /* shim's MOK variables: PCR 14 EV_IPL "NAME\0", digest H(contents) */
} efivar_kind;

typedef struct efivar_change {
	const mb_efi_var_update *u;
	efivar_kind kind;
	const uint8_t *guid;          /* the variable's vendor GUID */
	uint8_t *content;             /* the file's value (after an authentication header) */
	size_t size;
	uint8_t *next;                /* the next boot's value, once today's event was seen (append) */
	size_t next_size;
	bool have_next, matched;
} efivar_change;

typedef struct efivar_set {
	efivar_change ch[EFIVAR_MAX];
	size_t n;
} efivar_set;

/* Read and check every file of in->efi_vars; negative errno with a message on bad input. */
int efivar_plan(const mb_predict_input *in, efivar_set *s, mb_error *err);
void efivar_done(efivar_set *s);

/* What to do with one of today's events. */
typedef struct efivar_action {
	bool rewrite;              /* write the event with data/hashed below */
	uint8_t *data;             /* new event data (malloc'd; NULL: today's) */
	size_t data_size;
	const uint8_t *hashed;     /* what each bank's digest is computed over */
	size_t hashed_size;
	char *unpredictable;       /* malloc'd reason the event's PCR cannot be predicted, or NULL */
	char *changed;             /* malloc'd description of what was recomputed, or NULL */
} efivar_action;

/* Look at ev; 0 with *a filled (all zero: carry the event over), negative errno. */
int efivar_event(efivar_set *s, const mb_event *ev, efivar_action *a);
void efivar_action_done(efivar_action *a);

/*
 * The EFI_SIGNATURE_LIST sequence of data (UEFI spec §32.4.1), checked strictly: 0, or
 * -EINVAL with the reason in err ("what" names the value).
 */
int efivar_check_esl(const uint8_t *data, size_t size, const char *what, mb_error *err);

/* Why a PCR 4 EFI application will not boot after the new dbx (malloc'd), or NULL. */
char *efivar_revoked_app(const efivar_set *s, const mb_event *ev);

/*
 * A PK/KEK/db/dbx file: an EFI_VARIABLE_AUTHENTICATION_2 header (skipped, not verified) if it
 * starts with one, then signature lists, checked; *offset is where they start.
 */
int efivar_secdb_value(const uint8_t *file, size_t size, const char *what, size_t *offset, mb_error *err);

/*
 * today's value with the lists of add appended (EFI_VARIABLE_APPEND_WRITE), each entry that
 * today's value already holds left out as EDK2 does; *dropped counts them. add must have
 * passed efivar_check_esl (-EINVAL otherwise); *ret is malloc'd.
 */
int efivar_append(const uint8_t *today, size_t today_size, const uint8_t *add, size_t add_size,
		  uint8_t **ret, size_t *ret_size, size_t *dropped);

#endif
