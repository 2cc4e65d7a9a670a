/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Proc connector listener: exec/exit events for workload rules. The parser
 * is pure (bytes in, ProcEvent out) so that recorded and damaged messages
 * can be tested without a kernel; the listener is a thin loop around it.
 * Depends on basic, netlink-util and the kernel's uapi headers.
 */
#include <poll.h>
#include <stdarg.h>
#include <time.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "macro.h"
#include "netlink-util.h"
#include "procevents.h"
#include "strutil.h"

/* Datagrams handled per procevents_process() call before yielding. */
#define PROCEVENTS_BATCH 4096U
#define PROCEVENTS_RCVBUF (4 * 1024 * 1024)
#define PROCEVENTS_ACK_TIMEOUT_MSEC 1000

static const char *const proc_event_type_table[_PROCEV_MAX] = {
	[PROCEV_OTHER] = "other",
	[PROCEV_ACK] = "ack",
	[PROCEV_EXEC] = "exec",
	[PROCEV_EXIT] = "exit",
};

const char *proc_event_type_to_string(ProcEventType t)
{
	if (t < 0 || (size_t)t >= ELEMENTSOF(proc_event_type_table))
		return NULL;
	return proc_event_type_table[t];
}

int procevent_parse(const void *buf, size_t len, ProcEvent *ret)
{
	const size_t ev_hdr = offsetof(struct proc_event, event_data);
	const uint8_t *p = buf;
	struct nlmsghdr nh;
	struct cn_msg cn;
	struct proc_event pe = {};
	ProcEvent ev = { .type = PROCEV_OTHER };
	size_t plen;

	/* memcpy() rather than casts: the buffer need not be aligned. */
	if (!buf || len < NLMSG_HDRLEN)
		return -EBADMSG;
	memcpy(&nh, p, sizeof(nh));
	if (nh.nlmsg_len < NLMSG_HDRLEN || nh.nlmsg_len > len)
		return -EBADMSG;
	plen = nh.nlmsg_len - NLMSG_HDRLEN;
	p += NLMSG_HDRLEN;

	if (nh.nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr err;

		if (plen < sizeof(err))
			return -EBADMSG;
		memcpy(&err, p, sizeof(err));
		ev.type = PROCEV_ACK;
		ev.ack_error = err.error < 0 ? -err.error : err.error;
		ev.seq = nh.nlmsg_seq;
		*ret = ev;
		return 0;
	}
	/* The connector sends its messages as NLMSG_DONE; anything else
	 * (NOOP, OVERRUN, a stray type) carries no cn_msg. */
	if (nh.nlmsg_type != NLMSG_DONE) {
		*ret = ev;
		return 0;
	}

	if (plen < sizeof(cn))
		return -EBADMSG;
	memcpy(&cn, p, sizeof(cn));
	if (cn.len > plen - sizeof(cn))
		return -EBADMSG;
	if (cn.id.idx != CN_IDX_PROC || cn.id.val != CN_VAL_PROC) {
		*ret = ev;
		return 0;
	}
	p += sizeof(cn);
	ev.seq = cn.seq;
	ev.ack = cn.ack;

	if (cn.len < ev_hdr)
		return -EBADMSG;
	memcpy(&pe, p, MIN((size_t)cn.len, sizeof(pe)));

	switch (pe.what) {
	case PROC_EVENT_NONE:
		if (cn.len < ev_hdr + sizeof(pe.event_data.ack))
			return -EBADMSG;
		ev.type = PROCEV_ACK;
		ev.ack_error = (int)pe.event_data.ack.err;
		break;
	case PROC_EVENT_EXEC:
		if (cn.len < ev_hdr + sizeof(pe.event_data.exec))
			return -EBADMSG;
		ev.type = PROCEV_EXEC;
		ev.pid = pe.event_data.exec.process_pid;
		ev.tgid = pe.event_data.exec.process_tgid;
		break;
	case PROC_EVENT_EXIT:
		/* pid, tgid and exit_code are as old as the connector; the
		 * fields after them were added later. */
		if (cn.len < ev_hdr + offsetof(struct exit_proc_event, exit_signal))
			return -EBADMSG;
		ev.type = PROCEV_EXIT;
		ev.pid = pe.event_data.exit.process_pid;
		ev.tgid = pe.event_data.exit.process_tgid;
		ev.exit_code = (int)pe.event_data.exit.exit_code;
		break;
	default:
		break;
	}
	if (ev.type == PROCEV_EXEC || ev.type == PROCEV_EXIT) {
		if (ev.pid <= 0 || ev.tgid <= 0)
			return -EBADMSG;
	}

	*ret = ev;
	return 0;
}

