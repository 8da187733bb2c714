/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GRUB 2.06's script language as far as measurement sees it (grub-script.h). The rules, from
 * GRUB's sources (grub-core/script/yylex.l, parser.y, execute.c, commands/menuentry.c,
 * normal/main.c, normal/menu.c):
 * - read_config_file drops '\r' and every line whose first byte is '#'; a word is a run of
 *   unquoted characters, 'single', "double" quotes (\$ \" \\ and \newline escaped), \x, $var,
 *   ${var}; a block's argument is the raw text between its braces.
 * - an unquoted $var splits at blanks, an empty one leaves no argument; "" is an empty argument.
 * - each simple command is measured once its words are expanded, before it runs, whether it
 *   exists or not; a word NAME=VALUE that is no command assigns.
 * - `menuentry ARGS {BLOCK}` stores "setparams 'TITLE' ...\n" + BLOCK as the entry's source;
 *   when the menu times out GRUB runs the default entry's source (a submenu: its source, then
 *   its own default), then boots what it loaded (the implicit boot is not measured).
 * - configfile opens a new environment holding the exported variables, reads the file, shows
 *   its menu; source reads the file into the current one.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grub/grub-script.h"
#include "shared/reader.h"

#define UNKNOWN_OPEN '\x01'
#define UNKNOWN_CLOSE '\x02'
#define MAX_RUNS 64

/* ---- words and the syntax tree ---------------------------------------------------------- */

enum part_type { P_TEXT, P_SQ, P_DQ, P_VAR, P_DQVAR };

typedef struct part {
	enum part_type t;
	char *s;
} part;

typedef struct word {
	part *p;
	size_t n;
	char *raw;   /* as written, to tell keywords */
	char *block; /* a block argument: the raw text between the braces */
} word;

enum node_kind { N_CMD, N_IF, N_FOR, N_WHILE, N_UNTIL };

typedef struct node {
	enum node_kind k;
	word *w;
	size_t nw;
	char *name;            /* for: the variable */
	struct node *a, *b, *c; /* if: condition, then, else; while: condition, body; for: body */
	struct node *next;
} node;

static void word_done(word *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		free(w->p[i].s);
	free(w->p);
	free(w->raw);
	free(w->block);
	memset(w, 0, sizeof(*w));
}

static void node_free(node *n)
{
	while (n) {
		node *next = n->next;
		size_t i;

		for (i = 0; i < n->nw; i++)
			word_done(&n->w[i]);
		free(n->w);
		free(n->name);
		node_free(n->a);
		node_free(n->b);
		node_free(n->c);
		free(n);
		n = next;
	}
}

/* ---- a growing string -------------------------------------------------------------------- */

typedef struct sbuf {
	char *s;
	size_t n, cap;
	bool oom;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > GRUB_MODEL_MAX_STRING) {
		b->oom = true; /* bounded: the caller reports an oversized string */
		return;
	}
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;
		char *p = realloc(b->s, cap);

		if (!p) {
			b->oom = true;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = 0;
}

static void sb_str(sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static char *sb_take(sbuf *b)
{
	char *s;

	if (b->oom) {
		free(b->s);
		return NULL;
	}
	s = b->s ? b->s : strdup("");
	b->s = NULL;
	return s;
}

/* ---- lexer: GRUB's tokens over a cleaned text (bounds through the reader) ---------------- */

enum tok { T_EOF, T_NL, T_SEMI, T_LBR, T_RBR, T_WORD, T_BAD };

typedef struct lexer {
	byte_reader r;
	const char *text;
	char *err; /* a syntax error: the model stops */
} lexer;

static int peek_at(const lexer *lx, size_t k)
{
	return k < reader_left(&lx->r) ? reader_cur(&lx->r)[k] : -1;
}

static void advance(lexer *lx, size_t k)
{
	if (read_skip(&lx->r, k) < 0)
		lx->r.pos = lx->r.size;
}

static void lex_error(lexer *lx, const char *what)
{
	if (!lx->err && asprintf(&lx->err, "syntax the model does not take (%s) at byte %zu", what, lx->r.pos) < 0)
		lx->err = NULL;
}

static bool is_name_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_name_char(int c)
{
	return is_name_start(c) || is_digit(c);
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
			lex_error(lx, "out of memory");
			return;
		}
		memcpy(ns + old, s, n);
		ns[old + n] = 0;
		last->s = ns;
		return;
	}
	p = realloc(w->p, (w->n + 1) * sizeof(*p));
	if (!p) {
		lex_error(lx, "out of memory");
		return;
	}
	w->p = p;
	w->p[w->n].t = t;
	w->p[w->n].s = strndup(s, n);
	if (!w->p[w->n].s)
		lex_error(lx, "out of memory");
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
	} else if (is_digit(c)) {
		while (is_digit(peek_at(lx, k)))
			k++;
	} else if (is_name_start(c)) {
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
static enum tok lex(lexer *lx, word *w)
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
					lex_error(lx, "a backslash at the end");
					return T_BAD;
				}
			} else if (c == '\'') {
				size_t k = 1;

				while (peek_at(lx, k) >= 0 && peek_at(lx, k) != '\'')
					k++;
				if (peek_at(lx, k) < 0) {
					lex_error(lx, "an unterminated quote");
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
						lex_error(lx, "an unterminated quote");
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
							lex_error(lx, "a $ that names no variable");
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
					lex_error(lx, "a $\"translated\" string");
					return T_BAD;
				}
				if (!lex_var(lx, w, P_VAR)) {
					lex_error(lx, "a $ that names no variable");
					return T_BAD;
				}
			} else {
				break;
			}
			if (lx->err)
				return T_BAD;
		}
		w->raw = strndup(lx->text + start, lx->r.pos - start);
		if (!w->raw) {
			lex_error(lx, "out of memory");
			return T_BAD;
		}
		return T_WORD;
	}
	}
	lex_error(lx, "|, &, <, > or ;;");
	return T_BAD;
}

/* The next token without taking it. */
static enum tok peek_tok(lexer *lx, char **raw)
{
	size_t pos = lx->r.pos;
	word w;
	enum tok t = lex(lx, &w);

	if (raw)
		*raw = t == T_WORD ? strdup(w.raw) : NULL;
	word_done(&w);
	lx->r.pos = pos;
	return t;
}

static bool kw_is(const char *raw, const char *kw)
{
	return raw && strcmp(raw, kw) == 0;
}

static bool is_keyword(const char *raw)
{
	static const char *const kws[] = { "case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in",
					   "select", "then", "until", "while", "function", "[[", "]]", NULL };
	size_t i;

	for (i = 0; raw && kws[i]; i++)
		if (strcmp(raw, kws[i]) == 0)
			return true;
	return false;
}

/* ---- parser (GRUB's grammar, parser.y) ----------------------------------------------------- */

static node *parse_command(lexer *lx, unsigned depth);

