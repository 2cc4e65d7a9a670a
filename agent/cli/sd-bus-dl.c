/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsystemd's sd-bus by dlopen(), for the verbs that talk to topotuned
 * (sd-bus-dl.h says why). Depends on libc and sd-bus.h only.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

#include "sd-bus-dl.h"

#define SD_BUS_DL_DEFINE(name) typeof(sym_##name) sym_##name;
SD_BUS_DL_FUNCTIONS(SD_BUS_DL_DEFINE)
#undef SD_BUS_DL_DEFINE

int sd_bus_dl_open(void)
{
	static int state;   /* 0 not tried, 1 loaded, < 0 the error */
	void *dl;

	if (state != 0)
		return state > 0 ? 0 : state;
	/* Never unloaded: the process ends first. */
	dl = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!dl)
		return (state = -EOPNOTSUPP);
#define SD_BUS_DL_RESOLVE(name)                                        \
	if (!(*(void **)&sym_##name = dlsym(dl, #name)))               \
		return (state = -EOPNOTSUPP);
	SD_BUS_DL_FUNCTIONS(SD_BUS_DL_RESOLVE)
#undef SD_BUS_DL_RESOLVE
	state = 1;
	return 0;
}
