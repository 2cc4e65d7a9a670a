/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include "sd-bus-dl.h"

#include "ctl.h"

/*
 * Run @argv[0] against topotuned over D-Bus if it is an online verb.
 * *ret_handled says whether it was; if not, the caller runs the offline verb.
 */
int online_dispatch(const CtlContext *ctx, int argc, char *argv[], bool *ret_handled);
bool online_daemon_available(const CtlContext *ctx);

/* Connect to topotuned, or log why not; returns 0 or the exit status 2. */
int online_connect(const CtlContext *ctx, sd_bus **ret);
/* Log a failed call (the bus error's name and message, else @r); returns the exit status 2. */
int online_call_failed(const char *what, const sd_bus_error *e, int r);

#define ONLINE_DEST "org.topotune1"
#define ONLINE_PATH "/org/topotune1"
#define ONLINE_IFACE "org.topotune1.Manager"
