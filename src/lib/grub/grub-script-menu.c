/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Menus, entries and configs: menuentry/submenu, the default or chosen entry run when the menu
 * times out (normal/menu.c), configfile and source (normal/main.c; grub-script-internal.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grub/grub-script-internal.h"

static void run_source(gs *g, const char *source, char **args, size_t nargs);

void gs_add_entry(gs *g, char **a, size_t n, bool submenu)
{
	entry e = { 0 };
	sbuf src = { 0 };
	menu *m = &gs_cur(g)->m;
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
	if (g->oom)
		goto fail; /* an argument's copy is NULL */
	if (!block || !e.nargs) {
		/* --source, or no title: not what GRUB's generated configs write */
		gs_stopf(g, "a menu entry without a title and a block");
		goto fail;
	}
	e.title = strdup(e.args[0]);
	if (!e.id)
		e.id = strdup(e.args[0]);
	/* setparams_prefix: each argument single-quoted, ' as '\'' */
	gs_sb_str(&src, "setparams");
	for (i = 0; i < e.nargs; i++) {
		const char *p;

		gs_sb_str(&src, " '");
		for (p = e.args[i]; *p; p++) {
			if (*p == '\'')
				gs_sb_str(&src, "'\\''");
			else
				gs_sb_add(&src, p, 1);
		}
		gs_sb_str(&src, "'");
	}
	gs_sb_str(&src, "\n");
	gs_sb_add(&src, block + 1, strlen(block) - 2);
	e.source = gs_sb_take(&src);
	if (!e.title || !e.id || !e.source) {
		g->oom = true;
		goto fail;
	}
	/* kept until the context closes (not refunded: the measured definition is kept too) */
	if (!gs_charge(g, sizeof(e) + strlen(e.title) + strlen(e.id) + strlen(e.source) + 3))
		goto fail;
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
					gs_stopf(g, "the config holds control bytes (NUL) the model does not take");
					return NULL;
				}
				if (c != '\r')
					gs_sb_add(&s, &text[k], 1);
			}
			gs_sb_add(&s, "\n", 1);
		}
		i = e + 1;
	}
	if (s.oom) {
		free(s.s);
		gs_stopf(g, "a config larger than the model takes");
		return NULL;
	}
	return gs_sb_take(&s);
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
		gs_stopf(g, "the menu listed");
		return;
	}
	for (p = spec; *p; p++) {
		if (p[0] == '>' && p[1] == '>') {
			gs_sb_add(&first, ">", 1);
			p++;
			continue;
		}
		if (*p == '>')
			break;
		gs_sb_add(&first, p, 1);
	}
	rest = *p ? p + 1 : NULL;
	comp = gs_sb_take(&first);
	if (!comp) {
		g->oom = true;
		return;
	}
	digits = *comp != 0;
	for (p = comp; *p; p++)
		digits &= gs_is_digit(*p);
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
			gs_stopf(g, "the menu has no entry \"%.200s\" (%zu entries)", comp, m->n);
		else if (rest)
			gs_stopf(g, "\"%.200s\" is an entry, not a submenu: nothing to pick after it", comp);
		else
			gs_stopf(g, "\"%.200s\" is a submenu, not an entry: say which of its entries (\"%.200s>...\")", comp,
			      comp);
		free(comp);
		return;
	}
	free(comp);
	snprintf(num, sizeof(num), "%s%zu", g->chosen_path.n ? ">" : "", idx);
	gs_sb_str(&g->chosen_path, num);
	g->choose = m->e[idx].submenu ? rest : NULL;
	run_entry(g, &m->e[idx], false);
	if (!gs_stopped(g))
		gs_stopf(g, "the chosen entry \"%.100s\" loads no kernel: GRUB goes back to its menu", m->e[idx].title);
}

