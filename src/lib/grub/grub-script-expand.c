/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* From words to what GRUB measures: argv expanded as grub_script_arglist_to_argv does, the
 * string joined and emitted, unknown values solved from today's string (grub-script-internal.h). */
#include <stdlib.h>
#include <string.h>

#include "lib/grub/grub-script-internal.h"

/* ---- a growing string -------------------------------------------------------------------- */

void gs_sb_add(sbuf *b, const char *s, size_t n)
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

void gs_sb_str(sbuf *b, const char *s)
{
	gs_sb_add(b, s, strlen(s));
}

char *gs_sb_take(sbuf *b)
{
	char *s;

	if (b->oom) {
		free(b->s);
		b->s = NULL;
		return NULL;
	}
	s = b->s ? b->s : strdup("");
	b->s = NULL;
	return s;
}

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
		b->oom = b->nomem = true;
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
	if (old + n + 1 > GRUB_MODEL_MAX_STRING || b->bytes + n + 1 > GRUB_MODEL_MAX_STRING) {
		b->oom = true; /* the arguments together: what their join, the measured string, may hold */
		return;
	}
	b->bytes += n + !cur_s;
	ns = realloc(cur_s, old + n + 1);
	if (!ns) {
		b->oom = b->nomem = true;
		return;
	}
	memcpy(ns + old, s, n);
	ns[old + n] = 0;
	b->a[b->n - 1] = ns;
}

void gs_av_free(argv_b *b)
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
void gs_expand(gs *g, const word *w, size_t nw, argv_b *b)
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
				v = gs_lookup(g, p->s, &known, &setter);
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
	if (b->nomem)
		g->oom = true; /* the caller's stop is then the run's -ENOMEM */
}

char *gs_join_argv(char *const *a, size_t n)
{
	sbuf s = { 0 };
	size_t i;

	for (i = 0; i < n; i++) {
		if (i)
			gs_sb_add(&s, " ", 1);
		gs_sb_str(&s, a[i] ? a[i] : "");
	}
	return gs_sb_take(&s);
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

/* GRUB measures a string: take it (text is ours); compare with today's in the self-check. */
void gs_emit(gs *g, grub_string_kind kind, char *text)
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
			nm[-1] = '$'; /* the text up to the name, shown as written, not with the marker */
			gs_lookup(g, nm, &known, &setter);
			gs_stopf(g, "%s \"%.80s...\" uses $%s, set by `%.80s`, whose value the model does not know%s", grub_string_prefix(kind),
			      text, nm, setter ? setter : "GRUB", g->check ? " (today's string does not give it)" : "");
			free(text);
			return;
		}
		/* learned: the variable holds it from now on, and the command that set it gives it */
		gs_lookup(g, name, &known, &setter);
		if (setter && gs_fact_add(&g->learned, &g->n_learned, setter, name, val, 1) < 0)
			g->oom = true;
		{
			var *v = gs_var_find(gs_cur(g), name);

			if (v && !v->value) {
				if (!gs_charge(g, strlen(val) + 1)) {
					free(name);
					free(val);
					free(text);
					return;
				}
				v->value = strdup(val);
				if (!v->value)
					g->oom = true;
			} else if (!v) {
				gs_var_set(g, name, val, NULL);
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
			gs_stopf(g, "today's log ends after %zu GRUB strings; the model measures another: %s\"%.200s\"", at,
			      grub_string_prefix(kind), text);
			g->mismatch = true;
		} else if (g->today[at].kind != kind || strcmp(g->today[at].text, text)) {
			/* a long string (a menu entry's block): shown from a little before where they part */
			const char *t = g->today[at].text;
			size_t d = 0, from;

			while (t[d] && t[d] == text[d])
				d++;
			from = d > 120 ? d - 40 : 0;
			gs_stopf(g, "GRUB string %zu differs%s: today's %s\"%s%.200s\", the model's %s\"%s%.200s\"", at + 1,
			      from ? " after its first bytes" : "", grub_string_prefix(g->today[at].kind), from ? "..." : "",
			      t + from, grub_string_prefix(kind), from ? "..." : "", text + from);
			g->mismatch = true;
		}
	}
	if (at >= GRUB_MODEL_MAX_STRINGS)
		gs_stopf(g, "more than %d measured strings", GRUB_MODEL_MAX_STRINGS);
	else if (!gs_stopped(g))
		gs_charge(g, strlen(text) + 1 + sizeof(grub_model_string));
	if (gs_stopped(g)) {
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

bool gs_has_unknown(char *const *a, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] && strchr(a[i], UNKNOWN_OPEN))
			return true;
	return false;
}
