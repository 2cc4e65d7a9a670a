/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The netlink parsers against recorded messages, built here from the
 * kernel's own structs (nlmsghdr + cn_msg + proc_event, "ACTION@DEVPATH"
 * uevents), including truncated and malformed ones; and the hotplug
 * debouncer's timelines. Every parse runs on a heap copy of exactly the
 * message's length at an odd address, so ASan catches any over-read and
 * UBSan any misaligned access. And the shared plumbing without privileges:
 * nlsock_recv() on a socket pair, and nlsock_open(), nlsock_send() and
 * nlsock_recv() on NETLINK_ROUTE (the kernel's answer kept, a user-space
 * sender's dropped).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "netlink-util.h"
#include "procevents.h"
#include "test.h"
#include "uevents.h"

/* ---- proc connector ---- */

typedef struct ProcMsg {
	uint16_t nl_type;        /* 0: NLMSG_DONE */
	uint32_t idx, val;       /* 0: CN_IDX_PROC / CN_VAL_PROC */
	uint32_t what;
	int pid, tgid;
	uint32_t ack_err;
	int nlerr;               /* NLMSG_ERROR payload */
	int cn_len;              /* -1: sizeof(struct proc_event); else as given */
	int nl_len_delta;        /* added to the true nlmsg_len */
	int cut;                 /* bytes removed from the end of the datagram */
} ProcMsg;

/* Lay out one message as the kernel sends it; returns its length. */
static size_t build_proc(const ProcMsg *m, uint8_t *buf, size_t size)
{
	struct nlmsghdr nh = {};
	size_t len;

	memset(buf, 0, size);
	if (m->nl_type == NLMSG_ERROR) {
		struct nlmsgerr e = { .error = m->nlerr };

		memcpy(buf + NLMSG_HDRLEN, &e, sizeof(e));
		len = NLMSG_HDRLEN + sizeof(e);
	} else {
		struct cn_msg cn = {
			.id = { .idx = m->idx ?: CN_IDX_PROC, .val = m->val ?: CN_VAL_PROC },
			.seq = 7,
			.ack = 1,
		};
		struct proc_event ev = { .what = m->what, .cpu = 1, .timestamp_ns = 123456789 };

		switch (m->what) {
		case PROC_EVENT_NONE:
			ev.event_data.ack.err = m->ack_err;
			break;
		case PROC_EVENT_EXEC:
			ev.event_data.exec.process_pid = m->pid;
			ev.event_data.exec.process_tgid = m->tgid;
			break;
		case PROC_EVENT_EXIT:
			ev.event_data.exit.process_pid = m->pid;
			ev.event_data.exit.process_tgid = m->tgid;
			ev.event_data.exit.exit_code = 256;
			break;
		case PROC_EVENT_FORK:
			ev.event_data.fork.parent_pid = 1;
			ev.event_data.fork.child_pid = m->pid;
			break;
		}
		cn.len = m->cn_len < 0 ? sizeof(ev) : (uint16_t)m->cn_len;
		memcpy(buf + NLMSG_HDRLEN, &cn, sizeof(cn));
		memcpy(buf + NLMSG_HDRLEN + sizeof(cn), &ev, sizeof(ev));
		len = NLMSG_HDRLEN + sizeof(cn) + MIN((size_t)cn.len, sizeof(ev));
	}
	nh.nlmsg_len = (uint32_t)((int)len + m->nl_len_delta);
	nh.nlmsg_type = m->nl_type ?: NLMSG_DONE;
	memcpy(buf, &nh, sizeof(nh));
	return len - (size_t)m->cut;
}

/* Parse from an exact-size heap copy at an odd address. */
static int parse_exact(const void *msg, size_t len, ProcEvent *ev)
{
	uint8_t *mem = malloc(len + 1);
	int r;

	memcpy(mem + 1, msg, len);
	r = procevent_parse(mem + 1, len, ev);
	free(mem);
	return r;
}

#define EV_HDR ((int)offsetof(struct proc_event, event_data))

static const struct {
	const char *name;
	ProcMsg msg;
	int ret;
	ProcEventType type;
	int pid, tgid, ack_error;
} proc_cases[] = {
	{ "exec", { .what = PROC_EVENT_EXEC, .pid = 4242, .tgid = 4242, .cn_len = -1 },
	  0, PROCEV_EXEC, 4242, 4242, 0 },
	{ "exec by a thread", { .what = PROC_EVENT_EXEC, .pid = 4243, .tgid = 4242, .cn_len = -1 },
	  0, PROCEV_EXEC, 4243, 4242, 0 },
	{ "exit", { .what = PROC_EVENT_EXIT, .pid = 77, .tgid = 77, .cn_len = -1 },
	  0, PROCEV_EXIT, 77, 77, 0 },
	{ "exit, old kernel without parent fields",
	  { .what = PROC_EVENT_EXIT, .pid = 77, .tgid = 77, .cn_len = EV_HDR + 12 },
	  0, PROCEV_EXIT, 77, 77, 0 },
	{ "fork is not ours", { .what = PROC_EVENT_FORK, .pid = 5, .tgid = 5, .cn_len = -1 },
	  0, PROCEV_OTHER, 0, 0, 0 },
	{ "comm is not ours", { .what = PROC_EVENT_COMM, .cn_len = -1 },
	  0, PROCEV_OTHER, 0, 0, 0 },
	{ "ack ok", { .what = PROC_EVENT_NONE, .cn_len = -1 }, 0, PROCEV_ACK, 0, 0, 0 },
	{ "ack EPERM", { .what = PROC_EVENT_NONE, .ack_err = EPERM, .cn_len = -1 },
	  0, PROCEV_ACK, 0, 0, EPERM },
	{ "another connector", { .idx = CN_IDX_PROC + 1, .what = PROC_EVENT_EXEC, .pid = 1, .tgid = 1, .cn_len = -1 },
	  0, PROCEV_OTHER, 0, 0, 0 },
	{ "NLMSG_NOOP", { .nl_type = NLMSG_NOOP, .what = PROC_EVENT_EXEC, .pid = 1, .tgid = 1, .cn_len = -1 },
	  0, PROCEV_OTHER, 0, 0, 0 },
	{ "NLMSG_ERROR EPERM", { .nl_type = NLMSG_ERROR, .nlerr = -EPERM }, 0, PROCEV_ACK, 0, 0, EPERM },
	{ "nlmsg_len shorter than cn_msg.len says",
	  { .what = PROC_EVENT_EXEC, .pid = 9, .tgid = 9, .cn_len = -1, .nl_len_delta = -4, .cut = 0 },
	  -EBADMSG, 0, 0, 0, 0 },

	/* malformed */
	{ "datagram shorter than nlmsghdr", { .what = PROC_EVENT_EXEC, .pid = 1, .tgid = 1, .cn_len = -1, .cut = 60 },
	  -EBADMSG, 0, 0, 0, 0 },
	{ "nlmsg_len beyond the datagram", { .what = PROC_EVENT_EXEC, .pid = 1, .tgid = 1, .cn_len = -1, .nl_len_delta = 8 },
	  -EBADMSG, 0, 0, 0, 0 },
	{ "nlmsg_len below the header", { .what = PROC_EVENT_EXEC, .pid = 1, .tgid = 1, .cn_len = -1, .nl_len_delta = -70 },
	  -EBADMSG, 0, 0, 0, 0 },
	{ "cn_msg cut", { .what = PROC_EVENT_EXEC, .pid = 1, .tgid = 1, .cn_len = -1, .nl_len_delta = -50, .cut = 50 },
	  -EBADMSG, 0, 0, 0, 0 },
	{ "cn_msg.len beyond the message", { .what = PROC_EVENT_EXEC, .pid = 1, .tgid = 1, .cn_len = 200 },
	  -EBADMSG, 0, 0, 0, 0 },
	{ "proc_event header cut", { .what = PROC_EVENT_EXEC, .pid = 1, .tgid = 1, .cn_len = 8 },
	  -EBADMSG, 0, 0, 0, 0 },
	{ "exec without tgid", { .what = PROC_EVENT_EXEC, .pid = 1, .tgid = 1, .cn_len = EV_HDR + 4 },
	  -EBADMSG, 0, 0, 0, 0 },
	{ "exit without exit_code", { .what = PROC_EVENT_EXIT, .pid = 1, .tgid = 1, .cn_len = EV_HDR + 8 },
	  -EBADMSG, 0, 0, 0, 0 },
	{ "ack without err", { .what = PROC_EVENT_NONE, .cn_len = EV_HDR },
	  -EBADMSG, 0, 0, 0, 0 },
	{ "exec of pid 0", { .what = PROC_EVENT_EXEC, .pid = 0, .tgid = 0, .cn_len = -1 },
	  -EBADMSG, 0, 0, 0, 0 },
	{ "exit of a negative pid", { .what = PROC_EVENT_EXIT, .pid = -3, .tgid = -3, .cn_len = -1 },
	  -EBADMSG, 0, 0, 0, 0 },
	{ "NLMSG_ERROR cut", { .nl_type = NLMSG_ERROR, .nlerr = -EPERM, .nl_len_delta = -8, .cut = 8 },
	  -EBADMSG, 0, 0, 0, 0 },
};

static void test_proc_table(void)
{
	for (size_t i = 0; i < ELEMENTSOF(proc_cases); i++) {
		uint8_t buf[256];
		size_t len = build_proc(&proc_cases[i].msg, buf, sizeof(buf));
		ProcEvent ev = { .type = _PROCEV_INVALID, .pid = -99 };
		int r = parse_exact(buf, len, &ev);

		check_ctx(proc_cases[i].name, r == proc_cases[i].ret);
		if (r != proc_cases[i].ret)
			fprintf(stderr, "  [%s] got %d, want %d\n", proc_cases[i].name, r, proc_cases[i].ret);
		if (r < 0) {
			/* @ret is untouched on failure. */
			check_ctx(proc_cases[i].name, ev.type == _PROCEV_INVALID && ev.pid == -99);
			continue;
		}
		check_ctx(proc_cases[i].name, ev.type == proc_cases[i].type);
		if (ev.type == PROCEV_EXEC || ev.type == PROCEV_EXIT) {
			check_ctx(proc_cases[i].name, ev.pid == proc_cases[i].pid);
			check_ctx(proc_cases[i].name, ev.tgid == proc_cases[i].tgid);
		}
		if (ev.type == PROCEV_ACK)
			check_ctx(proc_cases[i].name, ev.ack_error == proc_cases[i].ack_error);
	}
}

/* Every prefix of a valid message is rejected, never over-read. */
static void test_proc_truncation(void)
{
	static const ProcMsg msgs[] = {
		{ .what = PROC_EVENT_EXEC, .pid = 10, .tgid = 10, .cn_len = -1 },
		{ .what = PROC_EVENT_EXIT, .pid = 10, .tgid = 10, .cn_len = -1 },
		{ .what = PROC_EVENT_NONE, .cn_len = -1 },
		{ .nl_type = NLMSG_ERROR, .nlerr = -EPERM },
	};

	for (size_t i = 0; i < ELEMENTSOF(msgs); i++) {
		uint8_t buf[256];
		size_t len = build_proc(&msgs[i], buf, sizeof(buf));
		ProcEvent ev;
		unsigned bad = 0;

		check(parse_exact(buf, len, &ev) == 0);
		for (size_t k = 0; k < len; k++)
			if (parse_exact(buf, k, &ev) != -EBADMSG)
				bad++;
		check_int(bad, 0);

		/* Consistent headers that claim a shorter message: the
		 * length fields shrink together with the bytes. */
		for (size_t k = NLMSG_HDRLEN; k < len; k++) {
			struct nlmsghdr nh;
			int r;

			memcpy(&nh, buf, sizeof(nh));
			nh.nlmsg_len = (uint32_t)k;
			memcpy(buf, &nh, sizeof(nh));
			r = parse_exact(buf, k, &ev);
			if (r != -EBADMSG && !(r == 0 && msgs[i].nl_type == 0 &&
					       k >= NLMSG_HDRLEN + sizeof(struct cn_msg) + (size_t)EV_HDR + 12))
				bad++;
		}
		check_int(bad, 0);
	}
	check(procevent_parse(NULL, 100, &(ProcEvent) {}) == -EBADMSG);
}

/* ---- uevents ---- */

#define P(s) s, sizeof(s) - 1

static const struct {
	const char *name;
	const char *buf;
	size_t len;
	int ret;
	UEventAction action;
	const char *devpath, *subsystem;
	int cpu;
	uint64_t seqnum;
	bool bind;   /* uevent_is_driver_bind(): an IRQ pass follows */
} uevent_cases[] = {
	{ "cpu online",
	  P("online@/devices/system/cpu/cpu3\0ACTION=online\0DEVPATH=/devices/system/cpu/cpu3\0"
	    "SUBSYSTEM=cpu\0SEQNUM=4711\0"),
	  0, UEVENT_ONLINE, "/devices/system/cpu/cpu3", "cpu", 3, 4711 },
	{ "cpu offline, keys in another order",
	  P("offline@/devices/system/cpu/cpu127\0SEQNUM=12\0SUBSYSTEM=cpu\0DEVPATH=/devices/system/cpu/cpu127\0"
	    "ACTION=offline\0"),
	  0, UEVENT_OFFLINE, "/devices/system/cpu/cpu127", "cpu", 127, 12 },
	{ "cpu add",
	  P("add@/devices/system/cpu/cpu0\0ACTION=add\0DEVPATH=/devices/system/cpu/cpu0\0SUBSYSTEM=cpu\0"),
	  0, UEVENT_ADD, "/devices/system/cpu/cpu0", "cpu", 0, 0 },
	{ "cpu remove with extra keys",
	  P("remove@/devices/system/cpu/cpu8\0ACTION=remove\0DEVPATH=/devices/system/cpu/cpu8\0"
	    "SUBSYSTEM=cpu\0MODALIAS=cpu:type:x86\0SEQNUM=99\0"),
	  0, UEVENT_REMOVE, "/devices/system/cpu/cpu8", "cpu", 8, 99 },
	{ "cpu subsystem, not a cpuN device",
	  P("change@/devices/system/cpu\0ACTION=change\0DEVPATH=/devices/system/cpu\0SUBSYSTEM=cpu\0"),
	  0, UEVENT_CHANGE, "/devices/system/cpu", "cpu", -1, 0 },
	{ "cpu03 is not a cpu number",
	  P("online@/devices/system/cpu/cpu03\0ACTION=online\0DEVPATH=/devices/system/cpu/cpu03\0SUBSYSTEM=cpu\0"),
	  0, UEVENT_ONLINE, "/devices/system/cpu/cpu03", "cpu", -1, 0 },
	{ "cpu3/cache is not a cpu",
	  P("add@/devices/system/cpu/cpu3/cache\0ACTION=add\0DEVPATH=/devices/system/cpu/cpu3/cache\0SUBSYSTEM=cpu\0"),
	  0, UEVENT_ADD, "/devices/system/cpu/cpu3/cache", "cpu", -1, 0 },
	{ "another subsystem",
	  P("add@/devices/virtual/net/veth0\0ACTION=add\0DEVPATH=/devices/virtual/net/veth0\0SUBSYSTEM=net\0"),
	  0, UEVENT_ADD, "/devices/virtual/net/veth0", "net", -1, 0 },
	{ "virtio_net bound to a hot-added device",
	  P("bind@/devices/pci0000:00/0000:00:05.0/virtio2\0ACTION=bind\0DEVPATH=/devices/pci0000:00/0000:00:05.0/virtio2\0"
	    "SUBSYSTEM=virtio\0DRIVER=virtio_net\0MODALIAS=virtio:d00000001v00001AF4\0SEQNUM=2211\0"),
	  0, UEVENT_BIND, "/devices/pci0000:00/0000:00:05.0/virtio2", "virtio", -1, 2211, true },
	{ "a PCI driver bound",
	  P("bind@/devices/pci0000:00/0000:00:05.0\0ACTION=bind\0DEVPATH=/devices/pci0000:00/0000:00:05.0\0"
	    "SUBSYSTEM=pci\0DRIVER=virtio-pci\0"),
	  0, UEVENT_BIND, "/devices/pci0000:00/0000:00:05.0", "pci", -1, 0, true },
	{ "a driver unbound: no IRQ to move",
	  P("unbind@/devices/pci0000:00/0000:00:05.0\0ACTION=unbind\0DEVPATH=/devices/pci0000:00/0000:00:05.0\0"
	    "SUBSYSTEM=pci\0"),
	  0, UEVENT_UNBIND, "/devices/pci0000:00/0000:00:05.0", "pci", -1, 0, false },
	{ "a cpu's driver bound: hotplug's",
	  P("bind@/devices/system/cpu/cpu3\0ACTION=bind\0DEVPATH=/devices/system/cpu/cpu3\0SUBSYSTEM=cpu\0"
	    "DRIVER=processor\0"),
	  0, UEVENT_BIND, "/devices/system/cpu/cpu3", "cpu", 3, 0, false },

	/* malformed */
	{ "empty", "", 0, -EBADMSG },
	{ "last string not terminated",
	  "online@/devices/system/cpu/cpu3\0ACTION=online\0DEVPATH=/devices/system/cpu/cpu3\0SUBSYSTEM=cpu",
	  sizeof("online@/devices/system/cpu/cpu3\0ACTION=online\0DEVPATH=/devices/system/cpu/cpu3\0SUBSYSTEM=cpu") - 1,
	  -EBADMSG },
	{ "no @ in the header",
	  P("online/devices/system/cpu/cpu3\0ACTION=online\0DEVPATH=/devices/system/cpu/cpu3\0SUBSYSTEM=cpu\0"),
	  -EBADMSG },
	{ "empty action in the header",
	  P("@/devices/system/cpu/cpu3\0ACTION=online\0DEVPATH=/devices/system/cpu/cpu3\0SUBSYSTEM=cpu\0"),
	  -EBADMSG },
	{ "header action disagrees",
	  P("offline@/devices/system/cpu/cpu3\0ACTION=online\0DEVPATH=/devices/system/cpu/cpu3\0SUBSYSTEM=cpu\0"),
	  -EBADMSG },
	{ "header devpath disagrees",
	  P("online@/devices/system/cpu/cpu4\0ACTION=online\0DEVPATH=/devices/system/cpu/cpu3\0SUBSYSTEM=cpu\0"),
	  -EBADMSG },
	{ "no SUBSYSTEM",
	  P("online@/devices/system/cpu/cpu3\0ACTION=online\0DEVPATH=/devices/system/cpu/cpu3\0"),
	  -EBADMSG },
	{ "empty SUBSYSTEM",
	  P("online@/devices/system/cpu/cpu3\0ACTION=online\0DEVPATH=/devices/system/cpu/cpu3\0SUBSYSTEM=\0"),
	  -EBADMSG },
	{ "no ACTION key",
	  P("online@/devices/system/cpu/cpu3\0DEVPATH=/devices/system/cpu/cpu3\0SUBSYSTEM=cpu\0"),
	  -EBADMSG },
	{ "unknown action",
	  P("frob@/devices/system/cpu/cpu3\0ACTION=frob\0DEVPATH=/devices/system/cpu/cpu3\0SUBSYSTEM=cpu\0"),
	  -EBADMSG },
	{ "bad SEQNUM",
	  P("online@/devices/system/cpu/cpu3\0ACTION=online\0DEVPATH=/devices/system/cpu/cpu3\0SUBSYSTEM=cpu\0SEQNUM=12x\0"),
	  -EBADMSG },
	{ "udevd's re-broadcast",
	  P("libudev\0\xfe\xed\xca\xfe\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"), -EBADMSG },
	{ "header only", P("online@/devices/system/cpu/cpu3\0"), -EBADMSG },
};

static int uevent_parse_exact(const char *msg, size_t len, UEvent *ev)
{
	char *mem = malloc(len + 1);
	int r;

	memcpy(mem + 1, msg, len);
	r = uevent_parse(len ? mem + 1 : NULL, len, ev);
	free(mem);
	return r;
}

static void test_uevent_table(void)
{
	for (size_t i = 0; i < ELEMENTSOF(uevent_cases); i++) {
		const char *name = uevent_cases[i].name;
		char *mem = malloc(uevent_cases[i].len + 1);
		UEvent ev = { .cpu = -99 };
		int r;

		/* Parsed in place: the strings point into the buffer. */
		memcpy(mem, uevent_cases[i].buf, uevent_cases[i].len);
		r = uevent_parse(uevent_cases[i].len ? mem : NULL, uevent_cases[i].len, &ev);
		check_ctx(name, r == uevent_cases[i].ret);
		if (r != uevent_cases[i].ret)
			fprintf(stderr, "  [%s] got %d, want %d\n", name, r, uevent_cases[i].ret);
		if (r < 0 || uevent_cases[i].ret < 0) {
			check_ctx(name, ev.cpu == -99);
			free(mem);
			continue;
		}
		check_ctx(name, ev.action == uevent_cases[i].action);
		check_str(ev.devpath, uevent_cases[i].devpath);
		check_str(ev.subsystem, uevent_cases[i].subsystem);
		check_ctx(name, ev.cpu == uevent_cases[i].cpu);
		check_ctx(name, ev.seqnum == uevent_cases[i].seqnum);
		check_ctx(name, uevent_is_driver_bind(&ev) == uevent_cases[i].bind);
		free(mem);
	}
}

static void test_uevent_truncation(void)
{
	static const char msg[] =
		"offline@/devices/system/cpu/cpu5\0ACTION=offline\0DEVPATH=/devices/system/cpu/cpu5\0"
		"SUBSYSTEM=cpu\0SEQNUM=3\0";
	size_t len = sizeof(msg) - 1;
	unsigned bad = 0;
	UEvent ev;

	check(uevent_parse_exact(msg, len, &ev) == 0);
	for (size_t k = 0; k < len; k++) {
		int r = uevent_parse_exact(msg, k, &ev);

		/* A cut at a string boundary may still be complete (only
		 * SEQNUM missing); anywhere else it must be refused. */
		if (k > 0 && msg[k - 1] == '\0' && r == 0)
			continue;
		if (r != -EBADMSG)
			bad++;
	}
	check_int(bad, 0);
	check_str(uevent_action_to_string(UEVENT_OFFLINE), "offline");
	check_int(uevent_action_from_string("online"), UEVENT_ONLINE);
	check_int(uevent_action_from_string("Online"), -EINVAL);
}

/* ---- debouncer ---- */

#define MSEC 1000ULL

/* Step a 1 ms clock over @events (ms), count fires and note the first. */
static unsigned simulate(const uint64_t *events, size_t n, uint64_t until_ms, uint64_t *first_fire_ms)
{
	Debouncer d;
	unsigned fires = 0;
	size_t e = 0;

	debouncer_init(&d, 100 * MSEC, 1000 * MSEC);
	*first_fire_ms = UINT64_MAX;
	for (uint64_t t = 0; t <= until_ms; t++) {
		while (e < n && events[e] == t) {
			debouncer_feed(&d, t * MSEC);
			e++;
		}
		if (debouncer_fire(&d, t * MSEC)) {
			if (fires++ == 0)
				*first_fire_ms = t;
		}
	}
	return fires;
}

static void test_debouncer(void)
{
	uint64_t ev[4096], first;
	Debouncer d;
	size_t n;

	debouncer_init(&d, 100 * MSEC, 1000 * MSEC);
	check(debouncer_next(&d) == DEBOUNCE_NEVER);
	check(!debouncer_fire(&d, 0));
	debouncer_feed(&d, 5 * MSEC);
	check_int(debouncer_next(&d), 105 * MSEC);
	check(!debouncer_fire(&d, 104 * MSEC));
	check(debouncer_fire(&d, 105 * MSEC));
	check(!debouncer_fire(&d, 106 * MSEC));
	check(debouncer_next(&d) == DEBOUNCE_NEVER);

	/* 64 CPUs offlined 1 ms apart: one re-plan, 100 ms after the last. */
	for (n = 0; n < 64; n++)
		ev[n] = 10 + n;
	check_int(simulate(ev, n, 3000, &first), 1);
	check_int(first, 10 + 63 + 100);

	/* A trickle every 50 ms for 5 s: re-plans at most once a second. */
	for (n = 0; n < 100; n++)
		ev[n] = n * 50;
	check_int(simulate(ev, n, 6000, &first), 5);
	check_int(first, 1000);

	/* Two bursts far apart: two re-plans. */
	for (n = 0; n < 20; n++)
		ev[n] = n < 10 ? n : 2000 + n;
	check_int(simulate(ev, n, 4000, &first), 2);
	check_int(first, 9 + 100);

	/* Nothing happens: nothing fires. */
	check_int(simulate(ev, 0, 4000, &first), 0);
}

/* ---- netlink-util ---- */

/* A kernel datagram: NETLINK_ROUTE acknowledges an NLMSG_NOOP request. */
static bool send_noop_with_ack(int fd)
{
	struct nlmsghdr nh = {
		.nlmsg_len = NLMSG_HDRLEN,
		.nlmsg_type = NLMSG_NOOP,
		.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
		.nlmsg_seq = 42,
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	return sendto(fd, &nh, sizeof(nh), 0, (struct sockaddr *)&kernel, sizeof(kernel)) == sizeof(nh);
}

static void test_nlsock_recv_pair(void)
{
	int sv[2];
	uint8_t buf[64];
	uint64_t dropped = 0;

	check(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) == 0);
	check_int(nlsock_recv(sv[0], buf, sizeof(buf), &dropped), -EAGAIN);

	/* Not from a netlink address (no port 0): dropped and counted. */
	check(send(sv[1], "forged", 6, 0) == 6);
	check(send(sv[1], "forged", 6, 0) == 6);
	check_int(nlsock_recv(sv[0], buf, sizeof(buf), &dropped), -EAGAIN);
	check_int(dropped, 2);
	check(send(sv[1], "forged", 6, 0) == 6);
	check_int(nlsock_recv(sv[0], buf, sizeof(buf), NULL), -EAGAIN);

	/* Larger than the buffer: -EMSGSIZE, and the datagram is gone. */
	memset(buf, 'x', sizeof(buf));
	check(send(sv[1], buf, sizeof(buf), 0) == (ssize_t)sizeof(buf));
	check_int(nlsock_recv(sv[0], buf, 16, &dropped), -EMSGSIZE);
	check_int(nlsock_recv(sv[0], buf, sizeof(buf), &dropped), -EAGAIN);
	check_int(dropped, 2);

	close(sv[0]);
	close(sv[1]);
	check_int(nlsock_recv(sv[0], buf, sizeof(buf), &dropped), -EBADF);
}

static void test_nlsock_kernel(void)
{
	_cleanup_free_ char *error = NULL;
	_cleanup_close_ int fd = -EBADF, peer = -EBADF;
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	struct ifinfomsg lo = { .ifi_family = AF_UNSPEC, .ifi_index = 1 };
	socklen_t len = sizeof(to);
	uint32_t port = 0, port2 = 0;
	uint64_t dropped = 0;
	uint8_t buf[4096] __attribute__((aligned(8)));
	struct nlmsghdr nh;
	struct nlmsgerr e;
	int r;

	fd = nlsock_open(NETLINK_ROUTE, 0, 65536, &port, &error);
	if (fd < 0) {
		/* A sandbox without netlink: nothing of the kernel's to receive. */
		fprintf(stderr, "netlink: NETLINK_ROUTE unavailable (%s), kernel datagrams not tested\n", strna(error));
		return;
	}
	check(error == NULL);
	check(fcntl(fd, F_GETFL) & O_NONBLOCK);
	check(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	/* The port the kernel chose, as getsockname() sees it. */
	check(getsockname(fd, (struct sockaddr *)&to, &len) == 0);
	check(port != 0);
	check_int(to.nl_pid, port);
	check_int(nlsock_recv(fd, buf, sizeof(buf), &dropped), -EAGAIN);

	/* The kernel's acknowledgement: kept, whole. */
	check(send_noop_with_ack(fd));
	r = (int)nlsock_recv(fd, buf, sizeof(buf), &dropped);
	check_int(r, NLMSG_HDRLEN + sizeof(struct nlmsgerr));
	memcpy(&nh, buf, sizeof(nh));
	memcpy(&e, buf + NLMSG_HDRLEN, sizeof(e));
	check_int(nh.nlmsg_type, NLMSG_ERROR);
	check_int(nh.nlmsg_seq, 42);
	check_int(e.error, 0);
	check_int(dropped, 0);

	/* Too small a buffer for it: -EMSGSIZE. */
	check(send_noop_with_ack(fd));
	check_int(nlsock_recv(fd, buf, 8, &dropped), -EMSGSIZE);

	/* nlsock_send() frames a request the kernel understands: link 1 (lo,
	 * in every network namespace) comes back as RTM_NEWLINK. */
	check_int(nlsock_send(fd, RTM_GETLINK, &lo, sizeof(lo)), 0);
	r = (int)nlsock_recv(fd, buf, sizeof(buf), &dropped);
	check(r >= (int)NLMSG_LENGTH(sizeof(lo)));
	if (r >= (int)NLMSG_LENGTH(sizeof(lo))) {
		struct ifinfomsg got;

		memcpy(&nh, buf, sizeof(nh));
		memcpy(&got, buf + NLMSG_HDRLEN, sizeof(got));
		check_int(nh.nlmsg_type, RTM_NEWLINK);
		check_int(got.ifi_index, 1);
	}
	/* A header the kernel refuses (shorter than struct ifinfomsg): an
	 * error, so the length nlsock_send() writes is the one it reads. */
	check_int(nlsock_send(fd, RTM_GETLINK, &lo, 2), 0);
	r = (int)nlsock_recv(fd, buf, sizeof(buf), &dropped);
	check(r >= (int)(NLMSG_HDRLEN + sizeof(struct nlmsgerr)));
	memcpy(&nh, buf, sizeof(nh));
	memcpy(&e, buf + NLMSG_HDRLEN, sizeof(e));
	check_int(nh.nlmsg_type, NLMSG_ERROR);
	check(e.error < 0);
	check_int(e.msg.nlmsg_len, NLMSG_HDRLEN + 2);
	check_int(dropped, 0);
	fd = safe_close(fd);

	/* A user-space port speaking to us (NETLINK_USERSOCK lets anyone send): dropped, counted. */
	fd = nlsock_open(NETLINK_USERSOCK, 0, 0, &port, NULL);
	peer = nlsock_open(NETLINK_USERSOCK, 0, 0, &port2, NULL);
	if (fd >= 0 && peer >= 0) {
		check(port != port2);
		to = (struct sockaddr_nl){ .nl_family = AF_NETLINK, .nl_pid = port };
		check(sendto(peer, "forged", 6, 0, (struct sockaddr *)&to, sizeof(to)) == 6);
		check_int(nlsock_recv(fd, buf, sizeof(buf), &dropped), -EAGAIN);
		check_int(dropped, 1);
	}
	fd = safe_close(fd);

	/* A protocol the kernel does not have: the step and the reason in words. */
	free(error);
	error = NULL;
	r = nlsock_open(MAX_LINKS - 1, 0, 0, NULL, &error);
	check(r < 0);
	check(error && startswith(error, "netlink protocol 31 group 0: socket: "));
}

int main(void)
{
	test_proc_table();
	test_proc_truncation();
	test_uevent_table();
	test_uevent_truncation();
	test_debouncer();
	test_nlsock_recv_pair();
	test_nlsock_kernel();
	return test_end("netlink");
}
