/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Running the syntax tree: commands, conditions, loops, functions, and a script statement by
 * statement (grub-core/script/execute.c; grub-script-internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grub/grub-script-internal.h"

static enum status exec_list(gs *g, node *n);

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
			gs_stopf(g, "more than %d conditions whose outcome only today's log tells", MAX_RUNS);
			return S_FAIL;
		}
		d = g->n_dec < g->n_forced ? g->forced[g->n_dec] : 1;
		g->dec_key[g->n_dec] = strdup(key);
		if (!g->dec_key[g->n_dec])
			g->oom = true;
		g->dec[g->n_dec++] = d;
		return d ? S_OK : S_FAIL;
	} else {
		const fact *f = gs_fact_find(g->m, key, NULL);

		if (!f || f->outcome < 0) {
			gs_stopf(g, "whether `%.200s` succeeds decides what GRUB runs, and %s", key,
			      f ? "today's boot saw it both ways" : "today's boot did not run it");
			return S_FAIL;
		}
		return f->outcome ? S_OK : S_FAIL;
	}
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
	const fact *f = g->check ? NULL : gs_fact_find(g->m, cmd, name);

	gs_var_set(g, name, f && f->value ? f->value : NULL, cmd);
}

static enum status call_function(gs *g, func *f, char **args, size_t n)
{
	scope s = { args, n, NULL };
	enum status st;

	if (g->n_sc >= GRUB_MODEL_MAX_DEPTH || g->depth >= GRUB_MODEL_MAX_DEPTH) {
		gs_stopf(g, "functions call each other deeper than the model follows");
		return S_FAIL;
	}
	g->sc[g->n_sc++] = &s;
	g->depth++;
	st = exec_list(g, f->body);
	g->depth--;
	g->n_sc--;
	gs_scope_drop_own(&s);
	g->returning = false;
	return st;
}

/*
 * A command of the built-in config, which GRUB's rescue mode runs (kern/main.c
 * grub_load_config; rescue_parser.c): nothing is measured. `normal [FILE]` enters normal mode
 * on FILE ($prefix/grub.cfg without one), which never returns; set and insmod; any other
 * command stops the model.
 */
static enum status rescue_cmd(gs *g, argv_b *b)
{
	char **a = b->a;
	size_t argc = b->n;
	enum status st = S_OK;

	if (gs_has_unknown(a, argc)) {
		gs_stopf(g, "the built-in config's `%.200s` uses a value the model does not know", a[0]);
		st = S_FAIL;
	} else if (!strcmp(a[0], "set") && argc == 2 && strchr(a[1], '=')) {
		char *eq = strchr(a[1], '=');

		*eq = 0;
		gs_var_set(g, a[1], eq + 1, NULL);
	} else if (!strcmp(a[0], "insmod") || !strcmp(a[0], "echo")) {
		/* modules of a signed image are built in; echo prints */
	} else if (!strcmp(a[0], "normal") && argc <= 2) {
		const char *prefix;
		char *file = NULL;
		bool known;

		if (argc == 2) {
			file = strdup(a[1]);
		} else {
			prefix = gs_lookup(g, "prefix", &known, NULL);
			if (known && asprintf(&file, "%s/grub.cfg", prefix) < 0)
				file = NULL;
		}
		g->rescue = false;
		g->normal_ran = true;
		if (!file) {
			gs_stopf(g, "normal mode's config: $prefix is not known");
		} else {
			g->depth++;
			gs_run_config(g, file, false);
			if (!gs_stopped(g))
				gs_run_menu(g);
			g->depth--;
		}
		free(file);
		/* normal mode does not return to the built-in config: its command line waits */
		g->returning = true;
	} else {
		gs_stopf(g, "the built-in config runs `%.200s`, which the model does not follow", a[0]);
		st = S_FAIL;
	}
	gs_av_free(b);
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

