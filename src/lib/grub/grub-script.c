/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The GRUB model's entry points (grub-script.h): what the model learns, the self-check over the
 * outcomes only today's log tells, the prediction and the kernel search. The language itself:
 * grub-script-internal.h and the grub-script-*.c files it lists.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grub/grub-script-internal.h"

/* ---- what the model learns --------------------------------------------------------------- */

struct grub_model {
	fact *f;
	size_t n;
	bool has_start;
	grub_model_start start; /* its strings are ours */
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

int gs_fact_add(fact **f, size_t *n, const char *key, const char *name, const char *value, int outcome)
{
	fact *g;
	size_t i;

	for (i = 0; i < *n; i++) {
		fact *x = &(*f)[i];

		if (strcmp(x->key, key) || (!x->var) != (!name) || (name && strcmp(x->var, name)))
			continue;
		if (!name && x->outcome != outcome)
			x->outcome = -1;
		if (name && strcmp(x->value, value)) {
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
	g->var = name ? strdup(name) : NULL;
	g->value = value ? strdup(value) : NULL;
	g->outcome = outcome;
	if (!g->key || (name && !g->var) || (value && !g->value))
		return -ENOMEM;
	return 0;
}

const fact *gs_fact_find(const grub_model *m, const char *key, const char *name)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->f[i].key, key) && (!m->f[i].var) == (!name) && (!name || !strcmp(m->f[i].var, name)))
			return &m->f[i];
	return NULL;
}

grub_model *grub_model_new(void)
{
	return calloc(1, sizeof(grub_model));
}

static void start_clear(grub_model *m)
{
	free((char *) m->start.prefix);
	free((char *) m->start.cmdpath);
	free((char *) m->start.builtin);
	memset(&m->start, 0, sizeof(m->start));
	m->has_start = false;
}

int grub_model_set_start(grub_model *m, const grub_model_start *start)
{
	start_clear(m);
	if (!start)
		return 0;
	m->start = *start;
	m->start.prefix = start->prefix ? strdup(start->prefix) : NULL;
	m->start.cmdpath = start->cmdpath ? strdup(start->cmdpath) : NULL;
	m->start.builtin = start->builtin ? strdup(start->builtin) : NULL;
	m->has_start = true;
	if ((start->prefix && !m->start.prefix) || (start->cmdpath && !m->start.cmdpath) ||
	    (start->builtin && !m->start.builtin)) {
		start_clear(m);
		return -ENOMEM;
	}
	return 0;
}

