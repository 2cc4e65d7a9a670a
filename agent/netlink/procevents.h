/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Process events from the kernel's proc connector (NETLINK_CONNECTOR,
 * CN_IDX_PROC): exec and exit of every task on the machine.
 *
 * Event loop use (sd-event):
 *   procevents_new(on_event, userdata, &pe, &error);
 *   sd_event_add_io(event, &src, procevents_get_fd(pe), EPOLLIN, io_cb, m);
 *   io_cb: r = procevents_process(pe);   -- drains, calls on_event per event
 *          r == -ENOBUFS: events were lost -> rescan /proc once
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"

typedef enum ProcEventType {
	PROCEV_OTHER,        /* fork, uid, comm, ...: not ours; or another connector */
	PROCEV_ACK,          /* the kernel's answer to LISTEN; error in ack_error */
	PROCEV_EXEC,
	PROCEV_EXIT,
	_PROCEV_MAX,
	_PROCEV_INVALID = -EINVAL,
} ProcEventType;

typedef struct ProcEvent {
	ProcEventType type;
	pid_t pid;           /* the task (thread id) */
	pid_t tgid;          /* its process; exec: pid == tgid afterwards */
	uint32_t seq, ack;   /* cn_msg sequence/ack: matches an ACK to our LISTEN */
	int ack_error;       /* PROCEV_ACK: 0 or positive errno from the kernel */
	int exit_code;       /* PROCEV_EXIT: wait status as the kernel reports it */
} ProcEvent;

const char *proc_event_type_to_string(ProcEventType t) _const_;

/*
 * Parse one netlink message (struct nlmsghdr, struct cn_msg, struct
 * proc_event) of @len bytes. Every length field is checked against @len;
 * truncated or inconsistent messages give -EBADMSG and leave @ret alone.
 * Messages that are valid but not exec/exit/ack give PROCEV_OTHER.
 */
int procevent_parse(const void *buf, size_t len, ProcEvent *ret);

typedef struct ProcEvents ProcEvents;

/* Return <0 to stop the current procevents_process() with that error. */
typedef int (*ProcEventHandler)(ProcEvents *pe, const ProcEvent *ev, void *userdata);

/*
 * Open the connector, join CN_IDX_PROC, send PROC_CN_MCAST_LISTEN and wait
 * (at most 1 s) for the kernel's acknowledgement; then ask for exec and
 * exit only (kernels >= 6.6 filter before queueing; older ones ignore it). Only PROCEV_EXEC and
 * PROCEV_EXIT reach @handler. Errors: -EPERM without CAP_NET_ADMIN (old
 * kernels refuse the membership or the LISTEN), -ETIMEDOUT when no ack
 * came (not in the initial PID/user namespace); @ret_error (optional)
 * receives a sentence saying which step failed and why. Events that
 * arrive before the ack are not delivered: scan /proc after this call.
 */
int procevents_new(ProcEventHandler handler, void *userdata, ProcEvents **ret, char **ret_error);
ProcEvents *procevents_free(ProcEvents *pe);
DEFINE_TRIVIAL_CLEANUP_FUNC(ProcEvents *, procevents_free);

int procevents_get_fd(const ProcEvents *pe) _pure_;

/*
 * Read everything pending (at most a few thousand datagrams per call, so
 * a flood cannot starve the event loop; the fd stays readable) and call
 * the handler for each exec/exit. Returns the number of events handled,
 * -ENOBUFS once if the kernel dropped events since the last call (all
 * that was still queued has been handled: rescan now), or another -errno
 * from the socket or the handler.
 */
int procevents_process(ProcEvents *pe);

/* The last failure in words, or NULL. */
const char *procevents_error(const ProcEvents *pe) _pure_;

typedef struct ProcEventsStats {
	uint64_t datagrams, exec, exit;
	uint64_t other;        /* fork, comm, ...: stays 0 when the kernel filters */
	uint64_t malformed, overruns, forged;
} ProcEventsStats;
void procevents_get_stats(const ProcEvents *pe, ProcEventsStats *ret);