/* Newlines (and ;) between commands; how many delimiters were seen. */
static unsigned skip_delims(lexer *lx, bool semis)
{
	unsigned n = 0;
	enum tok t;
	word w;

	for (;;) {
		size_t pos = lx->r.pos;

		t = lex(lx, &w);
		word_done(&w);
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
static node *parse_list(lexer *lx, const char *const *terms, bool rbr, unsigned depth)
{
	node *head = NULL, **tail = &head;
	unsigned delims = 1;

	for (;;) {
		char *raw = NULL;
		enum tok t;
		size_t i;
		bool term = false;

		delims += skip_delims(lx, head != NULL);
		t = peek_tok(lx, &raw);
		if (t == T_RBR && rbr && head)
			term = true;
		for (i = 0; terms && terms[i] && t == T_WORD; i++)
			if (kw_is(raw, terms[i]))
				term = true;
		free(raw);
		if (term && head) {
			if (t == T_WORD && !delims)
				break; /* the caller finds its keyword missing */
			return head;
		}
		if (t != T_WORD || !delims || lx->err)
			break;
		*tail = parse_command(lx, depth + 1);
		if (!*tail)
			break;
		tail = &(*tail)->next;
		delims = 0;
	}
	lex_error(lx, "a command list");
	node_free(head);
	return NULL;
}

static bool expect_kw(lexer *lx, const char *kw)
{
	word w;
	enum tok t = lex(lx, &w);
	bool ok = t == T_WORD && kw_is(w.raw, kw);

	word_done(&w);
	if (!ok)
		lex_error(lx, kw);
	return ok;
}

static node *new_node(enum node_kind k, lexer *lx)
{
	node *n = calloc(1, sizeof(*n));

	if (!n)
		lex_error(lx, "out of memory");
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
	if (!(n->a = parse_list(lx, then_t, false, depth)) || !expect_kw(lx, "then") ||
	    !(n->b = parse_list(lx, else_t, false, depth)))
		goto fail;
	peek_tok(lx, &raw);
	if (kw_is(raw, "elif")) {
		free(raw);
		(void) expect_kw(lx, "elif");
		if (depth > GRUB_MODEL_MAX_DEPTH || !(n->c = parse_if(lx, depth + 1)))
			goto fail;
		return n; /* the inner if took the fi */
	}
	if (kw_is(raw, "else")) {
		(void) expect_kw(lx, "else");
		if (!(n->c = parse_list(lx, fi_t, false, depth)))
			goto fail_raw;
	}
	free(raw);
	if (!expect_kw(lx, "fi"))
		goto fail;
	return n;
fail_raw:
	free(raw);
fail:
	node_free(n);
	return NULL;
}

static node *parse_command(lexer *lx, unsigned depth)
{
	static const char *const do_t[] = { "do", NULL }, *const done_t[] = { "done", NULL };
	node *n;
	word w;
	enum tok t;

	if (depth > GRUB_MODEL_MAX_DEPTH) {
		lex_error(lx, "nesting deeper than the model follows");
		return NULL;
	}
	t = lex(lx, &w);
	if (t != T_WORD) {
		word_done(&w);
		lex_error(lx, "a command");
		return NULL;
	}
	if (kw_is(w.raw, "if")) {
		word_done(&w);
		return parse_if(lx, depth);
	}
	if (kw_is(w.raw, "while") || kw_is(w.raw, "until")) {
		n = new_node(kw_is(w.raw, "while") ? N_WHILE : N_UNTIL, lx);
		word_done(&w);
		if (!n || !(n->a = parse_list(lx, do_t, false, depth)) || !expect_kw(lx, "do") ||
		    !(n->b = parse_list(lx, done_t, false, depth)) || !expect_kw(lx, "done")) {
			node_free(n);
			return NULL;
		}
		return n;
	}
	if (kw_is(w.raw, "for")) {
		word v;

		word_done(&w);
		n = new_node(N_FOR, lx);
		if (!n)
			return NULL;
		if (lex(lx, &v) != T_WORD || is_keyword(v.raw) || !is_name_start(v.raw[0])) {
			word_done(&v);
			node_free(n);
			lex_error(lx, "for NAME");
			return NULL;
		}
		n->name = v.raw;
		v.raw = NULL;
		word_done(&v);
		if (!expect_kw(lx, "in")) {
			node_free(n);
			return NULL;
		}
		goto args;
	}
	if (is_keyword(w.raw)) {
		word_done(&w);
		lex_error(lx, "a keyword where a command starts");
		return NULL;
	}
	n = new_node(N_CMD, lx);
	if (!n) {
		word_done(&w);
		return NULL;
	}
	n->w = malloc(sizeof(*n->w));
	if (!n->w) {
		word_done(&w);
		node_free(n);
		return NULL;
	}
	n->w[n->nw++] = w;
args:
	for (;;) {
		size_t pos = lx->r.pos;
		word *grown;

		t = lex(lx, &w);
		if (t == T_LBR && n->k == N_CMD) {
			/* a block: the last argument, kept as GRUB records it */
			static const char *const none[] = { NULL };
			size_t from = lx->r.pos, to;
			node *body = parse_list(lx, none, true, depth);

			node_free(body);
			to = lx->r.pos;
			if (!body || lex(lx, &w) != T_RBR) {
				word_done(&w);
				lex_error(lx, "a block");
				node_free(n);
				return NULL;
			}
			/* the raw text runs to the brace: skip_delims may have stopped before blanks */
			to = lx->r.pos - 1;
			w.block = strndup(lx->text + from, to - from);
			w.raw = strdup("{}");
			if (!w.block || !w.raw)
				lex_error(lx, "out of memory");
		} else if (t != T_WORD) {
			word_done(&w);
			lx->r.pos = pos;
			break;
		}
		grown = realloc(n->w, (n->nw + 1) * sizeof(*n->w));
		if (!grown) {
			word_done(&w);
			lex_error(lx, "out of memory");
			node_free(n);
			return NULL;
		}
		n->w = grown;
		n->w[n->nw++] = w;
		if (t == T_LBR)
			break;
	}
	if (n->k == N_FOR) {
		if (!skip_delims(lx, true) || !expect_kw(lx, "do") || !(n->a = parse_list(lx, done_t, false, depth)) ||
		    !expect_kw(lx, "done")) {
			lex_error(lx, "for ... do ... done");
			node_free(n);
			return NULL;
		}
	}
	if (lx->err) {
		node_free(n);
		return NULL;
	}
	return n;
}

/* ---- what the model learns --------------------------------------------------------------- */

typedef struct fact {
	char *key;   /* the measured text of the command */
	char *var;   /* NULL: the command's outcome; else a variable it set */
	char *value; /* for a variable */
	int outcome; /* 1 true, 0 false, -1 seen both ways */
} fact;

struct grub_model {
	fact *f;
	size_t n;
};

static void facts_clear(fact **f, size_t *n)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		free((*f)[i].key);
		free((*f)[i].var);
		free((*f)[i].value);
	}
	free(*f);
	*f = NULL;
	*n = 0;
}

static int fact_add(fact **f, size_t *n, const char *key, const char *var, const char *value, int outcome)
{
	fact *g;
	size_t i;

	for (i = 0; i < *n; i++) {
		fact *x = &(*f)[i];

		if (strcmp(x->key, key) || (!x->var) != (!var) || (var && strcmp(x->var, var)))
			continue;
		if (!var && x->outcome != outcome)
			x->outcome = -1;
		if (var && strcmp(x->value, value)) {
			free(x->value);
			x->value = NULL; /* two values: none known */
		}
		return 0;
	}
	g = realloc(*f, (*n + 1) * sizeof(**f));
	if (!g)
		return -ENOMEM;
	*f = g;
	g = &(*f)[(*n)++];
	g->key = strdup(key);
	g->var = var ? strdup(var) : NULL;
	g->value = value ? strdup(value) : NULL;
	g->outcome = outcome;
	if (!g->key || (var && !g->var) || (value && !g->value))
		return -ENOMEM;
	return 0;
}

static const fact *fact_find(const grub_model *m, const char *key, const char *var)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->f[i].key, key) && (!m->f[i].var) == (!var) && (!var || !strcmp(m->f[i].var, var)))
			return &m->f[i];
	return NULL;
}

grub_model *grub_model_new(void)
{
	return calloc(1, sizeof(grub_model));
}

void grub_model_free(grub_model *m)
{
	if (!m)
		return;
	facts_clear(&m->f, &m->n);
	free(m);
}

void grub_model_run_done(grub_model_run *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->s[i].text);
	free(r->s);
	free(r->why);
	free(r->entry);
	memset(r, 0, sizeof(*r));
}

/* ---- the interpreter --------------------------------------------------------------------- */

typedef struct var {
	char *name;
	char *value;  /* NULL: unknown to the model */
	char *setter; /* for an unknown: the command that set it */
	bool exported;
} var;

typedef struct entry {
	char *title, *id, *source;
	char **args;
	size_t nargs;
	bool submenu;
} entry;

typedef struct menu {
	entry *e;
	size_t n;
} menu;

typedef struct envctx {
	var *v;
	size_t n;
	bool tainted; /* load_env ran: any unset variable may have come from grubenv */
	char *taint_setter;
	menu m;
} envctx;

typedef struct func {
	char *name;
	node *body;
} func;

typedef struct scope {
	char **args;
	size_t n;
	char **own; /* what setparams gave it (n strings), freed with it */
} scope;

static void scope_drop_own(scope *s)
{
	size_t i;

	if (!s->own)
		return;
	for (i = 0; i < s->n; i++)
		free(s->own[i]);
	free(s->own);
	s->own = NULL;
}

enum status { S_OK, S_FAIL, S_UNKNOWN };

typedef struct gs {
	grub_model *m;
	const grub_model_config *cfg;
	size_t n_cfg;
	bool check, kernel_cmdline;
	const grub_model_string *today;
	size_t n_today;
	grub_model_run *out;
	/* the self-check's search over unknown outcomes: decisions to follow, then to take */
	const int *forced;
	size_t n_forced;
	int dec[MAX_RUNS];
	char *dec_key[MAX_RUNS];
	size_t n_dec;
	fact *learned; /* variables solved from today's strings, this run */
	size_t n_learned;
	char *stop;
	bool mismatch, booted, loaded, oom;
	size_t steps;
	unsigned depth;
	envctx ctx[GRUB_MODEL_MAX_DEPTH + 2];
	size_t n_ctx;
	scope *sc[GRUB_MODEL_MAX_DEPTH + 2];
	size_t n_sc;
	func *fn;
	size_t n_fn;
	node **keep; /* parsed statements, which functions point into */
	size_t n_keep;
	char *last_cmd; /* the last measured command: the key of a condition */
	bool returning;
	/* a menu entry picked by hand (grub_model_choice.entry): what is left of the spec, NULL
	 * for the default; explore: stop at the menu the spec leads to and list its entries */
	const char *choose;
	bool explore, explored, no_entry;
	size_t n_explored;
	bool explored_sub[GRUB_MODEL_MAX_ENTRIES];
	sbuf chosen_path; /* the entries picked, by number */
	char *loaded_path; /* the last linux command's kernel */
} gs;