	gs_expand(g, n->w, n->nw, &b);
	if (b.oom) {
		gs_av_free(&b);
		gs_stopf(g, "a command longer than the model takes");
		return S_FAIL;
	}
	if (!b.n) {
		gs_av_free(&b);
		return S_OK; /* nothing to run: GRUB measures nothing */
	}
	if (g->rescue)
		return rescue_cmd(g, &b);
	text = gs_join_argv(b.a, b.n);
	free(g->last_cmd);
	g->last_cmd = text ? strdup(text) : NULL;
	if (text && !g->last_cmd)
		g->oom = true; /* a condition's decision would be keyed by "" */
	gs_emit(g, GRUB_STRING_CMD, text);
	if (gs_stopped(g)) {
		gs_av_free(&b);
		return S_FAIL;
	}
	/* the string as measured (with learned values) is the key of what this command does */
	cmd = g->out->s[g->out->n - 1].text;
	if (gs_has_unknown(b.a, b.n)) {
		/* solved in emit: expand again with the value learned */
		gs_av_free(&b);
		gs_expand(g, n->w, n->nw, &b);
		if (b.oom || gs_has_unknown(b.a, b.n)) {
			gs_av_free(&b);
			gs_stopf(g, "`%.200s` holds a value the model cannot tell apart", cmd);
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
			gs_var_set(g, a[1], eq + 1, NULL);
			st = S_OK;
		} else {
			st = S_OK;
		}
	} else if (!strcmp(a[0], "unset")) {
		size_t i;

		for (i = 1; i < argc; i++)
			gs_var_unset(g, a[i]);
		st = S_OK;
	} else if (!strcmp(a[0], "export")) {
		size_t i;

		for (i = 1; i < argc; i++) {
			var *v = gs_var_find(gs_cur(g), a[i]);

			if (!v)
				v = gs_var_set(g, a[i], "", NULL);
			if (v)
				v->exported = true;
		}
		st = S_OK;
	} else if (!strcmp(a[0], "true") || !strcmp(a[0], "echo") || !strcmp(a[0], "save_env")) {
		st = S_OK;
	} else if (!strcmp(a[0], "false")) {
		st = S_FAIL;
	} else if (!strcmp(a[0], "menuentry") || !strcmp(a[0], "submenu")) {
		gs_add_entry(g, a, argc, a[0][0] == 's');
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
				gs_scope_drop_own(sc);
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
			gs_run_config(g, a[1], a[0][0] == 'c');
			g->depth--;
			st = S_OK;
		}
	} else if (!strcmp(a[0], "boot")) {
		if (g->loaded)
			g->booted = true;
		else
			gs_stopf(g, "`boot` with nothing loaded");
	} else if (grub_is_cmd(a[0], "linux")) {
		if (argc >= 2 && g->kernel_cmdline) {
			grub_words args = { 0 };
			size_t i;

			for (i = 2; i < argc && i - 2 < GRUB_MAX_WORDS; i++)
				args.w[args.n++] = a[i];
			gs_emit(g, GRUB_STRING_KERNEL_CMDLINE, grub_loader_cmdline(a[1], &args));
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
		free(gs_cur(g)->taint_setter);
		gs_cur(g)->tainted = true;
		gs_cur(g)->taint_setter = strdup(cmd);
		if (!gs_cur(g)->taint_setter)
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
		gs_stopf(g, "`%.200s`: the model does not follow what %s does", cmd, a[0]);
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
			gs_var_set(g, a[0], eq + 1, NULL);
			*eq = '=';
			st = S_OK;
		}
	}
	if (invert && st != S_UNKNOWN)
		st = st == S_OK ? S_FAIL : S_OK;
	if (!gs_stopped(g)) {
		if (st == S_OK)
			gs_var_set(g, "?", "0", NULL);
		else
			gs_var_set(g, "?", NULL, cmd);
	}
	gs_av_free(&b);
	return st;
}

static enum status exec_node(gs *g, node *n)
{
	enum status st = S_OK;

	if (++g->steps > GRUB_MODEL_MAX_STEPS) {
		gs_stopf(g, "more than %d steps: a loop the model does not see end", GRUB_MODEL_MAX_STEPS);
		return S_FAIL;
	}
	if (g->rescue && n->k != N_CMD) {
		gs_stopf(g, "the built-in config has a block (if, while, for), which rescue mode does not run");
		return S_FAIL;
	}
	switch (n->k) {
	case N_CMD:
		return exec_cmd(g, n);
	case N_IF:
		st = decide(g, exec_list(g, n->a));
		if (gs_stopped(g) || g->returning)
			return st;
		if (st == S_OK)
			return exec_list(g, n->b);
		return n->c ? exec_list(g, n->c) : S_OK;
	case N_WHILE:
	case N_UNTIL:
		for (;;) {
			enum status c = decide(g, exec_list(g, n->a));

			if (gs_stopped(g) || g->returning)
				return c;
			if ((c == S_OK) != (n->k == N_WHILE))
				return st;
			st = exec_list(g, n->b);
			if (gs_stopped(g) || g->returning)
				return st;
			if (++g->steps > GRUB_MODEL_MAX_STEPS) {
				gs_stopf(g, "a loop the model does not see end");
				return S_FAIL;
			}
		}
	case N_FOR: {
		argv_b b = { 0 };
		size_t i;

		gs_expand(g, n->w, n->nw, &b);
		if (b.oom || gs_has_unknown(b.a, b.n)) {
			gs_av_free(&b);
			gs_stopf(g, "a for loop over values the model does not know");
			return S_FAIL;
		}
		for (i = 0; i < b.n && !gs_stopped(g) && !g->returning; i++) {
			gs_var_set(g, n->name, b.a[i], NULL);
			st = exec_list(g, n->a);
		}
		gs_av_free(&b);
		return st;
	}
	}
	return st;
}

