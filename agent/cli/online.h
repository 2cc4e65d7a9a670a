/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "ctl.h"

/*
 * Run @argv[0] against topotuned over D-Bus if it is an online verb.
 * *ret_handled says whether it was; if not, the caller runs the offline verb.
 */
int online_dispatch(const CtlContext *ctx, int argc, char *argv[], bool *ret_handled);
bool online_daemon_available(const CtlContext *ctx);
