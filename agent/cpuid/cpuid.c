/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * CPU identity: vendor, family, model, stepping and brand string.
 *
 * x86 through libcpuid (the running CPU or a raw dump); everything else, and
 * every sysroot, through proc/cpuinfo or the cpu modalias below the root fd.
 * libcpuid's ERR_* codes are converted to negative errno here and nowhere
 * else. Depends on basic, and on libcpuid at run time only: it is loaded
 * with dlopen() for one identification and unloaded after it, so that a
 * daemon, which identifies once, does not keep it mapped (56 KiB of its
 * resident memory, issue 33), and a sysroot is read without it.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <libcpuid/libcpuid.h>

#include "config.h"

#include "cpuid.h"
#include "fileio.h"
#include "strutil.h"

static const char *const cpu_vendor_table[_CPU_VENDOR_MAX] = {
	[CPU_VENDOR_UNKNOWN] = "unknown",
	[CPU_VENDOR_INTEL] = "intel",
	[CPU_VENDOR_AMD] = "amd",
	[CPU_VENDOR_HYGON] = "hygon",
	[CPU_VENDOR_ZHAOXIN] = "zhaoxin",
	[CPU_VENDOR_CENTAUR] = "centaur",
	[CPU_VENDOR_ARM] = "arm",
	[CPU_VENDOR_HISILICON] = "hisilicon",
	[CPU_VENDOR_AMPERE] = "ampere",
	[CPU_VENDOR_IBM] = "ibm",
	[CPU_VENDOR_RISCV] = "riscv",
};
DEFINE_STRING_TABLE_LOOKUP(cpu_vendor, CpuVendor);

static const char *const identity_source_table[_IDENTITY_SOURCE_MAX] = {
	[IDENTITY_SOURCE_LIBCPUID] = "libcpuid",
	[IDENTITY_SOURCE_DUMP] = "cpuid-dump",
	[IDENTITY_SOURCE_CPUINFO] = "cpuinfo",
	[IDENTITY_SOURCE_MODALIAS] = "modalias",
};
DEFINE_STRING_TABLE_LOOKUP(identity_source, IdentitySource);

CpuVendor cpu_vendor_from_cpuid_string(const char *s)
{
	static const struct {
		const char *id;
		CpuVendor vendor;
	} map[] = {
		{ "GenuineIntel", CPU_VENDOR_INTEL },
		{ "AuthenticAMD", CPU_VENDOR_AMD },
		{ "HygonGenuine", CPU_VENDOR_HYGON },
		{ "  Shanghai  ", CPU_VENDOR_ZHAOXIN },
		{ "CentaurHauls", CPU_VENDOR_CENTAUR },
	};

	for (size_t i = 0; i < ELEMENTSOF(map); i++)
		if (streq(s, map[i].id))
			return map[i].vendor;
	return CPU_VENDOR_UNKNOWN;
}

/* The single place libcpuid's error codes become errno values. */
static int errno_from_libcpuid(int e)
{
	switch (e) {
	case ERR_OK:
		return 0;
	case ERR_NO_CPUID:
	case ERR_NOT_IMP:
		return -EOPNOTSUPP;
	case ERR_NO_MEM:
		return -ENOMEM;
	case ERR_OPEN:
		return -ENOENT;
	case ERR_BADFMT:
		return -EBADMSG;
	case ERR_CPU_UNKN:
		return -ENODEV;
	case ERR_NO_PERMS:
		return -EPERM;
	case ERR_INVRANGE:
		return -ERANGE;
	case ERR_NOT_FOUND:
		return -ENOENT;
	default:
		return -EIO;
	}
}

static void copy_trimmed(char *dst, size_t n, const char *src)
{
	while (*src == ' ')
		src++;
	snprintf(dst, n, "%s", src);
	strip_trailing(dst);
}

