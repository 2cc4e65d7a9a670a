/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Kernel uevents of the cpu subsystem (CPU hotplug) and driver binds (a
 * driver's probe allocates the device's IRQs) from NETLINK_KOBJECT_UEVENT
 * group 1, and a debouncer so that one burst of hotplug events leads to one
 * re-plan, and one burst of binds to one IRQ pass.
 *
 * Event loop use (sd-event):
 *   uevents_new(on_uevent, userdata, &ue, &error);
 *   sd_event_add_io(event, &src, uevents_get_fd(ue), EPOLLIN, io_cb, m);
 *   io_cb: r = uevents_process(ue);   -- calls on_uevent per cpu event
 *          r == -ENOBUFS: events were lost -> re-plan anyway
 *   on_uevent: debouncer_feed(&d, now); arm a timer at debouncer_next(&d)
 *   timer: if (debouncer_fire(&d, now)) re-plan; else re-arm at debouncer_next()
 */

#include <stdbool.h>
#include <stdint.h>

#include "macro.h"

typedef enum UEventAction {
	UEVENT_ADD,
	UEVENT_REMOVE,
	UEVENT_CHANGE,
	UEVENT_MOVE,
	UEVENT_ONLINE,
	UEVENT_OFFLINE,
	UEVENT_BIND,
	UEVENT_UNBIND,
	_UEVENT_ACTION_MAX,
	_UEVENT_ACTION_INVALID = -EINVAL,
} UEventAction;

const char *uevent_action_to_string(UEventAction a) _const_;
UEventAction uevent_action_from_string(const char *s) _pure_;

/* Strings point into the parsed buffer: valid as long as it is. */
typedef struct UEvent {
	UEventAction action;
	const char *devpath;     /* "/devices/system/cpu/cpu3" */
	const char *subsystem;   /* "cpu" */
	int cpu;                 /* N of /devices/system/cpu/cpuN, else -1 */
	uint64_t seqnum;         /* 0 when absent */
} UEvent;

/*
 * Parse one kernel uevent datagram "ACTION@DEVPATH\0KEY=VALUE\0...".
 * -EBADMSG when: no '@' header, a string not NUL-terminated within @len,
 * an unknown action, ACTION=/DEVPATH= disagreeing with the header, no
 * SUBSYSTEM=, or a "libudev" (udevd re-broadcast) message.
 */
int uevent_parse(const void *buf, size_t len, UEvent *ret);

typedef struct UEvents UEvents;
typedef int (*UEventHandler)(UEvents *ue, const UEvent *ev, void *userdata);

/*
 * A driver bound to a device (ACTION=bind, any subsystem but cpu): its
 * probe is over, and the IRQs it requested are in /proc/irq.
 */
bool uevent_is_driver_bind(const UEvent *ev) _pure_;

/* Listen to kernel uevents; only SUBSYSTEM=cpu and driver binds reach @handler. */
int uevents_new(UEventHandler handler, void *userdata, UEvents **ret, char **ret_error);
UEvents *uevents_free(UEvents *ue);
DEFINE_TRIVIAL_CLEANUP_FUNC(UEvents *, uevents_free);
int uevents_get_fd(const UEvents *ue) _pure_;
/* Same contract as procevents_process(). */
int uevents_process(UEvents *ue);
const char *uevents_error(const UEvents *ue) _pure_;

#define DEBOUNCE_NEVER UINT64_MAX

/*
 * Fires once per burst: @quiet_usec after the last event, but never later
 * than @max_usec after the first event of the burst (a steady trickle must
 * not postpone the re-plan forever). Pure: time comes from the caller.
 */
typedef struct Debouncer {
	uint64_t quiet_usec, max_usec;
	uint64_t first_usec, last_usec;
	unsigned pending;       /* events since the last fire */
} Debouncer;

void debouncer_init(Debouncer *d, uint64_t quiet_usec, uint64_t max_usec);
void debouncer_feed(Debouncer *d, uint64_t now_usec);
/* When the caller should ask again; DEBOUNCE_NEVER when idle. */
uint64_t debouncer_next(const Debouncer *d) _pure_;
/* True (once) when a burst is over; consumes it. */
bool debouncer_fire(Debouncer *d, uint64_t now_usec);
