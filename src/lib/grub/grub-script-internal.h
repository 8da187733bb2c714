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
 *
 * The model's files, each with one job, share this header (internal to src/lib/grub):
 *   grub-script-lex.c     words and tokens (yylex.l)
 *   grub-script-parse.c   the syntax tree (parser.y)
 *   grub-script-env.c     variables, contexts, positional parameters, stopping a run
 *   grub-script-expand.c  a growing string, argv from words, the measured strings (gs_emit)
 *   grub-script-exec.c    commands, conditions, loops, functions, a script statement by statement
 *   grub-script-menu.c    menu entries, the entry the menu runs, configfile and source
 *   grub-script.c         what the model learns, the self-check, the prediction (grub-script.h)
 * Their shared functions carry the gs_ prefix (the interpreter's state is a gs): not mb_, not
 * exported.
 */
#ifndef MB_GRUB_SCRIPT_INTERNAL_H
#define MB_GRUB_SCRIPT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

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

/* ---- a growing string -------------------------------------------------------------------- */

typedef struct sbuf {
	char *s;
	size_t n, cap;
	bool oom;
} sbuf;

/* ---- lexer: GRUB's tokens over a cleaned text (bounds through the reader) ---------------- */

enum tok { T_EOF, T_NL, T_SEMI, T_LBR, T_RBR, T_WORD, T_BAD };

typedef struct lexer {
	byte_reader r;
	const char *text;
	char *err; /* a syntax error: the model stops */
	bool oom;  /* out of memory: an error (-ENOMEM), not a stop; gs_lex_failed() is either */
} lexer;

/* ---- what the model learns --------------------------------------------------------------- */

typedef struct fact {
	char *key;   /* the measured text of the command */
	char *var;   /* NULL: the command's outcome; else a variable it set */
	char *value; /* for a variable */
	int outcome; /* 1 true, 0 false, -1 seen both ways */
} fact;

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
	size_t bytes; /* held in variables, menu entries, measured strings (GRUB_MODEL_MAX_BYTES) */
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
	const grub_model_start *start; /* the image's start, NULL: normal mode on cfg[0] */
	bool rescue;     /* running the built-in config: rescue mode, nothing measured */
	bool normal_ran; /* the built-in config entered normal mode */
} gs;

/* argv under construction: GRUB's grub_script_argv with its "current argument may be absent" */
typedef struct argv_b {
	char **a;
	size_t n;
	bool open; /* a[n-1] is still NULL-able (no text yet) */
	bool oom;   /* stop expanding: too long, or nomem */
	bool nomem; /* an allocation failed: gs_expand sets the run's oom (-ENOMEM, not a stop) */
	size_t bytes; /* of all the arguments: at most GRUB_MODEL_MAX_STRING, as their measured join */
} argv_b;

/* grub-script-lex.c: words and tokens */
void gs_word_done(word *w);
void gs_lex_error(lexer *lx, const char *what);
void gs_lex_oom(lexer *lx);
bool gs_lex_failed(const lexer *lx);
bool gs_is_name_start(int c);
bool gs_is_digit(int c);
enum tok gs_lex(lexer *lx, word *w);
enum tok gs_peek_tok(lexer *lx, char **raw);
bool gs_kw_is(const char *raw, const char *kw);
bool gs_is_keyword(const char *raw);

/* grub-script-parse.c: the syntax tree */
void gs_node_free(node *n);
unsigned gs_skip_delims(lexer *lx, bool semis);
node *gs_parse_list(lexer *lx, const char *const *terms, bool rbr, unsigned depth);
node *gs_parse_command(lexer *lx, unsigned depth);

/* grub-script-env.c: the environment; gs_stopf ends the run with a reason (the first one kept) */
void gs_scope_drop_own(scope *s);
void gs_stopf(gs *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool gs_stopped(const gs *g);
bool gs_charge(gs *g, size_t n);
void gs_refund(gs *g, size_t n);
envctx *gs_cur(gs *g);
var *gs_var_find(envctx *c, const char *name);
var *gs_var_set(gs *g, const char *name, const char *value, const char *setter);
void gs_var_unset(gs *g, const char *name);
void gs_ctx_done(envctx *c);
bool gs_ctx_open(gs *g);
void gs_ctx_close(gs *g);
const char *gs_lookup(gs *g, const char *name, bool *known, const char **setter);

/* grub-script-expand.c: words to argv and measured strings */
void gs_sb_add(sbuf *b, const char *s, size_t n);
void gs_sb_str(sbuf *b, const char *s);
char *gs_sb_take(sbuf *b);
void gs_av_free(argv_b *b);
void gs_expand(gs *g, const word *w, size_t nw, argv_b *b);
char *gs_join_argv(char *const *a, size_t n);
void gs_emit(gs *g, grub_string_kind kind, char *text);
bool gs_has_unknown(char *const *a, size_t n);

/* grub-script-exec.c: running a script */
void gs_run_script(gs *g, const char *text, const char *name);

/* grub-script-menu.c: menus, entries, configs */
void gs_add_entry(gs *g, char **a, size_t n, bool submenu);
void gs_run_menu(gs *g);
void gs_run_config(gs *g, const char *path, bool new_env);

/* grub-script.c: what the model learns */
int gs_fact_add(fact **f, size_t *n, const char *key, const char *name, const char *value, int outcome);
const fact *gs_fact_find(const grub_model *m, const char *key, const char *name);

#endif