/*
 * Arm Ltd. (implementer 0x41) parts, as the Arm TRMs number them and
 * util-linux's lscpu-arm.c and Linux's arch/arm64/include/asm/cputype.h
 * list them.
 */
static const struct {
	unsigned part;
	const char *name;
} arm_parts[] = {
	{ 0xd03, "Cortex-A53" }, { 0xd04, "Cortex-A35" }, { 0xd05, "Cortex-A55" },
	{ 0xd07, "Cortex-A57" }, { 0xd08, "Cortex-A72" }, { 0xd09, "Cortex-A73" },
	{ 0xd0a, "Cortex-A75" }, { 0xd0b, "Cortex-A76" }, { 0xd0c, "Neoverse-N1" },
	{ 0xd0d, "Cortex-A77" }, { 0xd40, "Neoverse-V1" }, { 0xd41, "Cortex-A78" },
	{ 0xd44, "Cortex-X1" }, { 0xd46, "Cortex-A510" }, { 0xd47, "Cortex-A710" },
	{ 0xd48, "Cortex-X2" }, { 0xd49, "Neoverse-N2" }, { 0xd4d, "Cortex-A715" },
	{ 0xd4a, "Neoverse-E1" }, { 0xd4b, "Cortex-A78C" }, { 0xd4c, "Cortex-X1C" },
	{ 0xd4e, "Cortex-X3" }, { 0xd4f, "Neoverse-V2" }, { 0xd80, "Cortex-A520" },
	{ 0xd81, "Cortex-A720" }, { 0xd82, "Cortex-X4" }, { 0xd83, "Neoverse-V3AE" },
	{ 0xd84, "Neoverse-V3" }, { 0xd85, "Cortex-X925" }, { 0xd87, "Cortex-A725" },
	{ 0xd88, "Cortex-A520AE" }, { 0xd89, "Cortex-A720AE" }, { 0xd8e, "Neoverse-N3" },
	{ 0xd8f, "Cortex-A320" },
};

const char *cpuid_arm_part_name(unsigned implementer, unsigned part)
{
	if (implementer != 0x41)
		return NULL;
	for (size_t i = 0; i < ELEMENTSOF(arm_parts); i++)
		if (arm_parts[i].part == part)
			return arm_parts[i].name;
	return NULL;
}

/*
 * The parts whose codenames a libcpuid release has in its tables, by
 * vendor, family and model range, since which release (major * 100 +
 * minor). For anything else libcpuid's tables fall back to the nearest
 * older entry and name a part that it is not: 0.6.2 calls an EPYC 9655
 * (family 0x1a) "Abu Dhabi", an EPYC 9654 (Genoa, 0x19/0x11) "EPYC
 * (Milan)" and a Xeon w9-3475X (Sapphire Rapids, 6/0x8f) "Xeon
 * (Conroe/2M)". Only rows checked against a release's ChangeLog and
 * tables are listed; what a later release added is not assumed.
 */