static void stopf(gs *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void stopf(gs *g, const char *fmt, ...)
{
	va_list ap;

	if (g->stop)
		return;
	va_start(ap, fmt);
	if (vasprintf(&g->stop, fmt, ap) < 0) {
		g->stop = NULL;
		g->oom = true;
	}
	va_end(ap);
	if (!g->stop)
		g->oom = true;
}

static bool stopped(const gs *g)
{
	return g->stop || g->booted || g->oom;
}

static envctx *cur(gs *g)
{
	return &g->ctx[g->n_ctx - 1];
}

static var *var_find(envctx *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			return &c->v[i];
	return NULL;
}

/* Set name (value NULL: unknown, set by setter). */
static var *var_set(gs *g, const char *name, const char *value, const char *setter)
{
	envctx *c = cur(g);
	var *v = var_find(c, name);

	if (!v) {
		var *nv = realloc(c->v, (c->n + 1) * sizeof(*nv));

		if (!nv || !(name = strdup(name))) {
			g->oom = true;
			if (nv)
				c->v = nv;
			return NULL;
		}
		c->v = nv;
		v = &c->v[c->n++];
		memset(v, 0, sizeof(*v));
		v->name = (char *) name;
	}
	free(v->value);
	free(v->setter);
	v->value = value ? strdup(value) : NULL;
	v->setter = !value && setter ? strdup(setter) : NULL;
	if ((value && !v->value) || (!value && setter && !v->setter))
		g->oom = true;
	return v;
}

static void var_unset(gs *g, const char *name)
{
	envctx *c = cur(g);
	var *v = var_find(c, name);

	if (!v)
		return;
	free(v->name);
	free(v->value);
	free(v->setter);
	*v = c->v[--c->n];
}

static void menu_done(menu *m)
{
	size_t i, k;

	for (i = 0; i < m->n; i++) {
		free(m->e[i].title);
		free(m->e[i].id);
		free(m->e[i].source);
		for (k = 0; k < m->e[i].nargs; k++)
			free(m->e[i].args[k]);
		free(m->e[i].args);
	}
	free(m->e);
	memset(m, 0, sizeof(*m));
}

static void ctx_done(envctx *c)
{
	while (c->n) {
		c->n--;
		free(c->v[c->n].name);
		free(c->v[c->n].value);
		free(c->v[c->n].setter);
	}
	free(c->v);
	free(c->taint_setter);
	menu_done(&c->m);
	memset(c, 0, sizeof(*c));
}

/* grub_env_context_open: a new context with the exported variables (and a new menu). */
static bool ctx_open(gs *g)
{
	envctx *old;
	size_t i;

	if (g->n_ctx >= GRUB_MODEL_MAX_DEPTH) {
		stopf(g, "configs and submenus nest deeper than the model follows");
		return false;
	}
	old = cur(g);
	memset(&g->ctx[g->n_ctx], 0, sizeof(envctx));
	g->n_ctx++;
	for (i = 0; i < old->n; i++) {
		if (old->v[i].exported) {
			var *v = var_set(g, old->v[i].name, old->v[i].value, old->v[i].setter);

			if (v)
				v->exported = true;
		}
	}
	/* what load_env may have set is unknown only where it was exported: the new context
	 * starts with exactly what is listed */
	return !g->oom;
}

static void ctx_close(gs *g)
{
	if (g->n_ctx > 1)
		ctx_done(&g->ctx[--g->n_ctx]);
}

/* The value of a variable: NULL when unknown (*known false), "" when unset. */
static const char *lookup(gs *g, const char *name, bool *known, const char **setter)
{
	scope *s = g->n_sc ? g->sc[g->n_sc - 1] : NULL;
	var *v;

	*known = true;
	*setter = NULL;
	if (is_digit(name[0]) || !strcmp(name, "#") || !strcmp(name, "*") || !strcmp(name, "@")) {
		/* positional parameters; "$*" and "$@" as one word is all the model needs */
		static char num[24];
		char *end;
		unsigned long k;

		errno = 0;
		k = strtoul(name, &end, 10);
		if (errno || *end)
			k = 0; /* not a number GRUB would take: no such parameter */

		if (!s)
			return "";
		if (!strcmp(name, "#")) {
			snprintf(num, sizeof(num), "%zu", s->n);
			return num;
		}
		if (name[0] == '*' || name[0] == '@') {
			*known = s->n <= 1;
			*setter = "a function's arguments";
			return s->n ? s->args[0] : "";
		}
		return k >= 1 && k <= s->n ? s->args[k - 1] : "";
	}
	v = var_find(cur(g), name);
	if (v) {
		*known = v->value != NULL;
		*setter = v->setter;
		return v->value;
	}
	if (cur(g)->tainted) {
		*known = false;
		*setter = cur(g)->taint_setter;
		return NULL;
	}
	return "";
}

/* argv under construction: GRUB's grub_script_argv with its "current argument may be absent" */
typedef struct argv_b {
	char **a;
	size_t n;
	bool open; /* a[n-1] is still NULL-able (no text yet) */
	bool oom;
} argv_b;

static void av_next(argv_b *b)
{
	char **p;

	if (b->oom || (b->n && !b->a[b->n - 1]))
		return;
	if (b->n >= GRUB_MAX_WORDS * 4) {
		b->oom = true;
		return;
	}
	p = realloc(b->a, (b->n + 2) * sizeof(*p));
	if (!p) {
		b->oom = true;
		return;
	}
	b->a = p;
	b->a[b->n++] = NULL;
	b->a[b->n] = NULL;
}

static void av_append(argv_b *b, const char *s, size_t n)
{
	char *cur_s, *ns;
	size_t old;

	if (b->oom)
		return;
	if (!b->n)
		av_next(b);
	if (b->oom)
		return;
	cur_s = b->a[b->n - 1];
	old = cur_s ? strlen(cur_s) : 0;
	if (old + n + 1 > GRUB_MODEL_MAX_STRING) {
		b->oom = true;
		return;
	}
	ns = realloc(cur_s, old + n + 1);
	if (!ns) {
		b->oom = true;
		return;
	}
	memcpy(ns + old, s, n);
	ns[old + n] = 0;
	b->a[b->n - 1] = ns;
}

static void av_free(argv_b *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		free(b->a[i]);
	free(b->a);
	memset(b, 0, sizeof(*b));
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* An unknown value, marked so that the self-check can solve it from today's string. */
static void av_unknown(argv_b *b, const char *name)
{
	char open = UNKNOWN_OPEN, close = UNKNOWN_CLOSE;

	av_append(b, &open, 1);
	av_append(b, name, strlen(name));
	av_append(b, &close, 1);
}

/* grub_script_arglist_to_argv */
static void expand(gs *g, const word *w, size_t nw, argv_b *b)
{
	size_t i, k;

	for (i = 0; i < nw && !b->oom; i++) {
		av_next(b);
		if (w[i].block) {
			av_append(b, "{", 1);
			av_append(b, w[i].block, strlen(w[i].block));
			av_append(b, "}", 1);
			continue;
		}
		for (k = 0; k < w[i].n; k++) {
			const part *p = &w[i].p[k];
			const char *v, *setter;
			bool known;

			switch (p->t) {
			case P_TEXT:
				if (p->s[0])
					av_append(b, p->s, strlen(p->s));
				break;
			case P_SQ:
			case P_DQ:
				av_append(b, p->s, strlen(p->s));
				break;
			case P_VAR:
			case P_DQVAR:
				v = lookup(g, p->s, &known, &setter);
				if (!known) {
					av_unknown(b, p->s);
				} else if (v[0] && p->t == P_DQVAR) {
					av_append(b, v, strlen(v));
				} else if (v[0]) {
					/* unquoted: split at blanks into arguments */
					const char *s = v;

					while (*s) {
						const char *start = s;

						while (*s && !is_space(*s))
							s++;
						av_append(b, start, (size_t) (s - start));
						while (*s && is_space(*s))
							s++;
						if (*s)
							av_next(b);
					}
				}
				break;
			}
		}
	}
	if (b->n && !b->a[b->n - 1])
		b->n--;
}

static char *join_argv(char *const *a, size_t n)
{
	sbuf s = { 0 };
	size_t i;

	for (i = 0; i < n; i++) {
		if (i)
			sb_add(&s, " ", 1);
		sb_str(&s, a[i] ? a[i] : "");
	}
	return sb_take(&s);
}

/* The self-check solves a string with unknowns (one variable, any number of times) from
 * today's: the variable's value, or NULL. */
static char *solve(const char *tmpl, const char *actual, char **name)
{
	const char *p, *o;
	size_t lit = 0, occ = 0, vlen, alen = strlen(actual);
	char *nm = NULL, *val = NULL;

	for (p = tmpl; *p; p++) {
		if (*p == UNKNOWN_OPEN) {
			const char *e = strchr(p, UNKNOWN_CLOSE);

			if (!e)
				goto fail;
			if (!nm)
				nm = strndup(p + 1, (size_t) (e - p - 1));
			else if (strlen(nm) != (size_t) (e - p - 1) || strncmp(nm, p + 1, (size_t) (e - p - 1)))
				goto fail; /* two unknowns: not solvable from one string */
			if (!nm)
				goto fail;
			occ++;
			p = e;
		} else {
			lit++;
		}
	}
	if (!occ || alen < lit || (alen - lit) % occ)
		goto fail;
	vlen = (alen - lit) / occ;
	/* walk: literals must match, each occurrence takes vlen bytes, all equal */
	for (p = tmpl, o = actual; *p; p++) {
		if (*p == UNKNOWN_OPEN) {
			if (!val) {
				val = strndup(o, vlen);
				if (!val)
					goto fail;
			} else if (strncmp(val, o, vlen)) {
				goto fail;
			}
			o += vlen;
			p = strchr(p, UNKNOWN_CLOSE);
		} else if (*p != *o++) {
			goto fail;
		}
	}
	*name = nm;
	return val;
fail:
	free(nm);
	free(val);
	return NULL;
}

static const char *kind_label(grub_string_kind k)
{
	return k == GRUB_STRING_KERNEL_CMDLINE ? "kernel_cmdline: " : "grub_cmd: ";
}

/* GRUB measures a string: take it (text is ours); compare with today's in the self-check. */
static void emit(gs *g, grub_string_kind kind, char *text)
{
	grub_model_string *grown;
	size_t at = g->out->n;

	if (!text) {
		g->oom = true;
		return;
	}
	if (strchr(text, UNKNOWN_OPEN)) {
		char *name = NULL, *val = NULL;
		const char *setter = NULL;
		bool known;

		if (g->check && at < g->n_today && g->today[at].kind == kind)
			val = solve(text, g->today[at].text, &name);
		if (!val) {
			char *nm = strchr(text, UNKNOWN_OPEN) + 1, *end = strchr(nm, UNKNOWN_CLOSE);

			if (end)
				*end = 0;
			lookup(g, nm, &known, &setter);
			stopf(g, "%s \"%.80s...\" uses $%s, set by `%.80s`, whose value the model does not know%s", kind_label(kind),
			      text, nm, setter ? setter : "GRUB", g->check ? " (today's string does not give it)" : "");
			free(text);
			return;
		}
		/* learned: the variable holds it from now on, and the command that set it gives it */
		lookup(g, name, &known, &setter);
		if (setter && fact_add(&g->learned, &g->n_learned, setter, name, val, 1) < 0)
			g->oom = true;
		{
			var *v = var_find(cur(g), name);

			if (v && !v->value) {
				v->value = strdup(val);
				if (!v->value)
					g->oom = true;
			} else if (!v) {
				var_set(g, name, val, NULL);
			}
		}
		free(name);
		free(val);
		free(text);
		text = strdup(g->today[at].text);
		if (!text) {
			g->oom = true;
			return;
		}
	}
	if (g->check) {
		if (at >= g->n_today) {
			stopf(g, "today's log ends after %zu GRUB strings; the model measures another: %s\"%.200s\"", at,
			      kind_label(kind), text);
			g->mismatch = true;
		} else if (g->today[at].kind != kind || strcmp(g->today[at].text, text)) {
			/* a long string (a menu entry's block): shown from a little before where they part */
			const char *t = g->today[at].text;
			size_t d = 0, from;

			while (t[d] && t[d] == text[d])
				d++;
			from = d > 120 ? d - 40 : 0;
			stopf(g, "GRUB string %zu differs%s: today's %s\"%s%.200s\", the model's %s\"%s%.200s\"", at + 1,
			      from ? " after its first bytes" : "", kind_label(g->today[at].kind), from ? "..." : "",
			      t + from, kind_label(kind), from ? "..." : "", text + from);
			g->mismatch = true;
		}
	}
	if (at >= GRUB_MODEL_MAX_STRINGS)
		stopf(g, "more than %d measured strings", GRUB_MODEL_MAX_STRINGS);
	if (stopped(g)) {
		free(text);
		return;
	}
	grown = realloc(g->out->s, (at + 1) * sizeof(*grown));
	if (!grown) {
		free(text);
		g->oom = true;
		return;
	}
	g->out->s = grown;
	g->out->s[at].kind = kind;
	g->out->s[at].text = text;
	g->out->n++;
}

static bool has_unknown(char *const *a, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] && strchr(a[i], UNKNOWN_OPEN))
			return true;
	return false;
}

