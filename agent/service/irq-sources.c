/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "irq-sources.h"
#include "macro.h"

static const char *const irq_source_names[_IRQ_SOURCE_MAX] = {
	[IRQ_SOURCE_BIND] = "a driver bound to a device",
	[IRQ_SOURCE_LOST] = "uevents lost",
	[IRQ_SOURCE_POLL] = "new IRQs in /proc/irq (polled)",
	[IRQ_SOURCE_VERIFY] = "new IRQs in /proc/irq (found by verification)",
};

const char *irq_sources_format(unsigned mask, char *buf, size_t size)
{
	size_t len = 0;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < ELEMENTSOF(irq_source_names); i++) {
		int n;

		if (!(mask & (1U << i)))
			continue;
		n = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", irq_source_names[i]);
		if (n < 0 || (size_t)n >= size - len) {
			buf[len] = '\0';   /* whole names only */
			return buf;
		}
		len += (size_t)n;
	}
	if (len == 0 && snprintf(buf, size, "new IRQs") >= (int)size)
		buf[0] = '\0';
	return buf;
}