static const struct {
	unsigned since;
	CpuVendor vendor;
	unsigned family_lo, family_hi, model_lo, model_hi;
} codename_table[] = {
	/* K8 to Zen 2 (0.5.0 added Zen 2; Hygon is never named by libcpuid's codename). */
	{ 5, CPU_VENDOR_AMD, 0x0f, 0x17, 0x00, 0xff },
	/* Zen 3: Milan, Vermeer, Cezanne (0.5.1), Rembrandt, Lucienne, Barcelo (0.6.0). */
	{ 6, CPU_VENDOR_AMD, 0x19, 0x19, 0x00, 0x0f },
	{ 6, CPU_VENDOR_AMD, 0x19, 0x19, 0x20, 0x2f },
	{ 6, CPU_VENDOR_AMD, 0x19, 0x19, 0x40, 0x5f },
	/* Pentium to Skylake-SP and Coffee Lake; Ice Lake, Comet Lake, Rocket Lake, Tiger Lake, Alder Lake clients. */
	{ 5, CPU_VENDOR_INTEL, 0x05, 0x05, 0x00, 0xff },
	{ 5, CPU_VENDOR_INTEL, 0x0f, 0x0f, 0x00, 0xff },
	{ 5, CPU_VENDOR_INTEL, 0x06, 0x06, 0x00, 0x5f },
	{ 5, CPU_VENDOR_INTEL, 0x06, 0x06, 0x7e, 0x7e },
	{ 5, CPU_VENDOR_INTEL, 0x06, 0x06, 0x8e, 0x8e },
	{ 5, CPU_VENDOR_INTEL, 0x06, 0x06, 0x9e, 0x9e },
	{ 5, CPU_VENDOR_INTEL, 0x06, 0x06, 0xa5, 0xa7 },
	{ 6, CPU_VENDOR_INTEL, 0x06, 0x06, 0x8c, 0x8d },
	{ 6, CPU_VENDOR_INTEL, 0x06, 0x06, 0x97, 0x97 },
	{ 6, CPU_VENDOR_INTEL, 0x06, 0x06, 0x9a, 0x9a },
};

bool cpuid_codename_known(const char *version, CpuVendor vendor, unsigned family, unsigned model)
{
	unsigned major, minor;

	if (!version || sscanf(version, "%u.%u", &major, &minor) != 2 || major > 100 || minor > 99)
		return false;
	for (size_t i = 0; i < ELEMENTSOF(codename_table); i++)
		if (major * 100 + minor >= codename_table[i].since && vendor == codename_table[i].vendor &&
		    family >= codename_table[i].family_lo && family <= codename_table[i].family_hi &&
		    model >= codename_table[i].model_lo && model <= codename_table[i].model_hi)
			return true;
	return false;
}

typedef struct LibCpuid {
	void *dl;
	typeof(cpu_identify) *identify;
	typeof(cpuid_lib_version) *lib_version;
	typeof(cpuid_get_raw_data) *get_raw_data;
	typeof(cpuid_deserialize_raw_data) *deserialize_raw_data;
} LibCpuid;

static void libcpuid_close(LibCpuid *l)
{
	if (l->dl)
		dlclose(l->dl);
	*l = (LibCpuid){};
}

/* -ENOPKG when @soname cannot be loaded or lacks a function we call. */
static int libcpuid_open(const char *soname, LibCpuid *ret)
{
	LibCpuid l = {};

	l.dl = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!l.dl)
		return -ENOPKG;
	*(void **)&l.identify = dlsym(l.dl, "cpu_identify");
	*(void **)&l.lib_version = dlsym(l.dl, "cpuid_lib_version");
	*(void **)&l.get_raw_data = dlsym(l.dl, "cpuid_get_raw_data");
	*(void **)&l.deserialize_raw_data = dlsym(l.dl, "cpuid_deserialize_raw_data");
	if (!l.identify || !l.lib_version || !l.get_raw_data || !l.deserialize_raw_data) {
		libcpuid_close(&l);
		return -ENOPKG;
	}
	*ret = l;
	return 0;
}

int cpuid_libcpuid_probe(const char *soname, char *ret_version, size_t size)
{
	LibCpuid l;
	int r;

	r = libcpuid_open(soname ?: LIBCPUID_SONAME, &l);
	if (r < 0)
		return r;
	if (ret_version && size > 0)
		snprintf(ret_version, size, "%s", l.lib_version());
	libcpuid_close(&l);
	return 0;
}

