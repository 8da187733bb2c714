/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "tool/options.h"
#include "tool/tool.h"

/* More than any verb has; a table this long is a programming error, said as a usage error. */
#define TOOL_MAX_OPTIONS 48
/* getopt_long's value for an option without a letter: above every char. */
#define TOOL_OPT_CODE_BASE 0x100

static int take(const char *verb, const tool_option *o, const char *arg)
{
	unsigned u;
	size_t i;

	switch (o->kind) {
	case TOOL_OPT_STRING:
		*(const char **) o->target = arg;
		return EXIT_OK;
	case TOOL_OPT_FLAG:
		*(bool *) o->target = true;
		return EXIT_OK;
	case TOOL_OPT_PCRS:
		if (tool_parse_pcr_list(arg, o->target) < 0)
			return tool_usage_error(verb, "--%s: '%s' is not a list of PCRs 0-23 (e.g. 0,2,4-7)", o->name,
						arg);
		return EXIT_OK;
	case TOOL_OPT_BANK:
		return tool_bank_arg(verb, arg, o->target);
	case TOOL_OPT_BANKS: {
		tool_banks *b = o->target;

		return tool_bank_list_add(verb, arg, b->alg, &b->n);
	}
	case TOOL_OPT_UINT:
		if (tool_parse_uint(arg, o->min, o->max, &u) < 0)
			return tool_usage_error(verb, "--%s takes a number from %u to %u, not '%s'", o->name, o->min,
						o->max, arg);
		*(unsigned *) o->target = u;
		return EXIT_OK;
	case TOOL_OPT_CHOICE:
		for (i = 0; o->choices[i]; i++)
			if (strcmp(arg, o->choices[i]) == 0) {
				*(int *) o->target = (int) i;
				return EXIT_OK;
			}
		{
			char list[256] = "";
			size_t n = 0;

			for (i = 0; o->choices[i] && n < sizeof(list); i++)
				n += (size_t) snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "", o->choices[i]);
			return tool_usage_error(verb, "--%s is one of %s, not '%s'", o->name, list, arg);
		}
	case TOOL_OPT_CALL:
		return o->call(o->target, arg, verb);
	}
	return tool_usage_error(verb, "--%s: no parser", o->name);
}

int tool_json_json_option(void *target, const char *arg, const char *verb)
{
	tool_json *style = target;

	if (*style == TOOL_JSON_OFF) /* --compact --json stays compact */
		*style = TOOL_JSON_PRETTY;
	return EXIT_OK;
}

int tool_grub_map_option(void *target, const char *arg, const char *verb)
{
	tool_grub_maps *maps = target;
	char *close = strchr(arg, ')');

	if (arg[0] != '(' || !close || close[1] != '=' || !close[2])
		return tool_usage_error(verb, "the map takes (DEVICE)=DIR, e.g. '(hd0,gpt1)=/boot/efi', not '%s'", arg);
	if (maps->n >= TOOL_MAX_GRUB_MAPS)
		return tool_usage_error(verb, "at most %d maps", TOOL_MAX_GRUB_MAPS);
	/* an argv string, ours to split */
	close[1] = '\0';
	maps->m[maps->n++] = (mb_grub_mount) { .device = arg, .dir = close + 2 };
	return EXIT_OK;
}

void tool_grub_maps_finish(tool_grub_maps *maps)
{
	static const char *const defaults[] = { "/boot/efi", "/efi", "/boot", "/" };
	size_t i;

	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		maps->m[maps->n++] = (mb_grub_mount) { .device = NULL, .dir = defaults[i] };
}

int tool_grub_cfg_option(void *target, const char *arg, const char *verb)
{
	tool_grub_cfgs *g = target;
	mb_grub_config *c;
	char *eq = strchr(arg, '=');
	size_t i;

	if (g->boot->n_grub_cfg >= TOOL_MAX_GRUB_CFG)
		return tool_usage_error(verb, "at most %d --grub-cfg", TOOL_MAX_GRUB_CFG);
	c = &g->cfg[g->boot->n_grub_cfg];
	c->file = arg;
	c->measured_path = NULL;
	if (eq) {
		if (eq == arg || !eq[1])
			return tool_usage_error(verb, "--grub-cfg takes FILE or MEASURED_PATH=FILE, not '%s'", arg);
		/* an argv string, ours to split */
		*eq = '\0';
		c->measured_path = arg;
		c->file = eq + 1;
	}
	/* Two files for one config, or a bare FILE beside another: which one boots is unsaid. */
	for (i = 0; i < g->boot->n_grub_cfg; i++)
		if (!g->cfg[i].measured_path || !c->measured_path || strcmp(g->cfg[i].measured_path, c->measured_path) == 0)
			return tool_usage_error(verb, "--grub-cfg %s%s%s: give each config once, as MEASURED_PATH=FILE "
						"when there are several", c->measured_path ? c->measured_path : "",
						c->measured_path ? "=" : "", c->file);
	g->boot->grub_cfg = g->cfg;
	g->boot->n_grub_cfg++;
	return EXIT_OK;
}