static enum status exec_list(gs *g, node *n);
static void run_config(gs *g, const char *path, bool new_env);
static void run_source(gs *g, const char *source, char **args, size_t nargs);

/* GRUB's test ([ ... ]): what follows from the strings alone; file tests are unknown. */
static enum status test_eval(char **a, size_t n)
{
	bool neg = false;

	while (n && !strcmp(a[0], "!")) {
		neg = !neg;
		a++;
		n--;
	}
	if (n == 0)
		return neg ? S_OK : S_FAIL;
	if (n == 1)
		return (a[0][0] != 0) != neg ? S_OK : S_FAIL;
	if (n == 2 && (!strcmp(a[0], "-n") || !strcmp(a[0], "-z")))
		return ((a[1][0] != 0) == (a[0][1] == 'n')) != neg ? S_OK : S_FAIL;
	if (n == 3) {
		int c = strcmp(a[0], a[2]);
		const char *op = a[1];

		if (!strcmp(op, "=") || !strcmp(op, "=="))
			return (c == 0) != neg ? S_OK : S_FAIL;
		if (!strcmp(op, "!="))
			return (c != 0) != neg ? S_OK : S_FAIL;
	}
	return S_UNKNOWN;
}

/* What an unknown outcome was: the self-check's decision, or what it learned. */
static enum status decide(gs *g, enum status st)
{
	const char *key = g->last_cmd ? g->last_cmd : "";

	if (st != S_UNKNOWN)
		return st;
	if (g->check) {
		int d;

		if (g->n_dec >= MAX_RUNS) {
			stopf(g, "more than %d conditions whose outcome only today's log tells", MAX_RUNS);
			return S_FAIL;
		}
		d = g->n_dec < g->n_forced ? g->forced[g->n_dec] : 1;
		g->dec_key[g->n_dec] = strdup(key);
		if (!g->dec_key[g->n_dec])
			g->oom = true;
		g->dec[g->n_dec++] = d;
		return d ? S_OK : S_FAIL;
	} else {
		const fact *f = fact_find(g->m, key, NULL);

		if (!f || f->outcome < 0) {
			stopf(g, "whether `%.200s` succeeds decides what GRUB runs, and %s", key,
			      f ? "today's boot saw it both ways" : "today's boot did not run it");
			return S_FAIL;
		}
		return f->outcome ? S_OK : S_FAIL;
	}
}

static void add_entry(gs *g, char **a, size_t n, bool submenu)
{
	entry e = { 0 };
	sbuf src = { 0 };
	menu *m = &cur(g)->m;
	entry *grown;
	size_t i;
	const char *block = NULL;

	e.submenu = submenu;
	if (n && a[n - 1][0] == '{') {
		block = a[n - 1];
		n--;
	}
	e.args = calloc(n + 1, sizeof(char *));
	if (!e.args) {
		g->oom = true;
		return;
	}
	for (i = 1; i < n; i++) {
		const char *w = a[i];

		if (!strncmp(w, "--", 2) && w[2]) {
			const char *name = w + 2, *eq = strchr(name, '=');
			size_t nl = eq ? (size_t) (eq - name) : strlen(name);
			const char *val = eq ? eq + 1 : NULL;

			if (nl == 12 && !strncmp(name, "unrestricted", nl))
				continue;
			if (!val && i + 1 < n)
				val = a[++i];
			if (nl == 2 && !strncmp(name, "id", 2) && val && !e.id)
				e.id = strdup(val);
			continue;
		}
		e.args[e.nargs] = strdup(w);
		if (!e.args[e.nargs++])
			g->oom = true;
	}
	if (!block || !e.nargs) {
		/* --source, or no title: not what GRUB's generated configs write */
		stopf(g, "a menu entry without a title and a block");
		goto fail;
	}
	e.title = strdup(e.args[0]);
	if (!e.id)
		e.id = strdup(e.args[0]);
	/* setparams_prefix: each argument single-quoted, ' as '\'' */
	sb_str(&src, "setparams");
	for (i = 0; i < e.nargs; i++) {
		const char *p;

		sb_str(&src, " '");
		for (p = e.args[i]; *p; p++) {
			if (*p == '\'')
				sb_str(&src, "'\\''");
			else
				sb_add(&src, p, 1);
		}
		sb_str(&src, "'");
	}
	sb_str(&src, "\n");
	sb_add(&src, block + 1, strlen(block) - 2);
	e.source = sb_take(&src);
	if (!e.title || !e.id || !e.source) {
		g->oom = true;
		goto fail;
	}
	grown = realloc(m->e, (m->n + 1) * sizeof(*grown));
	if (!grown) {
		g->oom = true;
		goto fail;
	}
	m->e = grown;
	m->e[m->n++] = e;
	return;
fail:
	free(e.title);
	free(e.id);
	free(e.source);
	for (i = 0; i < e.nargs; i++)
		free(e.args[i]);
	free(e.args);
	free(src.s);
}

