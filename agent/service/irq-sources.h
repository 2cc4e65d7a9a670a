/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/*
 * What asks for an IRQ pass (manager-events.c). The sources that came
 * since the last pass are all named in its journal line and its change
 * records: a driver's bind and the poll often see the same new IRQs within
 * one debounce interval, and naming only the last one to arrive hid the
 * bind (the systemd VM's hot-add check, 2026-12-06).
 */
typedef enum IrqSource {
	IRQ_SOURCE_BIND,   /* a driver bound to a device (uevent) */
	IRQ_SOURCE_LOST,   /* uevents were lost: what bound meanwhile is unknown */
	IRQ_SOURCE_POLL,   /* the poll listed IRQs the last pass did not see */
	IRQ_SOURCE_VERIFY, /* verification did */
	_IRQ_SOURCE_MAX,
} IrqSource;

/*
 * Every source in @mask (bits 1 << IrqSource) in the order of the enum,
 * comma-separated, into @buf of @size bytes (the names that fit whole);
 * "new IRQs" when @mask names none. Returns @buf.
 */
const char *irq_sources_format(unsigned mask, char *buf, size_t size);
