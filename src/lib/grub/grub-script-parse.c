/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The syntax tree of GRUB's grammar (grub-core/script/parser.y) from the lexer's tokens
 * (grub-script-internal.h). */
#include <stdlib.h>
#include <string.h>

#include "lib/grub/grub-script-internal.h"

void gs_node_free(node *n)
{
	while (n) {
		node *next = n->next;
		size_t i;

		for (i = 0; i < n->nw; i++)
			gs_word_done(&n->w[i]);
		free(n->w);
		free(n->name);
		gs_node_free(n->a);
		gs_node_free(n->b);
		gs_node_free(n->c);
		free(n);
		n = next;
	}
}

/* ---- parser (GRUB's grammar, parser.y) ----------------------------------------------------- */

/* Newlines (and ;) between commands; how many delimiters were seen. */
unsigned gs_skip_delims(lexer *lx, bool semis)
{
	unsigned n = 0;
	enum tok t;
	word w;

	for (;;) {
		size_t pos = lx->r.pos;

		t = gs_lex(lx, &w);
		gs_word_done(&w);
		if (t == T_NL || (semis && t == T_SEMI)) {
			n++;
			continue;
		}
		lx->r.pos = pos;
		return n;
	}
}

/* Commands separated by delimiters up to a terminator (a keyword of terms, or "}" when rbr):
 * the terminator is left for the caller. GRUB wants a delimiter before a keyword terminator. */
node *gs_parse_list(lexer *lx, const char *const *terms, bool rbr, unsigned depth)
{
	node *head = NULL, **tail = &head;
	unsigned delims = 1;

	for (;;) {
		char *raw = NULL;
		enum tok t;
		size_t i;
		bool term = false;

		delims += gs_skip_delims(lx, head != NULL);
		t = gs_peek_tok(lx, &raw);
		if (t == T_RBR && rbr && head)
			term = true;
		for (i = 0; terms && terms[i] && t == T_WORD; i++)
			if (gs_kw_is(raw, terms[i]))
				term = true;
		free(raw);
		if (term && head) {
			if (t == T_WORD && !delims)
				break; /* the caller finds its keyword missing */
			return head;
		}
		if (t != T_WORD || !delims || gs_lex_failed(lx))
			break;
		*tail = gs_parse_command(lx, depth + 1);
		if (!*tail)
			break;
		tail = &(*tail)->next;
		delims = 0;
	}
	gs_lex_error(lx, "a command list");
	gs_node_free(head);
	return NULL;
}

static bool expect_kw(lexer *lx, const char *kw)
{
	word w;
	enum tok t = gs_lex(lx, &w);
	bool ok = t == T_WORD && gs_kw_is(w.raw, kw);

	gs_word_done(&w);
	if (!ok)
		gs_lex_error(lx, kw);
	return ok;
}

static node *new_node(enum node_kind k, lexer *lx)
{
	node *n = calloc(1, sizeof(*n));

	if (!n)
		gs_lex_oom(lx);
	else
		n->k = k;
	return n;
}

static node *parse_if(lexer *lx, unsigned depth)
{
	static const char *const then_t[] = { "then", NULL }, *const else_t[] = { "else", "elif", "fi", NULL },
				 *const fi_t[] = { "fi", NULL };
	node *n = new_node(N_IF, lx);
	char *raw = NULL;

	if (!n)
		return NULL;
	if (!(n->a = gs_parse_list(lx, then_t, false, depth)) || !expect_kw(lx, "then") ||
	    !(n->b = gs_parse_list(lx, else_t, false, depth)))
		goto fail;
	gs_peek_tok(lx, &raw);
	if (gs_kw_is(raw, "elif")) {
		free(raw);
		(void) expect_kw(lx, "elif");
		if (depth > GRUB_MODEL_MAX_DEPTH || !(n->c = parse_if(lx, depth + 1)))
			goto fail;
		return n; /* the inner if took the fi */
	}
	if (gs_kw_is(raw, "else")) {
		(void) expect_kw(lx, "else");
		if (!(n->c = gs_parse_list(lx, fi_t, false, depth)))
			goto fail_raw;
	}
	free(raw);
	if (!expect_kw(lx, "fi"))
		goto fail;
	return n;
fail_raw:
	free(raw);
fail:
	gs_node_free(n);
	return NULL;
}

