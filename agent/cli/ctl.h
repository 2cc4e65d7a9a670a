/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

typedef struct CtlContext {
	const char *root;          /* "/" or the sysroot */
	const char *config_root;   /* NULL: same as root */
	const char *cpuid_dump;
	const char *kernel;        /* probe | patched | stock */
	bool offline;
	const char *bus_address; /* NULL: the system bus */
	bool json;                /* --json for every verb that has it */
} CtlContext;

/* The "schema" key of every --json document (topotunectl(1), JSON OUTPUT). */
#define CTL_JSON_SCHEMA 1

/* --cpu N: a CPU number below CPUSET_MAX_CPUS; logs and returns -EINVAL otherwise. */
int parse_cpu_arg(const char *s, unsigned *ret);
/* The options of a verb whose only one is --json: sets *json; -EINVAL for anything else. */
int parse_json_option(int argc, char *argv[], bool *json);

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