/* --efi-var NAME=FILE or NAME+=FILE (an append), --sbat-level, --mok-list: repeatable. */
static int add_efi_var(tool_efi_vars *v, const char *verb, const char *arg, const char *name, const char *file,
		       bool append)
{
	if (v->n >= TOOL_MAX_EFI_VARS)
		return tool_usage_error(verb, "at most %d EFI variables", TOOL_MAX_EFI_VARS);
	if (!*name || !*file)
		return tool_usage_error(verb, "--efi-var takes NAME=FILE or NAME+=FILE, not '%s'", arg);
	v->var[v->n] = (mb_efi_var_update) { .name = name, .file = file, .append = append };
	v->arg[v->n] = arg;
	v->n++;
	return EXIT_OK;
}

int tool_efi_var_option(void *target, const char *arg, const char *verb)
{
	char *eq = strchr(arg, '=');
	bool append;

	append = eq && eq > arg && eq[-1] == '+';
	if (!eq || eq == arg + append || !eq[1])
		return tool_usage_error(verb, "--efi-var takes NAME=FILE or NAME+=FILE, not '%s'", arg);
	/* split in place: arg is an argv string, ours to change; the NAME stays readable as given */
	*eq = 0;
	if (append)
		eq[-1] = 0;
	return add_efi_var(target, verb, arg, arg, eq + 1, append);
}

int tool_sbat_level_option(void *target, const char *arg, const char *verb)
{
	return add_efi_var(target, verb, arg, "SbatLevel", arg, false);
}

int tool_mok_list_option(void *target, const char *arg, const char *verb)
{
	return add_efi_var(target, verb, arg, "MokList", arg, false);
}

int tool_json_compact_option(void *target, const char *arg, const char *verb)
{
	*(tool_json *) target = TOOL_JSON_COMPACT;
	return EXIT_OK;
}

int tool_parse_options(const char *verb, const char *help, const tool_option *opts, int argc, char **argv,
		       int max_args)
{
	struct option longopts[TOOL_MAX_OPTIONS + 2];
	char shortopts[2 * TOOL_MAX_OPTIONS + 4] = ":h";
	size_t n, s = 2;
	int c;

	for (n = 0; opts[n].name; n++) {
		bool has_arg = opts[n].kind != TOOL_OPT_FLAG && !opts[n].takes_no_arg;

		if (n == TOOL_MAX_OPTIONS)
			return tool_usage_error(verb, "too many options in this verb's table");
		longopts[n] = (struct option) { opts[n].name, has_arg ? required_argument : no_argument, NULL,
						opts[n].short_name ? opts[n].short_name
								   : TOOL_OPT_CODE_BASE + (int) n };
		if (opts[n].short_name) {
			shortopts[s++] = (char) opts[n].short_name;
			if (has_arg)
				shortopts[s++] = ':';
		}
	}
	longopts[n++] = (struct option) { "help", no_argument, NULL, 'h' };
	longopts[n] = (struct option) { 0 };
	shortopts[s] = '\0';

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const tool_option *o = NULL;
		int rc;

		if (c == 'h') {
			fputs(help, stdout);
			return EXIT_OK;
		}
		if (c == ':')
			return tool_usage_error(verb, "option '%s' needs an argument", argv[optind - 1]);
		if (c == '?') {
			if (optopt && optopt < TOOL_OPT_CODE_BASE && optopt != '?')
				return tool_usage_error(verb, "unknown option '-%c'", optopt);
			return tool_usage_error(verb, "unknown option '%s'", argv[optind - 1]);
		}
		if (c >= TOOL_OPT_CODE_BASE)
			o = &opts[c - TOOL_OPT_CODE_BASE];
		else
			for (size_t i = 0; opts[i].name && !o; i++)
				if (opts[i].short_name == c)
					o = &opts[i];
		if (!o)
			return tool_usage_error(verb, "unknown option '%s'", argv[optind - 1]);
		rc = take(verb, o, optarg);
		if (rc != EXIT_OK)
			return rc;
	}
	if (argc - optind > max_args)
		return tool_usage_error(verb, "unexpected argument '%s'", argv[optind + max_args]);
	return TOOL_OPTS_GO_ON;
}