static func *func_find(gs *g, const char *name)
{
	size_t i;

	for (i = 0; i < g->n_fn; i++)
		if (!strcmp(g->fn[i].name, name))
			return &g->fn[i];
	return NULL;
}

/* A command that sets VAR to something only the machine knows (search --set=VAR ...). */
static void set_unknown(gs *g, const char *name, const char *cmd)
{
	const fact *f = g->check ? NULL : fact_find(g->m, cmd, name);

	var_set(g, name, f && f->value ? f->value : NULL, cmd);
}

static enum status call_function(gs *g, func *f, char **args, size_t n)
{
	scope s = { args, n, NULL };
	enum status st;

	if (g->n_sc >= GRUB_MODEL_MAX_DEPTH || g->depth >= GRUB_MODEL_MAX_DEPTH) {
		stopf(g, "functions call each other deeper than the model follows");
		return S_FAIL;
	}
	g->sc[g->n_sc++] = &s;
	g->depth++;
	st = exec_list(g, f->body);
	g->depth--;
	g->n_sc--;
	scope_drop_own(&s);
	g->returning = false;
	return st;
}

static enum status exec_cmd(gs *g, node *n)
{
	argv_b b = { 0 };
	char **a, *cmd, *text;
	size_t argc;
	bool invert = false;
	enum status st = S_UNKNOWN;
	func *f;

	expand(g, n->w, n->nw, &b);
	if (b.oom) {
		av_free(&b);
		stopf(g, "a command longer than the model takes");
		return S_FAIL;
	}
	if (!b.n) {
		av_free(&b);
		return S_OK; /* nothing to run: GRUB measures nothing */
	}
	text = join_argv(b.a, b.n);
	free(g->last_cmd);
	g->last_cmd = text ? strdup(text) : NULL;
	emit(g, GRUB_STRING_CMD, text);
	if (stopped(g)) {
		av_free(&b);
		return S_FAIL;
	}
	/* the string as measured (with learned values) is the key of what this command does */
	cmd = g->out->s[g->out->n - 1].text;
	if (has_unknown(b.a, b.n)) {
		/* solved in emit: expand again with the value learned */
		av_free(&b);
		expand(g, n->w, n->nw, &b);
		if (b.oom || has_unknown(b.a, b.n)) {
			av_free(&b);
			stopf(g, "`%.200s` holds a value the model cannot tell apart", cmd);
			return S_FAIL;
		}
	}
	a = b.a;
	argc = b.n;
	if (!strcmp(a[0], "!") && argc > 1) {
		invert = true;
		a++;
		argc--;
	}
	if (!strcmp(a[0], "[") || !strcmp(a[0], "test")) {
		bool bracket = a[0][0] == '[';

		if (bracket && (argc < 2 || strcmp(a[argc - 1], "]")))
			st = S_FAIL;
		else
			st = test_eval(a + 1, argc - 1 - bracket);
	} else if (!strcmp(a[0], "set")) {
		char *eq = argc > 1 ? strchr(a[1], '=') : NULL;

		if (argc > 1 && !eq) {
			st = S_FAIL;
		} else if (eq) {
			*eq = 0;
			var_set(g, a[1], eq + 1, NULL);
			st = S_OK;
		} else {
			st = S_OK;
		}
	} else if (!strcmp(a[0], "unset")) {
		size_t i;

		for (i = 1; i < argc; i++)
			var_unset(g, a[i]);
		st = S_OK;
	} else if (!strcmp(a[0], "export")) {
		size_t i;

		for (i = 1; i < argc; i++) {
			var *v = var_find(cur(g), a[i]);

			if (!v)
				v = var_set(g, a[i], "", NULL);
			if (v)
				v->exported = true;
		}
		st = S_OK;
	} else if (!strcmp(a[0], "true") || !strcmp(a[0], "echo") || !strcmp(a[0], "save_env")) {
		st = S_OK;
	} else if (!strcmp(a[0], "false")) {
		st = S_FAIL;
	} else if (!strcmp(a[0], "menuentry") || !strcmp(a[0], "submenu")) {
		add_entry(g, a, argc, a[0][0] == 's');
		st = S_OK;
	} else if (!strcmp(a[0], "setparams")) {
		/* the positional parameters of the running entry or function, a copy of its own */
		if (g->n_sc) {
			scope *sc = g->sc[g->n_sc - 1];
			char **copy = calloc(argc, sizeof(char *));
			size_t i;

			if (!copy) {
				g->oom = true;
			} else {
				for (i = 1; i < argc; i++)
					if (!(copy[i - 1] = strdup(a[i])))
						g->oom = true;
				scope_drop_own(sc);
				sc->own = copy;
				sc->args = copy;
				sc->n = argc - 1;
			}
		}
		st = S_OK;
	} else if (!strcmp(a[0], "configfile") || !strcmp(a[0], "source") || !strcmp(a[0], ".")) {
		if (argc != 2) {
			st = S_FAIL;
		} else {
			g->depth++;
			run_config(g, a[1], a[0][0] == 'c');
			g->depth--;
			st = S_OK;
		}
	} else if (!strcmp(a[0], "boot")) {
		if (g->loaded)
			g->booted = true;
		else
			stopf(g, "`boot` with nothing loaded");
	} else if (grub_is_cmd(a[0], "linux")) {
		if (argc >= 2 && g->kernel_cmdline) {
			grub_words args = { 0 };
			size_t i;

			for (i = 2; i < argc && i - 2 < GRUB_MAX_WORDS; i++)
				args.w[args.n++] = a[i];
			emit(g, GRUB_STRING_KERNEL_CMDLINE, grub_loader_cmdline(a[1], &args));
		}
		g->loaded = argc >= 2;
		if (argc >= 2) {
			free(g->loaded_path);
			if (!(g->loaded_path = strdup(a[1])))
				g->oom = true;
		}
	} else if (!strcmp(a[0], "return")) {
		g->returning = true;
		st = argc < 2 || !strcmp(a[1], "0") ? S_OK : S_FAIL;
	} else if (!strcmp(a[0], "load_env")) {
		free(cur(g)->taint_setter);
		cur(g)->tainted = true;
		cur(g)->taint_setter = strdup(cmd);
		if (!cur(g)->taint_setter)
			g->oom = true;
	} else if (!strncmp(a[0], "search.", 7)) {
		/* search.fs_uuid UUID [VAR [HINT...]] */
		if (argc >= 3)
			set_unknown(g, a[2], cmd);
	} else if ((f = func_find(g, a[0]))) {
		st = call_function(g, f, a + 1, argc - 1);
	} else if (!strcmp(a[0], "eval") || !strcmp(a[0], "break") || !strcmp(a[0], "continue") ||
		   !strcmp(a[0], "shift") || !strcmp(a[0], "read") || !strcmp(a[0], "regexp") ||
		   !strcmp(a[0], "getenv") || !strcmp(a[0], "extract_entries_source") ||
		   !strcmp(a[0], "extract_entries_configfile")) {
		stopf(g, "`%.200s`: the model does not follow what %s does", cmd, a[0]);
	} else {
		size_t i;
		bool sets = false;

		/* any other command: its effect is unknown, but one that sets a variable says so */
		for (i = 1; i < argc; i++) {
			if (!strncmp(a[i], "--set=", 6)) {
				set_unknown(g, a[i] + 6, cmd);
				sets = true;
			} else if (!strcmp(a[i], "--set") || !strcmp(a[i], "-s")) {
				/* search: --set alone sets root; probe etc. take the next word */
				bool search = !strcmp(a[0], "search");
				const char *name = !search && i + 1 < argc ? a[i + 1] : "root";

				set_unknown(g, name, cmd);
				sets = true;
			}
		}
		if (!sets && !grub_is_cmd(a[0], "initrd") && strchr(a[0], '=') && a[0][0] != '=') {
			/* no such command: an assignment (execute.c, "as a last resort") */
			char *eq = strchr(a[0], '=');

			*eq = 0;
			var_set(g, a[0], eq + 1, NULL);
			*eq = '=';
			st = S_OK;
		}
	}
	if (invert && st != S_UNKNOWN)
		st = st == S_OK ? S_FAIL : S_OK;
	if (!stopped(g)) {
		if (st == S_OK)
			var_set(g, "?", "0", NULL);
		else
			var_set(g, "?", NULL, cmd);
	}
	av_free(&b);
	return st;
}