static enum status exec_list(gs *g, node *n)
{
	enum status st = S_OK;

	if (g->depth > GRUB_MODEL_MAX_DEPTH) {
		gs_stopf(g, "nesting deeper than the model follows");
		return S_FAIL;
	}
	g->depth++;
	for (; n && !gs_stopped(g) && !g->returning; n = n->next)
		st = exec_node(g, n);
	g->depth--;
	return st;
}

static bool keep_node(gs *g, node *n)
{
	node **k = realloc(g->keep, (g->n_keep + 1) * sizeof(*k));

	if (!k) {
		gs_node_free(n);
		g->oom = true;
		return false;
	}
	g->keep = k;
	g->keep[g->n_keep++] = n;
	return true;
}

/* Parse and run a script statement by statement, as GRUB does (name: for messages). */
void gs_run_script(gs *g, const char *text, const char *name)
{
	lexer lx = { .text = text };

	reader_init(&lx.r, text, strlen(text), 0);
	while (!gs_stopped(g) && !g->returning) {
		char *raw = NULL;
		enum tok t;

		gs_skip_delims(&lx, true);
		t = gs_peek_tok(&lx, &raw);
		if (t == T_EOF) {
			free(raw);
			break;
		}
		if (t == T_WORD && gs_kw_is(raw, "function")) {
			word w, nm;
			func *grown;
			node *body;

			free(raw);
			(void) gs_lex(&lx, &w);
			gs_word_done(&w);
			if (gs_lex(&lx, &nm) != T_WORD || !nm.raw || !gs_is_name_start(nm.raw[0]) || gs_is_keyword(nm.raw)) {
				gs_word_done(&nm);
				gs_lex_error(&lx, "function NAME");
				break;
			}
			gs_skip_delims(&lx, false);
			if (gs_lex(&lx, &w) != T_LBR) {
				gs_word_done(&w);
				gs_word_done(&nm);
				gs_lex_error(&lx, "function NAME {");
				break;
			}
			{
				static const char *const none[] = { NULL };

				body = gs_parse_list(&lx, none, true, 1);
			}
			if (!body || gs_lex(&lx, &w) != T_RBR) {
				gs_word_done(&w);
				gs_word_done(&nm);
				gs_node_free(body);
				gs_lex_error(&lx, "a function's body");
				break;
			}
			if (!keep_node(g, body)) {
				gs_word_done(&nm);
				break;
			}
			{
				func *old = func_find(g, nm.raw);

				if (old) {
					old->body = body; /* redefined: the new body from now on */
					gs_word_done(&nm);
					continue;
				}
			}
			grown = realloc(g->fn, (g->n_fn + 1) * sizeof(*grown));
			if (!grown) {
				gs_word_done(&nm);
				g->oom = true;
				break;
			}
			g->fn = grown;
			g->fn[g->n_fn].name = nm.raw;
			g->fn[g->n_fn++].body = body;
			nm.raw = NULL;
			gs_word_done(&nm);
		} else {
			node *n;

			free(raw);
			n = gs_parse_command(&lx, 1);
			if (!n)
				break;
			/* a statement ends at a delimiter */
			t = gs_peek_tok(&lx, NULL);
			if (t != T_NL && t != T_SEMI && t != T_EOF) {
				gs_node_free(n);
				gs_lex_error(&lx, "a command's end");
				break;
			}
			if (!keep_node(g, n))
				break;
			exec_node(g, n);
		}
	}
	if (lx.oom)
		g->oom = true;
	else if (lx.err && !gs_stopped(g))
		gs_stopf(g, "%s: %s", name, lx.err);
	free(lx.err);
}
