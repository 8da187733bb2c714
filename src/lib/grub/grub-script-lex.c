/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GRUB's words and tokens (grub-core/script/yylex.l) over a cleaned config text, read through the
 * bounded reader (grub-script-internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grub/grub-script-internal.h"

void gs_word_done(word *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		free(w->p[i].s);
	free(w->p);
	free(w->raw);
	free(w->block);
	memset(w, 0, sizeof(*w));
}

/* ---- lexer: GRUB's tokens over a cleaned text (bounds through the reader) ---------------- */

static int peek_at(const lexer *lx, size_t k)
{
	return k < reader_left(&lx->r) ? reader_cur(&lx->r)[k] : -1;
}

static void advance(lexer *lx, size_t k)
{
	if (read_skip(&lx->r, k) < 0)
		lx->r.pos = lx->r.size;
}

void gs_lex_error(lexer *lx, const char *what)
{
	if (!lx->err && asprintf(&lx->err, "syntax the model does not take (%s) at byte %zu", what, lx->r.pos) < 0) {
		lx->err = NULL;
		lx->oom = true;
	}
}

void gs_lex_oom(lexer *lx)
{
	lx->oom = true;
}

bool gs_lex_failed(const lexer *lx)
{
	return lx->err || lx->oom;
}

bool gs_is_name_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool gs_is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_name_char(int c)
{
	return gs_is_name_start(c) || gs_is_digit(c);
}

/* A word's characters outside quotes: GRUB's CHAR class. */
static bool is_plain(int c)
{
	return c > 0 && !strchr("{}|&$;<> \t\n'\"\\", c);
}

static void add_part(word *w, enum part_type t, const char *s, size_t n, lexer *lx)
{
	part *p;

	/* adjacent literal text of one kind merges */
	if (w->n && w->p[w->n - 1].t == t && (t == P_TEXT || t == P_DQ || t == P_SQ)) {
		part *last = &w->p[w->n - 1];
		size_t old = strlen(last->s);
		char *ns = realloc(last->s, old + n + 1);

		if (!ns) {
			gs_lex_oom(lx);
			return;
		}
		memcpy(ns + old, s, n);
		ns[old + n] = 0;
		last->s = ns;
		return;
	}
	p = realloc(w->p, (w->n + 1) * sizeof(*p));
	if (!p) {
		gs_lex_oom(lx);
		return;
	}
	w->p = p;
	w->p[w->n].t = t;
	w->p[w->n].s = strndup(s, n);
	if (!w->p[w->n].s) {
		gs_lex_oom(lx);
		return; /* not counted: a part's text is never NULL */
	}
	w->n++;
}

/* $NAME, ${NAME}, $DIGITS, $?, $#, $*, $@ (and braced): the name, or false. */
static bool lex_var(lexer *lx, word *w, enum part_type t)
{
	size_t k = 1, start, len;
	bool brace = peek_at(lx, 1) == '{';
	int c;

	if (brace)
		k++;
	start = k;
	c = peek_at(lx, k);
	if (c == '?' || c == '#' || c == '*' || c == '@') {
		k++;
	} else if (gs_is_digit(c)) {
		while (gs_is_digit(peek_at(lx, k)))
			k++;
	} else if (gs_is_name_start(c)) {
		while (is_name_char(peek_at(lx, k)))
			k++;
	} else {
		return false;
	}
	len = k - start;
	if (brace) {
		if (peek_at(lx, k) != '}')
			return false;
		k++;
	}
	add_part(w, t, (const char *) reader_cur(&lx->r) + start, len, lx);
	advance(lx, k);
	return true;
}

/* One token; a word's parts into w (the caller frees it). */
enum tok gs_lex(lexer *lx, word *w)
{
	int c;
	size_t start;

	memset(w, 0, sizeof(*w));
	for (;;) {
		c = peek_at(lx, 0);
		if (c == ' ' || c == '\t') {
			advance(lx, 1);
		} else if (c == '#') {
			while (peek_at(lx, 0) >= 0 && peek_at(lx, 0) != '\n')
				advance(lx, 1);
		} else {
			break;
		}
	}
	switch (c) {
	case -1:
		return T_EOF;
	case '\n':
		advance(lx, 1);
		return T_NL;
	case ';':
		if (peek_at(lx, 1) == ';')
			break;
		advance(lx, 1);
		return T_SEMI;
	case '{':
		advance(lx, 1);
		return T_LBR;
	case '}':
		advance(lx, 1);
		return T_RBR;
	case '|':
	case '&':
	case '<':
	case '>':
		break;
	default: {
		start = lx->r.pos;
		for (;;) {
			c = peek_at(lx, 0);
			if (is_plain(c)) {
				size_t k = 0;

				while (is_plain(peek_at(lx, k)))
					k++;
				add_part(w, P_TEXT, (const char *) reader_cur(&lx->r), k, lx);
				advance(lx, k);
			} else if (c == '\\') {
				if (peek_at(lx, 1) == '\n') {
					advance(lx, 2);
				} else if (peek_at(lx, 1) >= 0) {
					add_part(w, P_TEXT, (const char *) reader_cur(&lx->r) + 1, 1, lx);
					advance(lx, 2);
				} else {
					gs_lex_error(lx, "a backslash at the end");
					return T_BAD;
				}
			} else if (c == '\'') {
				size_t k = 1;

				while (peek_at(lx, k) >= 0 && peek_at(lx, k) != '\'')
					k++;
				if (peek_at(lx, k) < 0) {
					gs_lex_error(lx, "an unterminated quote");
					return T_BAD;
				}
				add_part(w, P_SQ, (const char *) reader_cur(&lx->r) + 1, k - 1, lx);
				/* an empty '' still makes an argument */
				advance(lx, k + 1);
			} else if (c == '"') {
				advance(lx, 1);
				add_part(w, P_DQ, "", 0, lx);
				for (;;) {
					c = peek_at(lx, 0);
					if (c < 0) {
						gs_lex_error(lx, "an unterminated quote");
						return T_BAD;
					}
					if (c == '"') {
						advance(lx, 1);
						break;
					}
					if (c == '\\' && (peek_at(lx, 1) == '$' || peek_at(lx, 1) == '"' ||
							  peek_at(lx, 1) == '\\')) {
						add_part(w, P_DQ, (const char *) reader_cur(&lx->r) + 1, 1, lx);
						advance(lx, 2);
					} else if (c == '\\' && peek_at(lx, 1) == '\n') {
						advance(lx, 2);
					} else if (c == '$') {
						if (!lex_var(lx, w, P_DQVAR)) {
							gs_lex_error(lx, "a $ that names no variable");
							return T_BAD;
						}
						add_part(w, P_DQ, "", 0, lx);
					} else {
						add_part(w, P_DQ, (const char *) reader_cur(&lx->r), 1, lx);
						advance(lx, 1);
					}
				}
			} else if (c == '$') {
				if (peek_at(lx, 1) == '"') {
					gs_lex_error(lx, "a $\"translated\" string");
					return T_BAD;
				}
				if (!lex_var(lx, w, P_VAR)) {
					gs_lex_error(lx, "a $ that names no variable");
					return T_BAD;
				}
			} else {
				break;
			}
			if (gs_lex_failed(lx))
				return T_BAD;
		}
		w->raw = strndup(lx->text + start, lx->r.pos - start);
		if (!w->raw) {
			gs_lex_oom(lx);
			return T_BAD;
		}
		return T_WORD;
	}
	}
	gs_lex_error(lx, "|, &, <, > or ;;");
	return T_BAD;
}

/* The next token without taking it. */
enum tok gs_peek_tok(lexer *lx, char **raw)
{
	size_t pos = lx->r.pos;
	word w;
	enum tok t = gs_lex(lx, &w);

	if (raw)
		*raw = t == T_WORD ? strdup(w.raw) : NULL;
	gs_word_done(&w);
	lx->r.pos = pos;
	return t;
}

bool gs_kw_is(const char *raw, const char *kw)
{
	return raw && strcmp(raw, kw) == 0;
}

bool gs_is_keyword(const char *raw)
{
	static const char *const kws[] = { "case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in",
					   "select", "then", "until", "while", "function", "[[", "]]", NULL };
	size_t i;

	for (i = 0; raw && kws[i]; i++)
		if (strcmp(raw, kws[i]) == 0)
			return true;
	return false;
}
