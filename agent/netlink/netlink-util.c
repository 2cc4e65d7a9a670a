/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The socket under the proc connector and uevent listeners: a raw
 * AF_NETLINK socket, opened, bound and joined to one multicast group with
 * plain system calls, so errors are errno from the start. Receiving is
 * recvmsg() into the caller's buffer: an overrun must stay -ENOBUFS, and
 * kobject uevents are not nlmsghdr-framed at all. Depends on basic.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#include "macro.h"
#include "netlink-util.h"
#include "strutil.h"

static int set_error(char **ret_error, int r, const char *step, int protocol, uint32_t group)
{
	if (ret_error) {
		free(*ret_error);
		*ret_error = strprintf("netlink protocol %d group %u: %s: %s%s", protocol, group,
				       step, strerror(-r),
				       r == -EPERM || r == -EACCES ?
				       " (needs CAP_NET_ADMIN in the initial user namespace)" : "");
	}
	return r;
}

int nlsock_open(int protocol, uint32_t group, int rcvbuf, uint32_t *ret_port, char **ret_error)
{
	_cleanup_close_ int fd = -EBADF;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	socklen_t len = sizeof(sa);

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, protocol);
	if (fd < 0)
		return set_error(ret_error, negative_errno(), "socket", protocol, group);
	/* nl_pid 0: the kernel picks a free port, read back below. */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return set_error(ret_error, negative_errno(), "bind", protocol, group);
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		return set_error(ret_error, negative_errno(), "getsockname", protocol, group);
	if (len != sizeof(sa) || sa.nl_family != AF_NETLINK)
		return set_error(ret_error, -EAFNOSUPPORT, "getsockname", protocol, group);

	/* Unprivileged, SO_RCVBUFFORCE fails and SO_RCVBUF is capped by
	 * net.core.rmem_max, which is fine. */
	if (rcvbuf > 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));

	if (group > 0 &&
	    setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0)
		return set_error(ret_error, negative_errno(), "joining multicast group", protocol, group);

	if (ret_port)
		*ret_port = sa.nl_pid;
	return TAKE_FD(fd);
}

int nlsock_send(int fd, uint16_t type, const void *payload, size_t size)
{
	struct nlmsghdr nh = {
		.nlmsg_len = (uint32_t)NLMSG_LENGTH(size),
		.nlmsg_type = type,
		.nlmsg_flags = NLM_F_REQUEST,
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct iovec iov[2] = {
		{ .iov_base = &nh, .iov_len = NLMSG_HDRLEN },
		{ .iov_base = (void *)payload, .iov_len = size },
	};
	struct msghdr mh = {
		.msg_name = &kernel,
		.msg_namelen = sizeof(kernel),
		.msg_iov = iov,
		.msg_iovlen = 2,
	};
	ssize_t n;

	if (size > UINT32_MAX - NLMSG_HDRLEN)
		return -EMSGSIZE;
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return negative_errno();
	return n == (ssize_t)(NLMSG_HDRLEN + size) ? 0 : -EIO;
}

ssize_t nlsock_recv(int fd, void *buf, size_t size, uint64_t *dropped)
{
	for (;;) {
		struct sockaddr_nl sa = {};
		struct iovec iov = { .iov_base = buf, .iov_len = size };
		struct msghdr mh = {
			.msg_name = &sa,
			.msg_namelen = sizeof(sa),
			.msg_iov = &iov,
			.msg_iovlen = 1,
		};
		ssize_t n;

		n = recvmsg(fd, &mh, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EWOULDBLOCK)
				return -EAGAIN;
			return negative_errno();
		}
		if (mh.msg_flags & MSG_TRUNC)
			return -EMSGSIZE;
		/* Only the kernel (port 0) speaks on these groups; anything
		 * else is a forgery or a confused peer. */
		if (mh.msg_namelen != sizeof(sa) || sa.nl_pid != 0) {
			if (dropped)
				(*dropped)++;
			continue;
		}
		return n;
	}
}
