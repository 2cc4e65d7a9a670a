/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared plumbing of the netlink listeners: a raw netlink socket opened
 * for one protocol and multicast group, one request sent to the kernel,
 * one datagram received.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"

/*
 * Open (SOCK_CLOEXEC, non-blocking, a port chosen by the kernel and
 * stored in @ret_port when given) and join @group of @protocol, receive
 * buffer @rcvbuf bytes (forced when privileged). Returns the fd, or
 * -errno and, in @ret_error (optional), which step failed and why.
 */
int nlsock_open(int protocol, uint32_t group, int rcvbuf, uint32_t *ret_port, char **ret_error);

/* One netlink message of @type carrying @payload to the kernel (port 0). */
int nlsock_send(int fd, uint16_t type, const void *payload, size_t size);

/*
 * One datagram from the kernel (sender port 0; others are dropped and
 * counted in @dropped): >0 bytes read, -EAGAIN when empty, -ENOBUFS on
 * receive-queue overrun, -EMSGSIZE when it did not fit @size.
 */
ssize_t nlsock_recv(int fd, void *buf, size_t size, uint64_t *dropped);
