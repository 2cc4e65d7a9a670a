/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel uevent listener for CPU hotplug and driver binds, and the
 * debouncer that turns a burst of them into one re-plan or IRQ pass. The parser and the debouncer are pure;
 * the listener is a thin loop. Depends on basic and netlink-util.
 */
#include <stdarg.h>
#include <linux/netlink.h>

#include "macro.h"
#include "netlink-util.h"
#include "strutil.h"
#include "uevents.h"

#define UEVENTS_BATCH 1024U
#define UEVENTS_RCVBUF (1024 * 1024)
/* The kernel's group for raw uevents; udevd re-broadcasts on 2. */
#define UEVENT_GROUP_KERNEL 1U

static const char *const uevent_action_table[_UEVENT_ACTION_MAX] = {
	[UEVENT_ADD] = "add",
	[UEVENT_REMOVE] = "remove",
	[UEVENT_CHANGE] = "change",
	[UEVENT_MOVE] = "move",
	[UEVENT_ONLINE] = "online",
	[UEVENT_OFFLINE] = "offline",
	[UEVENT_BIND] = "bind",
	[UEVENT_UNBIND] = "unbind",
};

DEFINE_STRING_TABLE_LOOKUP(uevent_action, UEventAction);

/* "/devices/system/cpu/cpuN" exactly, N a plain decimal. */
static int devpath_cpu(const char *devpath)
{
	const char *n = startswith(devpath, "/devices/system/cpu/cpu");
	unsigned v;

	if (!n || *n < '0' || *n > '9' || (n[0] == '0' && n[1]))
		return -1;
	if (safe_atou_base(n, 10, &v) < 0 || v > INT32_MAX)
		return -1;
	return (int)v;
}

int uevent_parse(const void *buf, size_t len, UEvent *ret)
{
	const char *s = buf, *end, *at, *action = NULL, *devpath = NULL;
	UEvent ev = { .cpu = -1 };
	size_t hlen;
	int a;

	if (!buf || len == 0)
		return -EBADMSG;
	end = s + len;
	/* Every string, the last included, must end inside the buffer. */
	if (end[-1] != '\0')
		return -EBADMSG;
	if (len >= 8 && memcmp(s, "libudev", 8) == 0)
		return -EBADMSG;

	hlen = strlen(s);
	at = memchr(s, '@', hlen);
	if (!at || at == s || at[1] != '/')
		return -EBADMSG;

	for (const char *k = s + hlen + 1; k < end; k += strlen(k) + 1) {
		const char *v;

		if ((v = startswith(k, "ACTION=")))
			action = v;
		else if ((v = startswith(k, "DEVPATH=")))
			devpath = v;
		else if ((v = startswith(k, "SUBSYSTEM=")))
			ev.subsystem = v;
		else if ((v = startswith(k, "SEQNUM="))) {
			long long q;

			if (safe_atolli(v, &q) < 0 || q < 0)
				return -EBADMSG;
			ev.seqnum = (uint64_t)q;
		}
	}
	if (!action || !devpath || !ev.subsystem || !*ev.subsystem)
		return -EBADMSG;
	/* The header is "ACTION@DEVPATH"; both halves must agree. */
	if ((size_t)(at - s) != strlen(action) || strncmp(s, action, (size_t)(at - s)) != 0)
		return -EBADMSG;
	if (!streq(at + 1, devpath))
		return -EBADMSG;
	a = uevent_action_from_string(action);
	if (a < 0)
		return -EBADMSG;

	ev.action = a;
	ev.devpath = devpath;
	if (streq(ev.subsystem, "cpu"))
		ev.cpu = devpath_cpu(devpath);
	*ret = ev;
	return 0;
}

bool uevent_is_driver_bind(const UEvent *ev)
{
	return ev->action == UEVENT_BIND && !streq(ev->subsystem, "cpu");
}

struct UEvents {
	int fd;
	UEventHandler handler;
	void *userdata;
	char *error;
	uint64_t forged, malformed, overruns;
	char buf[8192];
};

UEvents *uevents_free(UEvents *ue)
{
	if (!ue)
		return NULL;
	safe_close(ue->fd);
	free(ue->error);
	free(ue);
	return NULL;
}

int uevents_get_fd(const UEvents *ue)
{
	return ue->fd;
}

const char *uevents_error(const UEvents *ue)
{
	return ue->error;
}

static int ue_fail(UEvents *ue, int r, const char *msg)
{
	free(ue->error);
	ue->error = strprintf("kobject uevents: %s: %s", msg, strerror(-r));
	return r;
}

int uevents_new(UEventHandler handler, void *userdata, UEvents **ret, char **ret_error)
{
	_cleanup_(uevents_freep) UEvents *ue = NULL;
	_cleanup_free_ char *err = NULL;
	int r;

	ue = calloc(1, sizeof(*ue));
	if (!ue)
		return -ENOMEM;
	ue->fd = -EBADF;
	ue->handler = handler;
	ue->userdata = userdata;

	r = nlsock_open(NETLINK_KOBJECT_UEVENT, UEVENT_GROUP_KERNEL, UEVENTS_RCVBUF, NULL, &err);
	if (r < 0) {
		if (ret_error) {
			free(*ret_error);
			*ret_error = strprintf("kobject uevents: %s", strna(err));
		}
		return r;
	}
	ue->fd = r;

	*ret = TAKE_PTR(ue);
	return 0;
}

int uevents_process(UEvents *ue)
{
	bool overrun = false;
	int handled = 0;

	for (unsigned i = 0; i < UEVENTS_BATCH; i++) {
		UEvent ev;
		ssize_t n;
		int r;

		n = nlsock_recv(ue->fd, ue->buf, sizeof(ue->buf), &ue->forged);
		if (n == -EAGAIN)
			break;
		if (n == -ENOBUFS) {
			ue->overruns++;
			overrun = true;
			continue;
		}
		if (n == -EMSGSIZE) {
			ue->malformed++;
			continue;
		}
		if (n < 0)
			return ue_fail(ue, (int)n, "receive");

		if (uevent_parse(ue->buf, (size_t)n, &ev) < 0) {
			ue->malformed++;
			continue;
		}
		if (!streq(ev.subsystem, "cpu") && !uevent_is_driver_bind(&ev))
			continue;
		if (ue->handler) {
			r = ue->handler(ue, &ev, ue->userdata);
			if (r < 0)
				return r;
		}
		handled++;
	}

	if (overrun)
		return ue_fail(ue, -ENOBUFS, "receive queue overrun, events were lost");
	return handled;
}

void debouncer_init(Debouncer *d, uint64_t quiet_usec, uint64_t max_usec)
{
	*d = (Debouncer) {
		.quiet_usec = quiet_usec,
		.max_usec = MAX(max_usec, quiet_usec),
	};
}

void debouncer_feed(Debouncer *d, uint64_t now_usec)
{
	if (d->pending == 0)
		d->first_usec = d->last_usec = now_usec;
	d->last_usec = MAX(d->last_usec, now_usec);
	if (d->pending < UINT32_MAX)
		d->pending++;
}

uint64_t debouncer_next(const Debouncer *d)
{
	if (d->pending == 0)
		return DEBOUNCE_NEVER;
	return MIN(d->last_usec + d->quiet_usec, d->first_usec + d->max_usec);
}

bool debouncer_fire(Debouncer *d, uint64_t now_usec)
{
	if (d->pending == 0 || now_usec < debouncer_next(d))
		return false;
	d->pending = 0;
	return true;
}