void gs_run_menu(gs *g)
{
	menu *m = &gs_cur(g)->m;
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
	v = gs_lookup(g, "timeout", &known, &setter);
	if (!known) {
		gs_stopf(g, "the menu's timeout comes from `%.200s`, which the model does not know", setter ? setter : "?");
		return;
	}
	if (!*v || !gs_is_digit(v[0])) {
		gs_stopf(g, "no menu timeout: GRUB waits for someone to choose an entry");
		return;
	}
	v = gs_lookup(g, "default", &known, &setter);
	if (!known) {
		gs_stopf(g, "the default entry comes from `%.200s`, which the model does not know", setter ? setter : "?");
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
	if (!gs_stopped(g))
		gs_stopf(g, "the default entry \"%.100s\" loads no kernel: GRUB goes back to its menu", m->e[def].title);
}

static void run_entry(gs *g, const entry *e, bool auto_boot)
{
	const char *chosen, *def, *setter, *p;
	bool known, submenu;
	sbuf buf = { 0 };
	char *newdef = NULL;

	chosen = gs_lookup(g, "chosen", &known, &setter);
	if (!known)
		chosen = "";
	if (*chosen) {
		gs_sb_str(&buf, chosen);
		gs_sb_add(&buf, ">", 1);
	}
	for (p = e->id; *p; p++) {
		if (*p == '>')
			gs_sb_add(&buf, ">", 1);
		gs_sb_add(&buf, p, 1);
	}
	def = gs_lookup(g, "default", &known, &setter);
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
	if (e->submenu && !gs_ctx_open(g)) {
		free(buf.s);
		free(newdef);
		return;
	}
	if (e->submenu && auto_boot)
		gs_var_set(g, "timeout", "0", NULL);
	{
		char *c = gs_sb_take(&buf);
		var *v = c ? gs_var_set(g, "chosen", c, NULL) : NULL;

		if (v)
			v->exported = true;
		free(c);
	}
	if (newdef)
		gs_var_set(g, "default", newdef, NULL);
	else
		gs_var_unset(g, "default");
	free(newdef);
	/* the entry's body may add entries to the menu e lives in (realloc): read e first */
	submenu = e->submenu;
	run_source(g, e->source, e->args, e->nargs);
	if (!gs_stopped(g) && g->loaded)
		g->booted = true; /* the implicit boot: not measured */
	if (submenu && !gs_stopped(g)) {
		gs_run_menu(g);
		gs_ctx_close(g);
	}
}

/* grub_script_execute_new_scope */
static void run_source(gs *g, const char *source, char **args, size_t nargs)
{
	scope s = { args, nargs, NULL };

	if (g->n_sc >= GRUB_MODEL_MAX_DEPTH) {
		gs_stopf(g, "entries nest deeper than the model follows");
		return;
	}
	g->sc[g->n_sc++] = &s;
	gs_run_script(g, source, "a menu entry");
	g->n_sc--;
	g->returning = false;
	gs_scope_drop_own(&s);
}

static const grub_model_config *config_by_path(gs *g, const char *path)
{
	size_t i;

	for (i = 0; i < g->n_cfg; i++)
		if (!strcmp(g->cfg[i].path, path))
			return &g->cfg[i];
	return NULL;
}

void gs_run_config(gs *g, const char *path, bool new_env)
{
	const grub_model_config *c = config_by_path(g, path);
	grub_model_config image_file = { path, NULL, 0 };
	char *image_text = NULL;
	const char *v, *setter;
	bool known;
	char *text, *old_file = NULL, *old_dir = NULL, *slash;
	bool had_file, had_dir;

	/* a file of the image's memdisk: GRUB reads it, PCR 9 does not measure it */
	if (!c && g->start && g->start->read && !strncmp(path, "(memdisk)", 9)) {
		int rc = g->start->read(g->start->ctx, path, &image_text, &image_file.size);

		if (rc == -ENOMEM) {
			g->oom = true;
			return;
		}
		if (rc < 0) {
			gs_stopf(g, "GRUB reads %.200s, which the image's memdisk does not give (%s)", path,
				 rc == -ENOENT ? "no such file" : "unreadable");
			return;
		}
		image_file.text = image_text;
		c = &image_file;
	}
	if (!c) {
		gs_stopf(g, "GRUB reads the config %.200s, which the model was not given", path);
		return;
	}
	if (g->depth > GRUB_MODEL_MAX_DEPTH) {
		free(image_text);
		gs_stopf(g, "configs load each other deeper than the model follows");
		return;
	}
	if (new_env && !gs_ctx_open(g)) {
		free(image_text);
		return;
	}
	text = clean_config(g, c->text, c->size);
	free(image_text);
	if (!text)
		return;
	v = gs_lookup(g, "config_file", &known, &setter);
	had_file = gs_var_find(gs_cur(g), "config_file") != NULL;
	old_file = had_file && known ? strdup(v) : NULL;
	v = gs_lookup(g, "config_directory", &known, &setter);
	had_dir = gs_var_find(gs_cur(g), "config_directory") != NULL;
	old_dir = had_dir && known ? strdup(v) : NULL;
	{
		char *file = NULL;
		var *fv;

		if (path[0] == '(') {
			file = strdup(path);
		} else {
			v = gs_lookup(g, "root", &known, &setter);
			if (known && asprintf(&file, "(%s)%s", v, path) < 0)
				file = NULL;
		}
		fv = gs_var_set(g, "config_file", file, "GRUB's root device");
		if (fv)
			fv->exported = true;
		if (file && (slash = strrchr(file, '/')))
			*slash = 0;
		fv = gs_var_set(g, "config_directory", file, "GRUB's root device");
		if (fv)
			fv->exported = true;
		free(file);
	}
	gs_run_script(g, text, path);
	free(text);
	if (!gs_stopped(g)) {
		if (old_file)
			gs_var_set(g, "config_file", old_file, NULL);
		else
			gs_var_unset(g, "config_file");
		if (old_dir)
			gs_var_set(g, "config_directory", old_dir, NULL);
		else
			gs_var_unset(g, "config_directory");
		if (new_env) {
			gs_run_menu(g);
			if (!gs_stopped(g))
				gs_ctx_close(g);
		}
	}
	free(old_file);
	free(old_dir);
}