static enum status exec_node(gs *g, node *n)
{
	enum status st = S_OK;

	if (++g->steps > GRUB_MODEL_MAX_STEPS) {
		stopf(g, "more than %d steps: a loop the model does not see end", GRUB_MODEL_MAX_STEPS);
		return S_FAIL;
	}
	switch (n->k) {
	case N_CMD:
		return exec_cmd(g, n);
	case N_IF:
		st = decide(g, exec_list(g, n->a));
		if (stopped(g) || g->returning)
			return st;
		if (st == S_OK)
			return exec_list(g, n->b);
		return n->c ? exec_list(g, n->c) : S_OK;
	case N_WHILE:
	case N_UNTIL:
		for (;;) {
			enum status c = decide(g, exec_list(g, n->a));

			if (stopped(g) || g->returning)
				return c;
			if ((c == S_OK) != (n->k == N_WHILE))
				return st;
			st = exec_list(g, n->b);
			if (stopped(g) || g->returning)
				return st;
			if (++g->steps > GRUB_MODEL_MAX_STEPS) {
				stopf(g, "a loop the model does not see end");
				return S_FAIL;
			}
		}
	case N_FOR: {
		argv_b b = { 0 };
		size_t i;

		expand(g, n->w, n->nw, &b);
		if (b.oom || has_unknown(b.a, b.n)) {
			av_free(&b);
			stopf(g, "a for loop over values the model does not know");
			return S_FAIL;
		}
		for (i = 0; i < b.n && !stopped(g) && !g->returning; i++) {
			var_set(g, n->name, b.a[i], NULL);
			st = exec_list(g, n->a);
		}
		av_free(&b);
		return st;
	}
	}
	return st;
}

static enum status exec_list(gs *g, node *n)
{
	enum status st = S_OK;

	if (g->depth > GRUB_MODEL_MAX_DEPTH) {
		stopf(g, "nesting deeper than the model follows");
		return S_FAIL;
	}
	g->depth++;
	for (; n && !stopped(g) && !g->returning; n = n->next)
		st = exec_node(g, n);
	g->depth--;
	return st;
}

/* read_config_file's lines: '\r' dropped, lines starting with '#' dropped. */
static char *clean_config(gs *g, const char *text, size_t size)
{
	sbuf s = { 0 };
	size_t i = 0;

	while (i < size) {
		size_t e = i;

		while (e < size && text[e] != '\n')
			e++;
		if (text[i] != '#') {
			size_t k;

			for (k = i; k < e; k++) {
				unsigned char c = (unsigned char) text[k];

				if (c == 0 || c == UNKNOWN_OPEN || c == UNKNOWN_CLOSE) {
					free(s.s);
					stopf(g, "the config holds control bytes (NUL) the model does not take");
					return NULL;
				}
				if (c != '\r')
					sb_add(&s, &text[k], 1);
			}
			sb_add(&s, "\n", 1);
		}
		i = e + 1;
	}
	if (s.oom) {
		free(s.s);
		stopf(g, "a config larger than the model takes");
		return NULL;
	}
	return sb_take(&s);
}

static bool keep_node(gs *g, node *n)
{
	node **k = realloc(g->keep, (g->n_keep + 1) * sizeof(*k));

	if (!k) {
		node_free(n);
		g->oom = true;
		return false;
	}
	g->keep = k;
	g->keep[g->n_keep++] = n;
	return true;
}

/* Parse and run a script statement by statement, as GRUB does (name: for messages). */
static void run_script(gs *g, const char *text, const char *name)
{
	lexer lx = { .text = text };

	reader_init(&lx.r, text, strlen(text), 0);
	while (!stopped(g) && !g->returning) {
		char *raw = NULL;
		enum tok t;

		skip_delims(&lx, true);
		t = peek_tok(&lx, &raw);
		if (t == T_EOF) {
			free(raw);
			break;
		}
		if (t == T_WORD && kw_is(raw, "function")) {
			word w, nm;
			func *grown;
			node *body;

			free(raw);
			(void) lex(&lx, &w);
			word_done(&w);
			if (lex(&lx, &nm) != T_WORD || !nm.raw || !is_name_start(nm.raw[0]) || is_keyword(nm.raw)) {
				word_done(&nm);
				lex_error(&lx, "function NAME");
				break;
			}
			skip_delims(&lx, false);
			if (lex(&lx, &w) != T_LBR) {
				word_done(&w);
				word_done(&nm);
				lex_error(&lx, "function NAME {");
				break;
			}
			{
				static const char *const none[] = { NULL };

				body = parse_list(&lx, none, true, 1);
			}
			if (!body || lex(&lx, &w) != T_RBR) {
				word_done(&w);
				word_done(&nm);
				node_free(body);
				lex_error(&lx, "a function's body");
				break;
			}
			if (!keep_node(g, body)) {
				word_done(&nm);
				break;
			}
			{
				func *old = func_find(g, nm.raw);

				if (old) {
					old->body = body; /* redefined: the new body from now on */
					word_done(&nm);
					continue;
				}
			}
			grown = realloc(g->fn, (g->n_fn + 1) * sizeof(*grown));
			if (!grown) {
				word_done(&nm);
				g->oom = true;
				break;
			}
			g->fn = grown;
			g->fn[g->n_fn].name = nm.raw;
			g->fn[g->n_fn++].body = body;
			nm.raw = NULL;
			word_done(&nm);
		} else {
			node *n;

			free(raw);
			n = parse_command(&lx, 1);
			if (!n)
				break;
			/* a statement ends at a delimiter */
			t = peek_tok(&lx, NULL);
			if (t != T_NL && t != T_SEMI && t != T_EOF) {
				node_free(n);
				lex_error(&lx, "a command's end");
				break;
			}
			if (!keep_node(g, n))
				break;
			exec_node(g, n);
		}
	}
	if (lx.err && !stopped(g))
		stopf(g, "%s: %s", name, lx.err);
	free(lx.err);
}

/* The menu times out: GRUB runs the default entry (normal/menu.c). */
static void run_entry(gs *g, const entry *e, bool auto_boot);

/* menuentry_eq: an id or title against a spec up to its first single '>' */
static bool entry_eq(const char *id, const char *spec)
{
	for (;;) {
		if (*spec == '>' && spec[1] != '>')
			return *id == 0;
		if (*spec == '>')
			spec++;
		if (*id != *spec)
			return false;
		if (!*id)
			return true;
		id++;
		spec++;
	}
}

/*
 * Someone picks an entry from the menu (grub_model_choice.entry): the first component of what is
 * left of the spec, as GRUB's `default` names entries (a number, else a title or id, '>>' a '>').
 * Key presses are not measured: GRUB runs the entry as it runs the default (auto_boot off).
 */
static void run_chosen(gs *g, menu *m)
{
	const char *spec = g->choose, *p, *rest;
	sbuf first = { 0 };
	size_t i, idx = SIZE_MAX;
	char *comp, num[24];
	bool digits;

	if (g->explore && !*spec) {
		g->n_explored = m->n < GRUB_MODEL_MAX_ENTRIES ? m->n : GRUB_MODEL_MAX_ENTRIES;
		for (i = 0; i < g->n_explored; i++)
			g->explored_sub[i] = m->e[i].submenu;
		g->explored = true;
		stopf(g, "the menu listed");
		return;
	}
	for (p = spec; *p; p++) {
		if (p[0] == '>' && p[1] == '>') {
			sb_add(&first, ">", 1);
			p++;
			continue;
		}
		if (*p == '>')
			break;
		sb_add(&first, p, 1);
	}
	rest = *p ? p + 1 : NULL;
	comp = sb_take(&first);
	if (!comp) {
		g->oom = true;
		return;
	}
	digits = *comp != 0;
	for (p = comp; *p; p++)
		digits &= is_digit(*p);
	if (digits) {
		char *end;
		unsigned long n;

		errno = 0;
		n = strtoul(comp, &end, 10);
		if (errno == 0 && !*end && n < m->n)
			idx = n;
	} else {
		for (i = 0; i < m->n && idx == SIZE_MAX; i++)
			if (entry_eq(m->e[i].title, spec) || entry_eq(m->e[i].id, spec))
				idx = i;
	}
	if (idx == SIZE_MAX || (rest && !m->e[idx].submenu) || (!rest && m->e[idx].submenu)) {
		g->no_entry = true;
		if (idx == SIZE_MAX)
			stopf(g, "the menu has no entry \"%.200s\" (%zu entries)", comp, m->n);
		else if (rest)
			stopf(g, "\"%.200s\" is an entry, not a submenu: nothing to pick after it", comp);
		else
			stopf(g, "\"%.200s\" is a submenu, not an entry: say which of its entries (\"%.200s>...\")", comp,
			      comp);
		free(comp);
		return;
	}
	free(comp);
	snprintf(num, sizeof(num), "%s%zu", g->chosen_path.n ? ">" : "", idx);
	sb_str(&g->chosen_path, num);
	g->choose = m->e[idx].submenu ? rest : NULL;
	run_entry(g, &m->e[idx], false);
	if (!stopped(g))
		stopf(g, "the chosen entry \"%.100s\" loads no kernel: GRUB goes back to its menu", m->e[idx].title);
}

