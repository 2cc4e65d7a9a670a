/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared plumbing of the netlink listeners: the one place where libnl's
 * -NLE_* codes become negative errno, and a libnl socket opened for one
 * protocol and multicast group.
 */

#include <stdint.h>
#include <sys/types.h>

#include "macro.h"

struct nl_sock;

/* libnl's return value (0, -NLE_*) to 0 / -errno. */
int nlerr_to_errno(int nlerr) _const_;

/*
 * Allocate, connect (SOCK_CLOEXEC, non-blocking) and join @group of
 * @protocol, receive buffer @rcvbuf bytes (forced when privileged).
 * On failure @ret_error (optional) says which step failed and why.
 */
int nlsock_open(int protocol, uint32_t group, int rcvbuf, struct nl_sock **ret, char **ret_error);
struct nl_sock *nlsock_free(struct nl_sock *sk);

/*
 * One datagram from the kernel (sender port 0; others are dropped and
 * counted in @dropped): >0 bytes read, -EAGAIN when empty, -ENOBUFS on
 * receive-queue overrun, -EMSGSIZE when it did not fit @size.
 */
ssize_t nlsock_recv(int fd, void *buf, size_t size, uint64_t *dropped);
