/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The interpreter's environment: variables, the contexts configfile and submenus open, the
 * positional parameters, and how a run stops (grub-script-internal.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grub/grub-script-internal.h"

void gs_scope_drop_own(scope *s)
{
	size_t i;

	if (!s->own)
		return;
	for (i = 0; i < s->n; i++)
		free(s->own[i]);
	free(s->own);
	s->own = NULL;
}

void gs_stopf(gs *g, const char *fmt, ...)
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

bool gs_stopped(const gs *g)
{
	return g->stop || g->booted || g->oom;
}

/* n more bytes held by the run: false, and the run stopped, past GRUB_MODEL_MAX_BYTES. Only
 * the steps bounded a run before, and 200,000 steps of copying a 256 KiB variable are 50 GB. */
bool gs_charge(gs *g, size_t n)
{
	if (n > GRUB_MODEL_MAX_BYTES - g->bytes) {
		gs_stopf(g, "the config's variables, menu entries and measured strings take more than %u MiB, "
			 "more than the model holds (a variable copied in a loop?)", GRUB_MODEL_MAX_BYTES >> 20);
		return false;
	}
	g->bytes += n;
	return true;
}

void gs_refund(gs *g, size_t n)
{
	g->bytes -= n < g->bytes ? n : g->bytes;
}

/* What a variable holds, as charged. */
static size_t var_size(const char *name, const char *value, const char *setter)
{
	return sizeof(var) + strlen(name) + 1 + (value ? strlen(value) + 1 : 0) + (setter ? strlen(setter) + 1 : 0);
}

envctx *gs_cur(gs *g)
{
	return &g->ctx[g->n_ctx - 1];
}

var *gs_var_find(envctx *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			return &c->v[i];
	return NULL;
}

/* Set name (value NULL: unknown, set by setter). */
var *gs_var_set(gs *g, const char *name, const char *value, const char *setter)
{
	envctx *c = gs_cur(g);
	var *v = gs_var_find(c, name);
	const char *new_setter = !value ? setter : NULL;
	size_t now = v ? var_size(v->name, v->value, v->setter) : 0, then = var_size(name, value, new_setter);

	if (then > now && !gs_charge(g, then - now))
		return NULL;
	gs_refund(g, now > then ? now - then : 0);
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

void gs_var_unset(gs *g, const char *name)
{
	envctx *c = gs_cur(g);
	var *v = gs_var_find(c, name);

	if (!v)
		return;
	gs_refund(g, var_size(v->name, v->value, v->setter));
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

void gs_ctx_done(envctx *c)
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
bool gs_ctx_open(gs *g)
{
	envctx *old;
	size_t i;

	if (g->n_ctx >= GRUB_MODEL_MAX_DEPTH) {
		gs_stopf(g, "configs and submenus nest deeper than the model follows");
		return false;
	}
	old = gs_cur(g);
	memset(&g->ctx[g->n_ctx], 0, sizeof(envctx));
	g->n_ctx++;
	for (i = 0; i < old->n; i++) {
		if (old->v[i].exported) {
			var *v = gs_var_set(g, old->v[i].name, old->v[i].value, old->v[i].setter);

			if (v)
				v->exported = true;
		}
	}
	/* what load_env may have set is unknown only where it was exported: the new context
	 * starts with exactly what is listed */
	return !g->oom;
}

void gs_ctx_close(gs *g)
{
	envctx *c;
	size_t i;

	if (g->n_ctx <= 1)
		return;
	c = &g->ctx[--g->n_ctx];
	for (i = 0; i < c->n; i++)
		gs_refund(g, var_size(c->v[i].name, c->v[i].value, c->v[i].setter));
	gs_ctx_done(c);
}

/* The value of a variable: NULL when unknown (*known false), "" when unset. */
const char *gs_lookup(gs *g, const char *name, bool *known, const char **setter)
{
	scope *s = g->n_sc ? g->sc[g->n_sc - 1] : NULL;
	var *v;

	*known = true;
	*setter = NULL;
	if (gs_is_digit(name[0]) || !strcmp(name, "#") || !strcmp(name, "*") || !strcmp(name, "@")) {
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
	v = gs_var_find(gs_cur(g), name);
	if (v) {
		*known = v->value != NULL;
		*setter = v->setter;
		return v->value;
	}
	if (gs_cur(g)->tainted) {
		*known = false;
		*setter = gs_cur(g)->taint_setter;
		return NULL;
	}
	return "";
}
