/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libnl wrapper shared by the proc connector and uevent listeners. The
 * socket's lifetime (alloc, connect, membership, send) goes through libnl;
 * receiving is a plain recvmsg() into the caller's buffer because libnl's
 * nl_recv() folds ENOBUFS (queue overrun, which we must tell apart) into
 * NLE_NOMEM, allocates a buffer per datagram, and kobject uevents are not
 * nlmsghdr-framed at all. Depends on basic and libnl-3.
 */
#include <errno.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "macro.h"
#include "netlink-util.h"
#include "strutil.h"

int nlerr_to_errno(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_SUCCESS:
		return 0;
	case NLE_INTR:
		return -EINTR;
	case NLE_BAD_SOCK:
		return -EBADF;
	case NLE_AGAIN:
		return -EAGAIN;
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_EXIST:
		return -EEXIST;
	case NLE_INVAL:
		return -EINVAL;
	case NLE_RANGE:
		return -ERANGE;
	case NLE_MSGSIZE:
		return -EMSGSIZE;
	case NLE_OPNOTSUPP:
		return -EOPNOTSUPP;
	case NLE_AF_NOSUPPORT:
		return -EAFNOSUPPORT;
	case NLE_OBJ_NOTFOUND:
		return -ENOENT;
	case NLE_NOATTR:
	case NLE_MISSING_ATTR:
	case NLE_MSG_TOOSHORT:
	case NLE_MSG_TRUNC:
	case NLE_PARSE_ERR:
		return -EBADMSG;
	case NLE_AF_MISMATCH:
	case NLE_PROTO_MISMATCH:
		return -EPROTO;
	case NLE_SEQ_MISMATCH:
		return -EILSEQ;
	case NLE_MSG_OVERFLOW:
		return -EOVERFLOW;
	case NLE_NOADDR:
		return -EADDRNOTAVAIL;
	case NLE_SRCRT_NOSUPPORT:
	case NLE_MSGTYPE_NOSUPPORT:
		return -EOPNOTSUPP;
	case NLE_OBJ_MISMATCH:
		return -EINVAL;
	case NLE_NOCACHE:
		return -ENOENT;
	case NLE_BUSY:
		return -EBUSY;
	case NLE_NOACCESS:
		return -EACCES;
	case NLE_PERM:
		return -EPERM;
	case NLE_NODEV:
		return -ENODEV;
	case NLE_IMMUTABLE:
		return -EROFS;
	case NLE_DUMP_INTR:
		return -EINTR;
	case NLE_ATTRSIZE:
		return -EBADMSG;
	default:
		return -EIO;
	}
}

struct nl_sock *nlsock_free(struct nl_sock *sk)
{
	if (sk)
		nl_socket_free(sk);   /* closes the fd */
	return NULL;
}

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

int nlsock_open(int protocol, uint32_t group, int rcvbuf, struct nl_sock **ret, char **ret_error)
{
	struct nl_sock *sk;
	int fd, r;

	sk = nl_socket_alloc();
	if (!sk)
		return set_error(ret_error, -ENOMEM, "allocating socket", protocol, group);

	/* Multicast listeners: the kernel's datagrams carry their own
	 * sequence numbers, and nothing we send expects a netlink ACK. */
	nl_socket_disable_seq_check(sk);
	nl_socket_disable_auto_ack(sk);

	r = nlerr_to_errno(nl_connect(sk, protocol));
	if (r < 0) {
		nlsock_free(sk);
		return set_error(ret_error, r, "socket/bind", protocol, group);
	}

	r = nlerr_to_errno(nl_socket_set_nonblocking(sk));
	if (r < 0) {
		nlsock_free(sk);
		return set_error(ret_error, r, "O_NONBLOCK", protocol, group);
	}

	fd = nl_socket_get_fd(sk);
	if (rcvbuf > 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		/* Unprivileged: capped by net.core.rmem_max, which is fine. */
		(void)nl_socket_set_buffer_size(sk, rcvbuf, 0);

	if (group > 0) {
		r = nlerr_to_errno(nl_socket_add_membership(sk, (int)group));
		if (r < 0) {
			nlsock_free(sk);
			return set_error(ret_error, r, "joining multicast group", protocol, group);
		}
	}

	*ret = sk;
	return 0;
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