static void run_menu(gs *g)
{
	menu *m = &cur(g)->m;
	const char *v, *setter;
	bool known;
	long def = 0;
	char *end;

	if (!m->n)
		return;
	if (g->choose) {
		run_chosen(g, m);
		return;
	}
	v = lookup(g, "timeout", &known, &setter);
	if (!known) {
		stopf(g, "the menu's timeout comes from `%.200s`, which the model does not know", setter ? setter : "?");
		return;
	}
	if (!*v || !is_digit(v[0])) {
		stopf(g, "no menu timeout: GRUB waits for someone to choose an entry");
		return;
	}
	v = lookup(g, "default", &known, &setter);
	if (!known) {
		stopf(g, "the default entry comes from `%.200s`, which the model does not know", setter ? setter : "?");
		return;
	}
	if (*v) {
		def = strtol(v, &end, 0);
		if (end == v || def < 0) {
			size_t i;

			def = 0;
			for (i = 0; i < m->n; i++) {
				if (entry_eq(m->e[i].title, v) || entry_eq(m->e[i].id, v)) {
					def = (long) i;
					break;
				}
			}
		}
	}
	if (def < 0 || (size_t) def >= m->n)
		def = 0;
	run_entry(g, &m->e[def], true);
	if (!stopped(g))
		stopf(g, "the default entry \"%.100s\" loads no kernel: GRUB goes back to its menu", m->e[def].title);
}

static void run_entry(gs *g, const entry *e, bool auto_boot)
{
	const char *chosen, *def, *setter, *p;
	bool known, submenu;
	sbuf buf = { 0 };
	char *newdef = NULL;

	chosen = lookup(g, "chosen", &known, &setter);
	if (!known)
		chosen = "";
	if (*chosen) {
		sb_str(&buf, chosen);
		sb_add(&buf, ">", 1);
	}
	for (p = e->id; *p; p++) {
		if (*p == '>')
			sb_add(&buf, ">", 1);
		sb_add(&buf, p, 1);
	}
	def = lookup(g, "default", &known, &setter);
	for (p = known ? def : NULL; p && *p; p++) {
		if (p[0] == '>' && p[1] == '>') {
			p++;
			continue;
		}
		if (p[0] == '>')
			break;
	}
	if (p && p[0] && p[1])
		newdef = strdup(p + 1);
	if (e->submenu && !ctx_open(g)) {
		free(buf.s);
		free(newdef);
		return;
	}
	if (e->submenu && auto_boot)
		var_set(g, "timeout", "0", NULL);
	{
		char *c = sb_take(&buf);
		var *v = c ? var_set(g, "chosen", c, NULL) : NULL;

		if (v)
			v->exported = true;
		free(c);
	}
	if (newdef)
		var_set(g, "default", newdef, NULL);
	else
		var_unset(g, "default");
	free(newdef);
	/* the entry's body may add entries to the menu e lives in (realloc): read e first */
	submenu = e->submenu;
	run_source(g, e->source, e->args, e->nargs);
	if (!stopped(g) && g->loaded)
		g->booted = true; /* the implicit boot: not measured */
	if (submenu && !stopped(g)) {
		run_menu(g);
		ctx_close(g);
	}
}

/* grub_script_execute_new_scope */
static void run_source(gs *g, const char *source, char **args, size_t nargs)
{
	scope s = { args, nargs, NULL };

	if (g->n_sc >= GRUB_MODEL_MAX_DEPTH) {
		stopf(g, "entries nest deeper than the model follows");
		return;
	}
	g->sc[g->n_sc++] = &s;
	run_script(g, source, "a menu entry");
	g->n_sc--;
	g->returning = false;
	scope_drop_own(&s);
}

static const grub_model_config *config_by_path(gs *g, const char *path)
{
	size_t i;

	for (i = 0; i < g->n_cfg; i++)
		if (!strcmp(g->cfg[i].path, path))
			return &g->cfg[i];
	return NULL;
}

static void run_config(gs *g, const char *path, bool new_env)
{
	const grub_model_config *c = config_by_path(g, path);
	const char *v, *setter;
	bool known;
	char *text, *old_file = NULL, *old_dir = NULL, *slash;
	bool had_file, had_dir;

	if (!c) {
		stopf(g, "GRUB reads the config %.200s, which the model was not given", path);
		return;
	}
	if (g->depth > GRUB_MODEL_MAX_DEPTH) {
		stopf(g, "configs load each other deeper than the model follows");
		return;
	}
	if (new_env && !ctx_open(g))
		return;
	text = clean_config(g, c->text, c->size);
	if (!text)
		return;
	v = lookup(g, "config_file", &known, &setter);
	had_file = var_find(cur(g), "config_file") != NULL;
	old_file = had_file && known ? strdup(v) : NULL;
	v = lookup(g, "config_directory", &known, &setter);
	had_dir = var_find(cur(g), "config_directory") != NULL;
	old_dir = had_dir && known ? strdup(v) : NULL;
	{
		char *file = NULL;
		var *fv;

		if (path[0] == '(') {
			file = strdup(path);
		} else {
			v = lookup(g, "root", &known, &setter);
			if (known && asprintf(&file, "(%s)%s", v, path) < 0)
				file = NULL;
		}
		fv = var_set(g, "config_file", file, "GRUB's root device");
		if (fv)
			fv->exported = true;
		if (file && (slash = strrchr(file, '/')))
			*slash = 0;
		fv = var_set(g, "config_directory", file, "GRUB's root device");
		if (fv)
			fv->exported = true;
		free(file);
	}
	run_script(g, text, path);
	free(text);
	if (!stopped(g)) {
		if (old_file)
			var_set(g, "config_file", old_file, NULL);
		else
			var_unset(g, "config_file");
		if (old_dir)
			var_set(g, "config_directory", old_dir, NULL);
		else
			var_unset(g, "config_directory");
		if (new_env) {
			run_menu(g);
			if (!stopped(g))
				ctx_close(g);
		}
	}
	free(old_file);
	free(old_dir);
}

static void gs_done(gs *g)
{
	size_t i;

	while (g->n_ctx)
		ctx_done(&g->ctx[--g->n_ctx]);
	for (i = 0; i < g->n_fn; i++)
		free(g->fn[i].name);
	free(g->fn);
	for (i = 0; i < g->n_keep; i++)
		node_free(g->keep[i]);
	free(g->keep);
	for (i = 0; i < g->n_dec; i++)
		free(g->dec_key[i]);
	facts_clear(&g->learned, &g->n_learned);
	free(g->last_cmd);
	free(g->stop);
	free(g->chosen_path.s);
	free(g->loaded_path);
}

/* One run over the configs from GRUB's start: the environment normal mode has. */
static int run_once(gs *g)
{
	static const char *const features[] = { "feature_chainloader_bpb", "feature_ntldr", "feature_platform_search_hint",
						"feature_default_font_path", "feature_all_video_module",
						"feature_menuentry_id", "feature_menuentry_options", "feature_200_final",
						"feature_nativedisk_cmd", "feature_timeout_style", NULL };
	const char *first = g->cfg[0].path;
	char *prefix = strdup(first), *slash;
	size_t i;
	var *v;

	g->n_ctx = 1;
	if (!prefix)
		return -ENOMEM;
	/* normal mode read $prefix/grub.cfg first: prefix is its folder, root its device */
	slash = strrchr(prefix, '/');
	if (slash)
		*slash = 0;
	if ((v = var_set(g, "prefix", prefix, NULL)))
		v->exported = true;
	if (prefix[0] == '(' && strchr(prefix, ')')) {
		char *root = strndup(prefix + 1, (size_t) (strchr(prefix, ')') - prefix - 1));

		if ((v = var_set(g, "root", root, NULL)))
			v->exported = true;
		free(root);
	} else if ((v = var_set(g, "root", NULL, "GRUB's start"))) {
		v->exported = true;
	}
	free(prefix);
	if ((v = var_set(g, "cmdpath", NULL, "GRUB's start")))
		v->exported = true;
	for (i = 0; features[i]; i++)
		if ((v = var_set(g, features[i], "y", NULL)))
			v->exported = true;
	if ((v = var_set(g, "grub_cpu", "x86_64", NULL)))
		v->exported = true;
	if ((v = var_set(g, "grub_platform", "efi", NULL)))
		v->exported = true;
	if ((v = var_set(g, "color_normal", "light-gray/black", NULL)))
		v->exported = true;
	if ((v = var_set(g, "color_highlight", "black/light-gray", NULL)))
		v->exported = true;
	if (g->oom)
		return -ENOMEM;
	g->depth = 1;
	run_config(g, first, false);
	if (!stopped(g))
		run_menu(g);
	if (g->oom)
		return -ENOMEM;
	if (!g->stop && !g->booted)
		stopf(g, "the configs end without booting a kernel");
	if (!g->stop && g->check && g->out->n != g->n_today) {
		stopf(g, "the model boots after %zu GRUB strings, today's log has %zu; the first it lacks: %s\"%.200s\"",
		      g->out->n, g->n_today, kind_label(g->today[g->out->n].kind), g->today[g->out->n].text);
		g->mismatch = true;
	}
	return g->oom ? -ENOMEM : 0;
}

