/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* agent/service/irq-sources.c: every source that asked for an IRQ pass, named. */
#include "irq-sources.h"
#include "test.h"

static void test_format(void)
{
	static const struct {
		unsigned mask;
		const char *want;
	} cases[] = {
		{ 0, "new IRQs" },
		{ 1U << IRQ_SOURCE_BIND, "a driver bound to a device" },
		{ 1U << IRQ_SOURCE_POLL, "new IRQs in /proc/irq (polled)" },
		/* A bind and then the poll within one debounce interval: the bind is named (CI, 2026-12-06). */
		{ 1U << IRQ_SOURCE_BIND | 1U << IRQ_SOURCE_POLL,
		  "a driver bound to a device, new IRQs in /proc/irq (polled)" },
		{ 1U << IRQ_SOURCE_POLL | 1U << IRQ_SOURCE_VERIFY,
		  "new IRQs in /proc/irq (polled), new IRQs in /proc/irq (found by verification)" },
		{ 1U << IRQ_SOURCE_LOST, "uevents lost" },
		{ 1U << _IRQ_SOURCE_MAX, "new IRQs" },
	};
	char buf[160];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_str(irq_sources_format(cases[i].mask, buf, sizeof(buf)), cases[i].want);
	/* Too small a buffer: what fits, whole names only, terminated. */
	check_str(irq_sources_format(1U << IRQ_SOURCE_BIND | 1U << IRQ_SOURCE_POLL, buf, 30),
		  "a driver bound to a device");
	check_str(irq_sources_format(1U << IRQ_SOURCE_BIND, buf, 5), "");
}

int main(void)
{
	test_format();
	return test_end("test-irq-sources");
}
