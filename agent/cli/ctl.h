/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "json.h"

typedef struct CtlContext {
	const char *root;          /* "/" or the sysroot */
	const char *config_root;   /* NULL: same as root */
	const char *cpuid_dump;
	const char *kernel;        /* probe | patched | stock */
	bool offline;
	const char *bus_address; /* NULL: the system bus */
	bool json;                /* --json for every verb that has it */
} CtlContext;

/*
 * The "schema" key of every --json document: its contract is
 * data/topotunectl.schema.json (installed in /usr/share/topotune) and
 * topotunectl(1), JSON OUTPUT. A key renamed or removed, or a type
 * changed, raises it; a key added does not.
 */
#define CTL_JSON_SCHEMA 1

/* Start a --json document on stdout: its object and the "schema" key. */
void ctl_json_begin(JsonWriter *w);
/* End it (the object, the newline). */
void ctl_json_end(JsonWriter *w);

/* --cpu N: a CPU number below CPUSET_MAX_CPUS; logs and returns -EINVAL otherwise. */
int parse_cpu_arg(const char *s, unsigned *ret);
/*
 * The options of a verb whose only one is --json and that takes no
 * arguments: sets *json; logs and returns -EINVAL for anything else.
 */
int parse_json_option(int argc, char *argv[], bool *json);

typedef struct Session Session;
/* Discover the machine below ctx->root (and, @want_config, load the configuration); logs failures. */
int ctl_session_open(const CtlContext *ctx, Session *s, bool want_config);
/*
 * layout --compare's count: the kernel's scheduler domains against the
 * prediction for its current settings (0: they match; *ret_first: the first
 * difference), or a negative errno, logged.
 */
int ctl_layout_differences(const CtlContext *ctx, char **ret_first);

/* trial.c: topotunectl trial */
int verb_trial(const CtlContext *ctx, int argc, char *argv[]);

/* diagnose.c: topotunectl diagnose [--duration S] [--only KIND] */
int verb_diagnose(const CtlContext *ctx, int argc, char *argv[]);

/* check.c: topotunectl check [--as PATH] [FILE...] */
int verb_check(const CtlContext *ctx, int argc, char *argv[]);

/* Run a verb; returns the process exit status (0 ok, 1 drift, 2 error). */
int ctl_dispatch(const CtlContext *ctx, int argc, char *argv[]);

/*
 * @s for the terminal: control characters and invalid UTF-8 as \xNN (text
 * from files and from the daemon may hold anything). The result lives
 * until eight more calls; never NULL.
 */
const char *tty_text(const char *s);