struct ProcEvents {
	int fd;
	uint32_t listen_seq;
	bool listening;          /* LISTEN sent: IGNORE on the way out */
	ProcEventHandler handler;
	void *userdata;
	char *error;
	ProcEventsStats stats;
	uint8_t buf[8192] __attribute__((aligned(8)));
};

static int send_op(ProcEvents *pe, uint32_t op, bool filtered);

ProcEvents *procevents_free(ProcEvents *pe)
{
	if (!pe)
		return NULL;
	/* Kernels before 6.6 count listeners only by LISTEN/IGNORE, not by
	 * socket lifetime: without IGNORE they keep generating events for
	 * nobody. Newer kernels see the IGNORE and do not count twice. */
	if (pe->fd >= 0 && pe->listening)
		(void)send_op(pe, PROC_CN_MCAST_IGNORE, false);
	safe_close(pe->fd);
	free(pe->error);
	free(pe);
	return NULL;
}

int procevents_get_fd(const ProcEvents *pe)
{
	return pe->fd;
}

const char *procevents_error(const ProcEvents *pe)
{
	return pe->error;
}

void procevents_get_stats(const ProcEvents *pe, ProcEventsStats *ret)
{
	*ret = pe->stats;
}

static int pe_fail(ProcEvents *pe, int r, const char *fmt, ...) _printf_(3, 4);
static int pe_fail(ProcEvents *pe, int r, const char *fmt, ...)
{
	StrBuf b = {};
	va_list ap;

	va_start(ap, fmt);
	strbuf_vappendf(&b, fmt, ap);
	va_end(ap);
	free(pe->error);
	pe->error = NULL;
	if (strbuf_steal(&b, &pe->error) < 0)
		strbuf_done(&b);
	return r;
}

/*
 * Since Linux 6.6 LISTEN may carry a struct proc_input with an event mask,
 * and the kernel then drops fork/uid/comm/... events for this socket
 * before they are queued: a third fewer datagrams in an exec burst. But
 * the mask also drops the ack (what == PROC_EVENT_NONE), and older kernels
 * silently ignore a LISTEN of that size. So: a plain LISTEN first, whose
 * ack proves permission and namespace, then the filtered one, unanswered.
 */
struct proc_listen_filtered {
	uint32_t mcast_op;
	uint32_t event_type;
};

static int send_op(ProcEvents *pe, uint32_t op, bool filtered)
{
	uint8_t msg[sizeof(struct cn_msg) + sizeof(struct proc_listen_filtered)] = {};
	struct proc_listen_filtered in = {
		.mcast_op = op,
		.event_type = PROC_EVENT_EXEC | PROC_EVENT_EXIT,
	};
	struct cn_msg cn = {
		.id = { .idx = CN_IDX_PROC, .val = CN_VAL_PROC },
		.seq = pe->listen_seq,
		.ack = pe->listen_seq,
		.len = filtered ? sizeof(in) : sizeof(in.mcast_op),
	};

	memcpy(msg, &cn, sizeof(cn));
	memcpy(msg + sizeof(cn), &in, cn.len);
	return nlsock_send(pe->fd, NLMSG_DONE, msg, sizeof(cn) + cn.len);
}

static int64_t now_msec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The kernel answers LISTEN with a PROC_EVENT_NONE whose ack is ours + 1
 * (its seq is not reliably ours: 6.x kernels stamp their own counter);
 * other listeners' acks go to everybody, hence a per-socket ack value. */