static int identity_from_libcpuid(const LibCpuid *l, struct cpu_raw_data_t *raw, IdentitySource source,
				  CpuIdentity *ret)
{
	struct cpu_id_t data = {};
	CpuIdentity id = {};
	int r;

	r = l->identify(raw, &data);
	/* An unknown model still has valid vendor/family/model fields. */
	if (r < 0 && r != ERR_CPU_UNKN)
		return errno_from_libcpuid(r);

	snprintf(id.vendor_string, sizeof(id.vendor_string), "%s", data.vendor_str);
	id.vendor = cpu_vendor_from_cpuid_string(data.vendor_str);
	snprintf(id.arch, sizeof(id.arch), "x86");
	id.have_family = true;
	id.family = (unsigned)data.ext_family;
	id.model = (unsigned)data.ext_model;
	id.stepping = (unsigned)data.stepping;
	id.have_stepping = true;
	copy_trimmed(id.brand, sizeof(id.brand), data.brand_str);
	/* Decided against the library actually loaded, which may differ from the headers built against. */
	if (id.vendor == CPU_VENDOR_HYGON || !data.cpu_codename[0])
		;
	else if (cpuid_codename_known(l->lib_version(), id.vendor, id.family, id.model))
		snprintf(id.codename, sizeof(id.codename), "%s", data.cpu_codename);
	else
		snprintf(id.codename_note, sizeof(id.codename_note), "codename unknown to libcpuid %s",
			 l->lib_version());
	id.source = source;
	*ret = id;
	return 0;
}

int cpuid_identify_host(CpuIdentity *ret)
{
#if defined(__x86_64__) || defined(__i386__)
	struct cpu_raw_data_t raw = {};
	LibCpuid l;
	int r;

	r = libcpuid_open(LIBCPUID_SONAME, &l);
	if (r < 0)
		return r;
	r = l.get_raw_data(&raw);
	r = r < 0 ? errno_from_libcpuid(r) : identity_from_libcpuid(&l, &raw, IDENTITY_SOURCE_LIBCPUID, ret);
	libcpuid_close(&l);
	return r;
#else
	return -EOPNOTSUPP;
#endif
}

int cpuid_identify_dump(const char *path, CpuIdentity *ret)
{
	struct cpu_raw_data_t raw = {};
	LibCpuid l;
	int r;

	if (access(path, R_OK) < 0)
		return negative_errno();
	r = libcpuid_open(LIBCPUID_SONAME, &l);
	if (r < 0)
		return r;
	r = l.deserialize_raw_data(&raw, path);
	if (r < 0)
		r = errno_from_libcpuid(r);
	/* libcpuid accepts files without any CPUID leaf; a dump needs leaf 0. */
	else if (raw.basic_cpuid[0][0] == 0 && raw.basic_cpuid[0][1] == 0)
		r = -EBADMSG;
	else
		r = identity_from_libcpuid(&l, &raw, IDENTITY_SOURCE_DUMP, ret);
	libcpuid_close(&l);
	return r;
}

/* "key\t\t: value" -> value of the first line with that key, else NULL. */
static const char *cpuinfo_field(const char *text, const char *key, char *buf, size_t n)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *q;
		size_t l;

		if (*p == '\n')
			break;  /* end of the first processor block */
		if (strncmp(p, key, kl) != 0)
			continue;
		q = p + kl;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q != ':')
			continue;
		q++;
		while (*q == ' ' || *q == '\t')
			q++;
		l = strcspn(q, "\n");
		snprintf(buf, n, "%.*s", (int)MIN(l, n - 1), q);
		strip_trailing(buf);
		return buf;
	}
	return NULL;
}

static int parse_number_field(const char *text, const char *key, unsigned *ret)
{
	char buf[64];

	if (!cpuinfo_field(text, key, buf, sizeof(buf)))
		return -ENODATA;
	return safe_atou(buf, ret);
}

/*
 * An arm /proc/cpuinfo names the part of each processor: the machine's
 * name is every part the table knows, in order of first appearance, as
 * lscpu prints them ("Arm Cortex-X925 + Cortex-A725"); a part it does not
 * know is named by its numbers, as before.
 */
