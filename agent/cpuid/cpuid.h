/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "macro.h"

typedef enum CpuVendor {
	CPU_VENDOR_UNKNOWN,
	CPU_VENDOR_INTEL,
	CPU_VENDOR_AMD,
	CPU_VENDOR_HYGON,
	CPU_VENDOR_ZHAOXIN,
	CPU_VENDOR_CENTAUR,
	CPU_VENDOR_ARM,
	CPU_VENDOR_HISILICON,
	CPU_VENDOR_AMPERE,
	CPU_VENDOR_IBM,
	CPU_VENDOR_RISCV,
	_CPU_VENDOR_MAX,
	_CPU_VENDOR_INVALID = -EINVAL,
} CpuVendor;

typedef enum IdentitySource {
	IDENTITY_SOURCE_LIBCPUID,    /* CPUID of the running CPU */
	IDENTITY_SOURCE_DUMP,        /* a raw CPUID dump, through libcpuid */
	IDENTITY_SOURCE_CPUINFO,     /* /proc/cpuinfo under the root */
	IDENTITY_SOURCE_MODALIAS,    /* sys/devices/system/cpu/modalias */
	_IDENTITY_SOURCE_MAX,
	_IDENTITY_SOURCE_INVALID = -EINVAL,
} IdentitySource;

typedef struct CpuIdentity {
	CpuVendor vendor;
	char vendor_string[32];   /* as the CPU says it: "HygonGenuine", "0x48" */
	char arch[16];            /* "x86", "arm64", "powerpc", "s390", "riscv" */
	bool have_family;         /* x86 family/model are meaningful */
	bool have_stepping;       /* and the stepping (the modalias has none) */
	unsigned family, model, stepping;   /* display values (0x18, 7, ...) */
	char brand[128];          /* model name / brand string, may be empty */
	/*
	 * libcpuid's codename where we trust it; empty for Hygon, whose
	 * libcpuid names are wrong: Hygon parts are told apart by number.
	 */
	char codename[64];
	/*
	 * Why there is no codename although libcpuid gave one: "codename
	 * unknown to libcpuid 0.6.2" when the part is newer than what the
	 * linked release can name (its tables then name an older part).
	 */
	char codename_note[64];
	IdentitySource source;
} CpuIdentity;

const char *cpu_vendor_to_string(CpuVendor v) _const_;
CpuVendor cpu_vendor_from_string(const char *s) _pure_;
const char *identity_source_to_string(IdentitySource s) _const_;
IdentitySource identity_source_from_string(const char *s) _pure_;

/* Map a CPUID vendor string ("AuthenticAMD") to a vendor. */
CpuVendor cpu_vendor_from_cpuid_string(const char *s) _pure_;

/*
 * The running CPU through libcpuid (x86 only; -EOPNOTSUPP elsewhere,
 * -ENOPKG when libcpuid cannot be loaded).
 */
int cpuid_identify_host(CpuIdentity *ret);
/*
 * A raw CPUID dump (libcpuid's "basic_cpuid[N]=" format or AIDA64 text),
 * uncompressed. @path is a host path given by the user (test input).
 * -ENOPKG when libcpuid cannot be loaded.
 */
int cpuid_identify_dump(const char *path, CpuIdentity *ret);
/*
 * Load libcpuid as the two above do (@soname, or NULL for the one built
 * against), find the functions they call, store its version in
 * @ret_version (optional, @size bytes) and unload it: 0 or -ENOPKG.
 */
int cpuid_libcpuid_probe(const char *soname, char *ret_version, size_t size);
/* proc/cpuinfo below @root_fd, falling back to the cpu modalias. */
int cpuid_identify_sysroot(int root_fd, CpuIdentity *ret);
/* Parse the text of a /proc/cpuinfo (first processor block). */
int cpuid_parse_cpuinfo(const char *text, CpuIdentity *ret);
/* Parse "cpu:type:x86,ven0000fam0006mod0055:feature:..." */
int cpuid_parse_modalias(const char *text, CpuIdentity *ret);

/*
 * The daemon's order: a dump if given; on the live system (@live) libcpuid,
 * then the sysroot files; on a sysroot only its files.
 */
int cpuid_identify(int root_fd, bool live, const char *dump, CpuIdentity *ret);

/*
 * The name of an Arm MIDR implementer/part ("Cortex-X925" for 0x41/0xd85),
 * as lscpu prints it; NULL for a part the table does not know.
 */
const char *cpuid_arm_part_name(unsigned implementer, unsigned part) _const_;

/*
 * Whether libcpuid release @version ("0.6.2") can know the codename of
 * @vendor @family @model: a table of the parts each release names. A
 * release newer than the table is held to the newest row's knowledge.
 */
bool cpuid_codename_known(const char *version, CpuVendor vendor, unsigned family, unsigned model) _pure_;

/* "Hygon family 0x18 model 0x7 (C86 7447v ...)" style one-liner. */
int cpu_identity_describe(const CpuIdentity *id, char **ret);