node *gs_parse_command(lexer *lx, unsigned depth)
{
	static const char *const do_t[] = { "do", NULL }, *const done_t[] = { "done", NULL };
	node *n;
	word w;
	enum tok t;

	if (depth > GRUB_MODEL_MAX_DEPTH) {
		gs_lex_error(lx, "nesting deeper than the model follows");
		return NULL;
	}
	t = gs_lex(lx, &w);
	if (t != T_WORD) {
		gs_word_done(&w);
		gs_lex_error(lx, "a command");
		return NULL;
	}
	if (gs_kw_is(w.raw, "if")) {
		gs_word_done(&w);
		return parse_if(lx, depth);
	}
	if (gs_kw_is(w.raw, "while") || gs_kw_is(w.raw, "until")) {
		n = new_node(gs_kw_is(w.raw, "while") ? N_WHILE : N_UNTIL, lx);
		gs_word_done(&w);
		if (!n || !(n->a = gs_parse_list(lx, do_t, false, depth)) || !expect_kw(lx, "do") ||
		    !(n->b = gs_parse_list(lx, done_t, false, depth)) || !expect_kw(lx, "done")) {
			gs_node_free(n);
			return NULL;
		}
		return n;
	}
	if (gs_kw_is(w.raw, "for")) {
		word v;

		gs_word_done(&w);
		n = new_node(N_FOR, lx);
		if (!n)
			return NULL;
		if (gs_lex(lx, &v) != T_WORD || gs_is_keyword(v.raw) || !gs_is_name_start(v.raw[0])) {
			gs_word_done(&v);
			gs_node_free(n);
			gs_lex_error(lx, "for NAME");
			return NULL;
		}
		n->name = v.raw;
		v.raw = NULL;
		gs_word_done(&v);
		if (!expect_kw(lx, "in")) {
			gs_node_free(n);
			return NULL;
		}
		goto args;
	}
	if (gs_is_keyword(w.raw)) {
		gs_word_done(&w);
		gs_lex_error(lx, "a keyword where a command starts");
		return NULL;
	}
	n = new_node(N_CMD, lx);
	if (!n) {
		gs_word_done(&w);
		return NULL;
	}
	n->w = malloc(sizeof(*n->w));
	if (!n->w) {
		gs_lex_oom(lx); /* else a NULL command ends the list: the rest of the script unseen */
		gs_word_done(&w);
		gs_node_free(n);
		return NULL;
	}
	n->w[n->nw++] = w;
args:
	for (;;) {
		size_t pos = lx->r.pos;
		word *grown;

		t = gs_lex(lx, &w);
		if (t == T_LBR && n->k == N_CMD) {
			/* a block: the last argument, kept as GRUB records it */
			static const char *const none[] = { NULL };
			size_t from = lx->r.pos, to;
			node *body = gs_parse_list(lx, none, true, depth);

			gs_node_free(body);
			to = lx->r.pos;
			if (!body || gs_lex(lx, &w) != T_RBR) {
				gs_word_done(&w);
				gs_lex_error(lx, "a block");
				gs_node_free(n);
				return NULL;
			}
			/* the raw text runs to the brace: skip_delims may have stopped before blanks */
			to = lx->r.pos - 1;
			w.block = strndup(lx->text + from, to - from);
			w.raw = strdup("{}");
			if (!w.block || !w.raw)
				gs_lex_oom(lx);
		} else if (t != T_WORD) {
			gs_word_done(&w);
			lx->r.pos = pos;
			break;
		}
		grown = realloc(n->w, (n->nw + 1) * sizeof(*n->w));
		if (!grown) {
			gs_word_done(&w);
			gs_lex_oom(lx);
			gs_node_free(n);
			return NULL;
		}
		n->w = grown;
		n->w[n->nw++] = w;
		if (t == T_LBR)
			break;
	}
	if (n->k == N_FOR) {
		if (!gs_skip_delims(lx, true) || !expect_kw(lx, "do") || !(n->a = gs_parse_list(lx, done_t, false, depth)) ||
		    !expect_kw(lx, "done")) {
			gs_lex_error(lx, "for ... do ... done");
			gs_node_free(n);
			return NULL;
		}
	}
	if (gs_lex_failed(lx)) {
		gs_node_free(n);
		return NULL;
	}
	return n;
}