void grub_model_free(grub_model *m)
{
	if (!m)
		return;
	facts_clear(&m->f, &m->n);
	start_clear(m);
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

static void gs_done(gs *g)
{
	size_t i;

	while (g->n_ctx)
		gs_ctx_done(&g->ctx[--g->n_ctx]);
	for (i = 0; i < g->n_fn; i++)
		free(g->fn[i].name);
	free(g->fn);
	for (i = 0; i < g->n_keep; i++)
		gs_node_free(g->keep[i]);
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
	const grub_model_start *st = g->m->has_start ? &g->m->start : NULL;
	const char *first = g->cfg[0].path;
	char *prefix = st && st->prefix ? strdup(st->prefix) : strdup(first), *slash;
	size_t i;
	var *v;

	g->n_ctx = 1;
	g->start = st;
	if (!prefix)
		return -ENOMEM;
	/* normal mode read $prefix/grub.cfg first: prefix is its folder, root its device; an image's
	 * prefix is set as GRUB sets it (grub_set_prefix_and_root) */
	slash = strrchr(prefix, '/');
	if (slash && !(st && st->prefix))
		*slash = 0;
	if ((v = gs_var_set(g, "prefix", prefix, NULL)))
		v->exported = true;
	if (prefix[0] == '(' && strchr(prefix, ')')) {
		char *root = strndup(prefix + 1, (size_t) (strchr(prefix, ')') - prefix - 1));

		if ((v = gs_var_set(g, "root", root, NULL)))
			v->exported = true;
		free(root);
	} else if ((v = gs_var_set(g, "root", NULL, "GRUB's start"))) {
		v->exported = true;
	}
	if ((v = gs_var_set(g, "cmdpath", st ? st->cmdpath : NULL, "GRUB's start")))
		v->exported = true;
	for (i = 0; features[i]; i++)
		if ((v = gs_var_set(g, features[i], "y", NULL)))
			v->exported = true;
	if ((v = gs_var_set(g, "grub_cpu", "x86_64", NULL)))
		v->exported = true;
	if ((v = gs_var_set(g, "grub_platform", "efi", NULL)))
		v->exported = true;
	if ((v = gs_var_set(g, "color_normal", "light-gray/black", NULL)))
		v->exported = true;
	if ((v = gs_var_set(g, "color_highlight", "black/light-gray", NULL)))
		v->exported = true;
	if (g->oom) {
		free(prefix);
		return -ENOMEM;
	}
	g->depth = 1;
	if (st && st->builtin) {
		/* rescue mode runs the built-in config (unmeasured); `normal` ends it (normal mode
		 * then shows the menu and, when nothing boots, its command line: it never returns) */
		g->rescue = true;
		gs_run_script(g, st->builtin, "the built-in config");
		g->rescue = false;
		if (!gs_stopped(g) && !g->normal_ran) {
			char *cfg = NULL;

			if (asprintf(&cfg, "%s/grub.cfg", prefix) < 0) {
				free(prefix);
				return -ENOMEM;
			}
			gs_run_config(g, cfg, false);
			if (!gs_stopped(g))
				gs_run_menu(g);
			free(cfg);
		}
	} else {
		gs_run_config(g, first, false);
		if (!gs_stopped(g))
			gs_run_menu(g);
	}
	free(prefix);
	if (g->oom)
		return -ENOMEM;
	if (!g->stop && !g->booted)
		gs_stopf(g, "the configs end without booting a kernel");
	if (!g->stop && g->check && g->out->n != g->n_today) {
		gs_stopf(g, "the model boots after %zu GRUB strings, today's log has %zu; the first it lacks: %s\"%.200s\"",
		      g->out->n, g->n_today, grub_string_prefix(g->today[g->out->n].kind), g->today[g->out->n].text);
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
					rc = gs_fact_add(&m->f, &m->n, g.dec_key[i], NULL, NULL, g.dec[i]);
				for (i = 0; i < g.n_learned && rc == 0; i++)
					rc = gs_fact_add(&m->f, &m->n, g.learned[i].key, g.learned[i].var,
						      g.learned[i].value ? g.learned[i].value : "", 1);
			}
			gs_done(&g);
			free(best_why);
			if (rc < 0)
				grub_model_run_done(run); /* a failed check returns no strings */
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
	if (rc == 0 && g.chosen_path.oom)
		rc = -ENOMEM; /* the entry picked is not known: not "no menu" */
	if (rc == 0 && spec && !g.chosen_path.n && !g.no_entry && !g.explored) {
		g.no_entry = true;
		free(g.stop);
		g.stop = strdup("the configs show no menu to pick an entry from");
		if (!g.stop)
			rc = -ENOMEM;
	}
	if (rc == 0 && explore) {
		*n_entries = g.explored ? g.n_explored : 0;
		if (g.explored)
			memcpy(sub, g.explored_sub, g.n_explored * sizeof(*sub));
		else if (!g.stop && !(g.stop = strdup("the configs boot before the menu the kernel search looks at")))
			rc = -ENOMEM;
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
	if (g.oom)
		rc = -ENOMEM;
	if (rc < 0) {
		/* a failed run returns nothing: the strings, reason and entry made so far are freed */
		grub_model_run_done(run);
		if (loaded) {
			free(*loaded);
			*loaded = NULL;
		}
	}
	return rc;
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
	if (asprintf(&run->why, "no menu entry loads the kernel %.200s%s%.400s%s", choice->kernel,
		     why ? " (the model could not follow every entry: " : "", why ? why : "", why ? ")" : "") < 0)
		run->why = NULL;
	free(why);
	return run->why ? 0 : -ENOMEM;
}
