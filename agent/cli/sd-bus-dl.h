/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * sd-bus, loaded when a verb talks to topotuned and not before. Linked,
 * libsystemd and the six libraries it pulls in (libgcrypt, liblzma, libzstd,
 * liblz4, libcap, libgpg-error) are mapped, relocated and initialised at
 * every start: about 4 ms of CPU, a third of an offline `topotunectl
 * topology` at 640 CPUs, for verbs that never open a bus. Include this
 * instead of <systemd/sd-bus.h>: the sd_bus_* names below become calls
 * through pointers that sd_bus_dl_open() fills (as systemd itself does for
 * its optional libraries).
 */
#include <systemd/sd-bus.h>

/* Load libsystemd.so.0 and resolve the functions below, once; 0 or -EOPNOTSUPP. */
int sd_bus_dl_open(void);

#define SD_BUS_DL_FUNCTIONS(X)                                                                                   \
	X(sd_bus_call)                                                                                           \
	X(sd_bus_call_method)                                                                                    \
	X(sd_bus_error_free)                                                                                     \
	X(sd_bus_error_is_set)                                                                                   \
	X(sd_bus_flush_close_unref)                                                                              \
	X(sd_bus_get_property)                                                                                   \
	X(sd_bus_get_property_string)                                                                            \
	X(sd_bus_get_property_strv)                                                                              \
	X(sd_bus_get_property_trivial)                                                                           \
	X(sd_bus_message_appendv)                                                                                \
	X(sd_bus_message_enter_container)                                                                        \
	X(sd_bus_message_exit_container)                                                                         \
	X(sd_bus_message_new_method_call)                                                                        \
	X(sd_bus_message_peek_type)                                                                              \
	X(sd_bus_message_read)                                                                                   \
	X(sd_bus_message_read_strv)                                                                              \
	X(sd_bus_message_set_allow_interactive_authorization)                                                    \
	X(sd_bus_message_skip)                                                                                   \
	X(sd_bus_message_unref)                                                                                  \
	X(sd_bus_new)                                                                                            \
	X(sd_bus_open_system)                                                                                    \
	X(sd_bus_set_address)                                                                                    \
	X(sd_bus_set_allow_interactive_authorization)                                                            \
	X(sd_bus_set_bus_client)                                                                                 \
	X(sd_bus_start)

#define SD_BUS_DL_DECLARE(name) extern typeof(name) *sym_##name;
SD_BUS_DL_FUNCTIONS(SD_BUS_DL_DECLARE)
#undef SD_BUS_DL_DECLARE

/*
 * The cleanup functions: sd-bus.h's own call the linked names. Each does
 * nothing before sd_bus_dl_open(), when nothing can have been allocated.
 */
static inline void sd_bus_dl_message_unrefp(sd_bus_message **m)
{
	if (*m)
		sym_sd_bus_message_unref(*m);
}

static inline void sd_bus_dl_flush_close_unrefp(sd_bus **b)
{
	if (*b)
		sym_sd_bus_flush_close_unref(*b);
}

static inline void sd_bus_dl_error_free(sd_bus_error *e)
{
	if (sym_sd_bus_error_free)
		sym_sd_bus_error_free(e);
}

#define sd_bus_call sym_sd_bus_call
#define sd_bus_call_method sym_sd_bus_call_method
#define sd_bus_error_free sd_bus_dl_error_free
#define sd_bus_error_is_set sym_sd_bus_error_is_set
#define sd_bus_flush_close_unref sym_sd_bus_flush_close_unref
#define sd_bus_flush_close_unrefp sd_bus_dl_flush_close_unrefp
#define sd_bus_get_property sym_sd_bus_get_property
#define sd_bus_get_property_string sym_sd_bus_get_property_string
#define sd_bus_get_property_strv sym_sd_bus_get_property_strv
#define sd_bus_get_property_trivial sym_sd_bus_get_property_trivial
#define sd_bus_message_appendv sym_sd_bus_message_appendv
#define sd_bus_message_enter_container sym_sd_bus_message_enter_container
#define sd_bus_message_exit_container sym_sd_bus_message_exit_container
#define sd_bus_message_new_method_call sym_sd_bus_message_new_method_call
#define sd_bus_message_peek_type sym_sd_bus_message_peek_type
#define sd_bus_message_read sym_sd_bus_message_read
#define sd_bus_message_read_strv sym_sd_bus_message_read_strv
#define sd_bus_message_set_allow_interactive_authorization sym_sd_bus_message_set_allow_interactive_authorization
#define sd_bus_message_skip sym_sd_bus_message_skip
#define sd_bus_message_unref sym_sd_bus_message_unref
#define sd_bus_message_unrefp sd_bus_dl_message_unrefp
#define sd_bus_new sym_sd_bus_new
#define sd_bus_open_system sym_sd_bus_open_system
#define sd_bus_set_address sym_sd_bus_set_address
#define sd_bus_set_allow_interactive_authorization sym_sd_bus_set_allow_interactive_authorization
#define sd_bus_set_bus_client sym_sd_bus_set_bus_client
#define sd_bus_start sym_sd_bus_start