static void arm_brand(const char *text, unsigned impl, unsigned part, CpuIdentity *id)
{
	const char *name = cpuid_arm_part_name(impl, part);
	char seen[96] = "";

	if (!name) {
		snprintf(id->brand, sizeof(id->brand), "implementer %s part 0x%x", id->vendor_string, part);
		return;
	}
	snprintf(id->brand, sizeof(id->brand), "%s %s", impl == 0x41 ? "Arm" : id->vendor_string, name);
	snprintf(seen, sizeof(seen), "|%s|", name);
	for (const char *b = strstr(text, "\n\n"); b; b = strstr(b + 1, "\n\n")) {
		unsigned u;
		const char *n;
		char key[40];

		if (parse_number_field(b + 2, "CPU part", &u) < 0 || !(n = cpuid_arm_part_name(impl, u)))
			continue;
		snprintf(key, sizeof(key), "|%s|", n);
		if (strstr(seen, key) || strlen(seen) + strlen(key) >= sizeof(seen))
			continue;
		strcat(seen, key + 1);
		strncat(id->brand, " + ", sizeof(id->brand) - strlen(id->brand) - 1);
		strncat(id->brand, n, sizeof(id->brand) - strlen(id->brand) - 1);
	}
}

int cpuid_parse_cpuinfo(const char *text, CpuIdentity *ret)
{
	CpuIdentity id = { .source = IDENTITY_SOURCE_CPUINFO };
	char buf[256];
	int r;

	/* Skip leading blank lines some dumps have. */
	while (*text == '\n')
		text++;

	if (cpuinfo_field(text, "vendor_id", buf, sizeof(buf)) && !startswith(buf, "IBM")) {
		snprintf(id.vendor_string, sizeof(id.vendor_string), "%s", buf);
		id.vendor = cpu_vendor_from_cpuid_string(buf);
		snprintf(id.arch, sizeof(id.arch), "x86");
		r = parse_number_field(text, "cpu family", &id.family);
		if (r < 0)
			return r;
		r = parse_number_field(text, "model", &id.model);
		if (r < 0)
			return r;
		id.have_stepping = parse_number_field(text, "stepping", &id.stepping) >= 0;
		id.have_family = true;
		if (cpuinfo_field(text, "model name", buf, sizeof(buf)))
			snprintf(id.brand, sizeof(id.brand), "%s", buf);
	} else if (cpuinfo_field(text, "vendor_id", buf, sizeof(buf))) {
		/* s390: "vendor_id : IBM/S390" */
		snprintf(id.vendor_string, sizeof(id.vendor_string), "%s", buf);
		id.vendor = CPU_VENDOR_IBM;
		snprintf(id.arch, sizeof(id.arch), "s390");
		if (cpuinfo_field(text, "machine", buf, sizeof(buf)) ||
		    cpuinfo_field(text, "processor 0", buf, sizeof(buf)))
			snprintf(id.brand, sizeof(id.brand), "%s", buf);
	} else if (cpuinfo_field(text, "CPU implementer", buf, sizeof(buf))) {
		unsigned impl = 0, part = 0;

		snprintf(id.vendor_string, sizeof(id.vendor_string), "%s", buf);
		snprintf(id.arch, sizeof(id.arch), "arm64");
		(void)safe_atou(buf, &impl);
		id.vendor = impl == 0x41 ? CPU_VENDOR_ARM :
			    impl == 0x48 ? CPU_VENDOR_HISILICON :
			    impl == 0xc0 ? CPU_VENDOR_AMPERE : CPU_VENDOR_UNKNOWN;
		if (parse_number_field(text, "CPU part", &part) >= 0)
			arm_brand(text, impl, part, &id);
	} else if (cpuinfo_field(text, "revision", buf, sizeof(buf)) && cpuinfo_field(text, "cpu", buf, sizeof(buf))) {
		/* powerpc: "cpu : POWER7 (architected), altivec supported" */
		snprintf(id.brand, sizeof(id.brand), "%s", buf);
		snprintf(id.vendor_string, sizeof(id.vendor_string), "IBM");
		snprintf(id.arch, sizeof(id.arch), "powerpc");
		id.vendor = CPU_VENDOR_IBM;
	} else if (cpuinfo_field(text, "isa", buf, sizeof(buf))) {
		snprintf(id.arch, sizeof(id.arch), "riscv");
		id.vendor = CPU_VENDOR_RISCV;
		if (cpuinfo_field(text, "mvendorid", buf, sizeof(buf)))
			snprintf(id.vendor_string, sizeof(id.vendor_string), "%s", buf);
		if (cpuinfo_field(text, "uarch", buf, sizeof(buf)))
			snprintf(id.brand, sizeof(id.brand), "%s", buf);
	} else
		return -EBADMSG;

	*ret = id;
	return 0;
}

