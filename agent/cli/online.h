/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include "sd-bus-dl.h"

#include "ctl.h"

/* topotuned is on the bus (ctl_dispatch(): a verb with both entries runs through it). */
bool online_daemon_available(const CtlContext *ctx);

/* The verbs through topotuned (the online entries of ctl_dispatch()'s table); exit status. */
int verb_status(const CtlContext *ctx, int argc, char *argv[]);
int verb_apply(const CtlContext *ctx, int argc, char *argv[]);
int verb_revert(const CtlContext *ctx, int argc, char *argv[]);
int verb_reload(const CtlContext *ctx, int argc, char *argv[]);
int verb_verify(const CtlContext *ctx, int argc, char *argv[]);
int verb_set_profile(const CtlContext *ctx, int argc, char *argv[]);
int verb_auto_profile(const CtlContext *ctx, int argc, char *argv[]);
int verb_hold(const CtlContext *ctx, int argc, char *argv[]);
int online_profiles(const CtlContext *ctx, int argc, char *argv[]);
int online_metrics(const CtlContext *ctx, int argc, char *argv[]);
/* The layout topotuned reports: @cpu's domains, or (@cpu < 0) every level's. */
int online_layout(const CtlContext *ctx, int cpu, bool json);

/* Connect to topotuned, or log why not; returns 0 or the exit status 2. */
int online_connect(const CtlContext *ctx, sd_bus **ret);
/* Log a failed call (the bus error's name and message, else @r); returns the exit status 2. */
int online_call_failed(const char *what, const sd_bus_error *e, int r);

#define ONLINE_DEST "org.topotune1"
#define ONLINE_PATH "/org/topotune1"
#define ONLINE_IFACE "org.topotune1.Manager"