static void take_why(gs *g, grub_model_run *run)
{
	run->why = g->stop;
	g->stop = NULL;
}

int grub_model_check(grub_model *m, const grub_model_config *configs, size_t n_configs,
		     const grub_model_string *today, size_t n_today, bool kernel_cmdline, grub_model_run *run)
{
	int forced[MAX_RUNS];
	size_t n_forced = 0, runs, i, best_n = 0;
	char *best_why = NULL;
	int rc = 0;

	memset(run, 0, sizeof(*run));
	facts_clear(&m->f, &m->n);
	if (!n_configs)
		return asprintf(&run->why, "no config") < 0 ? -ENOMEM : 0;
	/* Depth-first over the outcomes only the log tells: each first taken as success, flipped
	 * when the strings part before the next decision. */
	for (runs = 0; runs < MAX_RUNS; runs++) {
		gs g = { .m = m, .cfg = configs, .n_cfg = n_configs, .check = true, .today = today,
			 .n_today = n_today, .kernel_cmdline = kernel_cmdline, .forced = forced,
			 .n_forced = n_forced, .out = run };
		size_t j;

		rc = run_once(&g);
		if (rc < 0 || !g.stop) {
			if (rc == 0) {
				for (i = 0; i < g.n_dec && rc == 0; i++)
					rc = fact_add(&m->f, &m->n, g.dec_key[i], NULL, NULL, g.dec[i]);
				for (i = 0; i < g.n_learned && rc == 0; i++)
					rc = fact_add(&m->f, &m->n, g.learned[i].key, g.learned[i].var,
						      g.learned[i].value ? g.learned[i].value : "", 1);
			}
			gs_done(&g);
			free(best_why);
			return rc;
		}
		if (!best_why || run->n >= best_n) {
			free(best_why);
			best_why = g.stop;
			g.stop = NULL;
			best_n = run->n;
		}
		/* backtrack: the last decision still on its first try */
		for (j = g.n_dec; j > 0 && g.dec[j - 1] == 0; j--)
			;
		if (!g.mismatch || j == 0) {
			gs_done(&g);
			break;
		}
		for (i = 0; i < j - 1; i++)
			forced[i] = g.dec[i];
		forced[j - 1] = 0;
		n_forced = j;
		gs_done(&g);
		grub_model_run_done(run);
	}
	grub_model_run_done(run);
	run->why = best_why ? best_why : strdup("the self-check tried too many outcomes");
	return run->why ? 0 : -ENOMEM;
}

/* One run of the new configs, picking spec (NULL: the default); explore: list the menu spec
 * leads to (*n_sub entries, sub[i]: a submenu). */
static int predict_once(grub_model *m, const grub_model_config *configs, size_t n_configs, bool kernel_cmdline,
			const char *spec, bool explore, grub_model_run *run, char **loaded, size_t *n_entries, bool *sub)
{
	gs g = { .m = m, .cfg = configs, .n_cfg = n_configs, .kernel_cmdline = kernel_cmdline, .out = run,
		 .choose = spec, .explore = explore };
	int rc;

	memset(run, 0, sizeof(*run));
	rc = run_once(&g);
	if (rc == 0 && spec && !g.chosen_path.n && !g.no_entry && !g.explored) {
		g.no_entry = true;
		free(g.stop);
		g.stop = strdup("the configs show no menu to pick an entry from");
	}
	if (rc == 0 && explore) {
		*n_entries = g.explored ? g.n_explored : 0;
		if (g.explored)
			memcpy(sub, g.explored_sub, g.n_explored * sizeof(*sub));
		else if (!g.stop)
			g.stop = strdup("the configs boot before the menu the kernel search looks at");
	}
	if (rc == 0 && g.stop && !(explore && g.explored))
		take_why(&g, run);
	run->no_entry = g.no_entry;
	if (rc == 0 && spec && g.chosen_path.n && !g.chosen_path.oom && !(run->entry = strdup(g.chosen_path.s)))
		rc = -ENOMEM;
	if (loaded) {
		*loaded = g.loaded_path;
		g.loaded_path = NULL;
	}
	gs_done(&g);
	return g.oom ? -ENOMEM : rc;
}

static bool loads_kernel(const char *loaded, const char *want)
{
	size_t ll, wl = strlen(want);

	if (!loaded)
		return false;
	if (loaded[0] == '(' && strchr(loaded, ')'))
		loaded = strchr(loaded, ')') + 1;
	ll = strlen(loaded);
	return !strcmp(loaded, want) || (loaded[0] == '/' && ll < wl && !strcmp(want + wl - ll, loaded));
}

/* The first entry in menu order under the menu prefix leads to whose linux command loads kernel:
 * 1 with *found its spec, 0 when none (*why set by the first run that could not tell), -ENOMEM. */
static int find_kernel(grub_model *m, const grub_model_config *configs, size_t n_configs, bool kernel_cmdline,
		       const char *kernel, const char *prefix, unsigned depth, unsigned *tries, char **found, char **why)
{
	bool sub[GRUB_MODEL_MAX_ENTRIES];
	size_t n = 0, i;
	grub_model_run r;
	int rc;

	if (depth > 8 || ++*tries > GRUB_MODEL_MAX_TRIES) {
		if (!*why)
			*why = strdup("the kernel search looked through more entries than the model tries");
		return 0;
	}
	rc = predict_once(m, configs, n_configs, kernel_cmdline, prefix, true, &r, NULL, &n, sub);
	if (rc == 0 && r.why && !*why) {
		*why = r.why;
		r.why = NULL;
	}
	grub_model_run_done(&r);
	for (i = 0; rc >= 0 && i < n; i++) {
		char *spec = NULL, *loaded = NULL;

		if (asprintf(&spec, "%s%zu%s", prefix, i, sub[i] ? ">" : "") < 0)
			return -ENOMEM;
		if (sub[i]) {
			rc = find_kernel(m, configs, n_configs, kernel_cmdline, kernel, spec, depth + 1, tries, found, why);
		} else if (++*tries > GRUB_MODEL_MAX_TRIES) {
			rc = 0;
			n = 0;
		} else {
			rc = predict_once(m, configs, n_configs, kernel_cmdline, spec, false, &r, &loaded, NULL, NULL);
			if (rc == 0 && !r.why && loads_kernel(loaded, kernel)) {
				*found = spec;
				spec = NULL;
				rc = 1;
			}
			grub_model_run_done(&r);
		}
		free(loaded);
		free(spec);
		if (rc != 0)
			return rc;
	}
	return rc;
}

int grub_model_predict(grub_model *m, const grub_model_config *configs, size_t n_configs, bool kernel_cmdline,
		       const grub_model_choice *choice, grub_model_run *run)
{
	char *found = NULL, *why = NULL;
	unsigned tries = 0;
	int rc;

	memset(run, 0, sizeof(*run));
	if (!n_configs)
		return asprintf(&run->why, "no config") < 0 ? -ENOMEM : 0;
	if (!choice || (!choice->entry && !choice->kernel))
		return predict_once(m, configs, n_configs, kernel_cmdline, NULL, false, run, NULL, NULL, NULL);
	if (choice->entry)
		return predict_once(m, configs, n_configs, kernel_cmdline, choice->entry, false, run, NULL, NULL, NULL);
	rc = find_kernel(m, configs, n_configs, kernel_cmdline, choice->kernel, "", 0, &tries, &found, &why);
	if (rc < 0) {
		free(why);
		return rc;
	}
	if (rc == 1) {
		free(why);
		rc = predict_once(m, configs, n_configs, kernel_cmdline, found, false, run, NULL, NULL, NULL);
		free(found);
		return rc;
	}
	run->no_entry = true;
	if (asprintf(&run->why, "no menu entry loads the kernel %.200s%s%.400s", choice->kernel,
		     why ? " (the model could not follow every entry: " : "", why ? why : "") < 0)
		run->why = NULL;
	if (run->why && why) {
		char *w = NULL;

		if (asprintf(&w, "%s)", run->why) >= 0) {
			free(run->why);
			run->why = w;
		}
	}
	free(why);
	return run->why ? 0 : -ENOMEM;
}