int cpuid_parse_modalias(const char *text, CpuIdentity *ret)
{
	CpuIdentity id = { .source = IDENTITY_SOURCE_MODALIAS };
	unsigned ven, fam, mod;
	const char *p;

	p = startswith(text, "cpu:type:x86,");
	if (!p)
		return -EOPNOTSUPP;
	if (sscanf(p, "ven%4xfam%4xmod%4x", &ven, &fam, &mod) != 3)
		return -EBADMSG;

	/* The kernel's X86_VENDOR_* numbering. */
	switch (ven) {
	case 0:
		id.vendor = CPU_VENDOR_INTEL;
		break;
	case 2:
		id.vendor = CPU_VENDOR_AMD;
		break;
	case 5:
		id.vendor = CPU_VENDOR_CENTAUR;
		break;
	case 9:
		id.vendor = CPU_VENDOR_HYGON;
		break;
	case 10:
		id.vendor = CPU_VENDOR_ZHAOXIN;
		break;
	default:
		id.vendor = CPU_VENDOR_UNKNOWN;
	}
	snprintf(id.vendor_string, sizeof(id.vendor_string), "x86 vendor %u", ven);
	snprintf(id.arch, sizeof(id.arch), "x86");
	id.have_family = true;
	id.family = fam;
	id.model = mod;
	*ret = id;
	return 0;
}

int cpuid_identify_sysroot(int root_fd, CpuIdentity *ret)
{
	_cleanup_free_ char *text = NULL;
	int r;

	/*
	 * Only the first processor's block is parsed: do not make the kernel
	 * format (and sample the frequency of) every CPU of a large machine.
	 */
	r = read_head_at(root_fd, "proc/cpuinfo", 16384, &text);
	if (r >= 0) {
		r = cpuid_parse_cpuinfo(text, ret);
		if (r >= 0)
			return r;
	}
	free(text);
	text = NULL;

	r = read_line_at(root_fd, "sys/devices/system/cpu/modalias", &text);
	if (r < 0)
		return r == -ENOENT ? -ENODATA : r;
	return cpuid_parse_modalias(text, ret);
}

int cpuid_identify(int root_fd, bool live, const char *dump, CpuIdentity *ret)
{
	int r;

	if (dump)
		return cpuid_identify_dump(dump, ret);
	if (live) {
		r = cpuid_identify_host(ret);
		if (r >= 0)
			return r;
	}
	return cpuid_identify_sysroot(root_fd, ret);
}

int cpu_identity_describe(const CpuIdentity *id, char **ret)
{
	char *s;

	if (id->have_family) {
		char stepping[24] = "";

		if (id->have_stepping)
			snprintf(stepping, sizeof(stepping), " stepping %u", id->stepping);
		s = strprintf("%s family 0x%x model 0x%x%s%s%s%s", cpu_vendor_to_string(id->vendor), id->family,
			      id->model, stepping, id->brand[0] ? " (" : "", id->brand, id->brand[0] ? ")" : "");
	}
	else
		s = strprintf("%s %s%s%s%s", cpu_vendor_to_string(id->vendor), id->arch, id->brand[0] ? " (" : "",
			      id->brand, id->brand[0] ? ")" : "");
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}
