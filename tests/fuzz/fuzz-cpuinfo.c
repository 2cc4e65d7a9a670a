/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CPU identity from text (agent/cpuid/cpuid.c): /proc/cpuinfo and the cpu
 * modalias. Never crash; whatever is identified describes itself and keeps
 * its fixed-size strings terminated.
 */
#include "cpuid.h"
#include "fuzz.h"

static void check_identity(const CpuIdentity *id)
{
	char *text = NULL;

	fuzz_assert(memchr(id->vendor_string, 0, sizeof(id->vendor_string)));
	fuzz_assert(memchr(id->arch, 0, sizeof(id->arch)));
	fuzz_assert(memchr(id->brand, 0, sizeof(id->brand)));
	fuzz_assert(memchr(id->codename, 0, sizeof(id->codename)));
	fuzz_assert(cpu_vendor_to_string(id->vendor));
	if (cpu_identity_describe(id, &text) >= 0)
		fuzz_assert(text);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_strndup(data, size);
	CpuIdentity id;

	memset(&id, 0, sizeof(id));
	if (cpuid_parse_cpuinfo(s, &id) >= 0)
		check_identity(&id);
	memset(&id, 0, sizeof(id));
	if (cpuid_parse_modalias(s, &id) >= 0)
		check_identity(&id);
	(void)cpu_vendor_from_cpuid_string(s);
	(void)cpu_vendor_from_string(s);
	free(s);
	return 0;
}