static int wait_ack(ProcEvents *pe, int timeout_msec)
{
	int64_t deadline = now_msec() + timeout_msec;

	for (;;) {
		int64_t left = deadline - now_msec();
		struct pollfd pfd = { .fd = pe->fd, .events = POLLIN };
		ssize_t n;
		size_t off;

		if (left <= 0)
			return pe_fail(pe, -ETIMEDOUT,
				       "proc connector: no acknowledgement of PROC_CN_MCAST_LISTEN within %d ms "
				       "(not in the initial PID and user namespace?)",
				       timeout_msec);
		if (poll(&pfd, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			return pe_fail(pe, negative_errno(), "proc connector: poll: %m");
		}

		n = nlsock_recv(pe->fd, pe->buf, sizeof(pe->buf), &pe->stats.forged);
		if (n == -EAGAIN || n == -ENOBUFS || n == -EMSGSIZE)
			continue;
		if (n < 0)
			return pe_fail(pe, (int)n, "proc connector: receive: %s", strerror((int)-n));

		for (off = 0; off + NLMSG_HDRLEN <= (size_t)n;) {
			struct nlmsghdr nh;
			ProcEvent ev;

			memcpy(&nh, pe->buf + off, sizeof(nh));
			if (nh.nlmsg_len < NLMSG_HDRLEN || nh.nlmsg_len > (size_t)n - off)
				break;
			if (procevent_parse(pe->buf + off, nh.nlmsg_len, &ev) >= 0 &&
			    ev.type == PROCEV_ACK && ev.ack == pe->listen_seq + 1) {
				if (ev.ack_error == EPERM || ev.ack_error == EACCES)
					return pe_fail(pe, -EPERM,
						       "proc connector: PROC_CN_MCAST_LISTEN refused: %s "
						       "(needs CAP_NET_ADMIN)", strerror(ev.ack_error));
				if (ev.ack_error > 0)
					return pe_fail(pe, -ev.ack_error,
						       "proc connector: PROC_CN_MCAST_LISTEN failed: %s",
						       strerror(ev.ack_error));
				return 0;
			}
			off += NLMSG_ALIGN(nh.nlmsg_len);
		}
	}
}

int procevents_new(ProcEventHandler handler, void *userdata, ProcEvents **ret, char **ret_error)
{
	_cleanup_(procevents_freep) ProcEvents *pe = NULL;
	_cleanup_free_ char *err = NULL;
	int r;

	pe = calloc(1, sizeof(*pe));
	if (!pe)
		return -ENOMEM;
	pe->fd = -EBADF;
	pe->handler = handler;
	pe->userdata = userdata;

	/* The port is unique per socket, so our ack is recognisable among others'. */
	r = nlsock_open(NETLINK_CONNECTOR, CN_IDX_PROC, PROCEVENTS_RCVBUF, &pe->listen_seq, &err);
	if (r < 0) {
		if (ret_error) {
			free(*ret_error);
			*ret_error = strprintf("proc connector: %s", strna(err));
		}
		return r;
	}
	pe->fd = r;

	r = send_op(pe, PROC_CN_MCAST_LISTEN, false);
	if (r >= 0) {
		pe->listening = true;
		r = wait_ack(pe, PROCEVENTS_ACK_TIMEOUT_MSEC);
	}
	if (r >= 0)
		r = send_op(pe, PROC_CN_MCAST_LISTEN, true);
	if (r < 0 && !pe->error)
		pe_fail(pe, r, "proc connector: sending PROC_CN_MCAST_LISTEN: %s", strerror(-r));
	if (r < 0) {
		if (ret_error) {
			free(*ret_error);
			*ret_error = TAKE_PTR(pe->error);
		}
		return r;
	}

	*ret = TAKE_PTR(pe);
	return 0;
}

static int dispatch(ProcEvents *pe, size_t n)
{
	int handled = 0;
	size_t off;

	for (off = 0; off + NLMSG_HDRLEN <= n;) {
		struct nlmsghdr nh;
		ProcEvent ev;
		int r;

		memcpy(&nh, pe->buf + off, sizeof(nh));
		if (nh.nlmsg_len < NLMSG_HDRLEN || nh.nlmsg_len > n - off) {
			pe->stats.malformed++;
			break;
		}
		r = procevent_parse(pe->buf + off, nh.nlmsg_len, &ev);
		off += NLMSG_ALIGN(nh.nlmsg_len);
		if (r < 0) {
			pe->stats.malformed++;
			continue;
		}
		switch (ev.type) {
		case PROCEV_EXEC:
			pe->stats.exec++;
			break;
		case PROCEV_EXIT:
			pe->stats.exit++;
			break;
		default:
			pe->stats.other++;
			continue;
		}
		if (pe->handler) {
			r = pe->handler(pe, &ev, pe->userdata);
			if (r < 0)
				return r;
		}
		handled++;
	}
	return handled;
}

int procevents_process(ProcEvents *pe)
{
	bool overrun = false;
	int handled = 0;

	for (unsigned i = 0; i < PROCEVENTS_BATCH; i++) {
		ssize_t n;
		int r;

		n = nlsock_recv(pe->fd, pe->buf, sizeof(pe->buf), &pe->stats.forged);
		if (n == -EAGAIN)
			break;
		if (n == -ENOBUFS) {
			/* Reported once per drain: the caller's rescan covers
			 * every loss up to now. */
			pe->stats.overruns++;
			overrun = true;
			continue;
		}
		if (n == -EMSGSIZE) {
			pe->stats.malformed++;
			continue;
		}
		if (n < 0)
			return pe_fail(pe, (int)n, "proc connector: receive: %s", strerror((int)-n));

		pe->stats.datagrams++;
		r = dispatch(pe, (size_t)n);
		if (r < 0)
			return r;
		handled += r;
	}

	if (overrun)
		return pe_fail(pe, -ENOBUFS,
			       "proc connector: receive queue overrun, process events were lost");
	return handled;
}
