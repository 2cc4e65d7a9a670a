/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * agent/cpuid: the identity of /proc/cpuinfo texts of every architecture we
 * know, the x86 cpu modalias, the sysroot's order (cpuinfo, then the
 * modalias), raw CPUID dumps through libcpuid (Hygon is never named by
 * libcpuid's codename; a part newer than the linked release gets a note,
 * not a wrong name), the vendor tables, and every malformed input class
 * with its errno. Trees and dumps are written to a temporary directory.
 */
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>

#include "cpuid.h"
#include "fileio.h"
#include "strutil.h"
#include "test.h"

/* ---- /proc/cpuinfo ---- */

#define NO_STEPPING UINT_MAX

static const struct {
	const char *name;
	const char *text;
	int ret;
	CpuVendor vendor;
	const char *vendor_string, *arch;
	unsigned family, model, stepping;   /* family 0: not x86 (have_family false) */
	const char *brand;
	const char *describe;
} cpuinfo_cases[] = {
	{ "hygon",
	  "processor\t: 0\nvendor_id\t: HygonGenuine\ncpu family\t: 24\nmodel\t\t: 7\n"
	  "model name\t: Hygon C86-4G 7490 64-core Processor\nstepping\t: 1\nflags\t\t: fpu vme\n",
	  0, CPU_VENDOR_HYGON, "HygonGenuine", "x86", 0x18, 7, 1, "Hygon C86-4G 7490 64-core Processor",
	  "hygon family 0x18 model 0x7 stepping 1 (Hygon C86-4G 7490 64-core Processor)" },
	{ "intel, model name before model",
	  "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel name\t: Intel(R) Xeon(R) 6980P\n"
	  "model\t\t: 173\nstepping\t: 1\n",
	  0, CPU_VENDOR_INTEL, "GenuineIntel", "x86", 6, 0xad, 1, "Intel(R) Xeon(R) 6980P",
	  "intel family 0x6 model 0xad stepping 1 (Intel(R) Xeon(R) 6980P)" },
	{ "amd, leading blank lines, no stepping line",
	  "\n\nprocessor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 17\n",
	  0, CPU_VENDOR_AMD, "AuthenticAMD", "x86", 0x1a, 0x11, NO_STEPPING, "",
	  "amd family 0x1a model 0x11" },
	{ "x86 vendor the table does not know",
	  "vendor_id\t: VirtualApple\ncpu family\t: 6\nmodel\t\t: 1\nstepping\t: 0\n",
	  0, CPU_VENDOR_UNKNOWN, "VirtualApple", "x86", 6, 1, 0, "", "unknown family 0x6 model 0x1 stepping 0" },
	{ "arm big.LITTLE: every known part once, in order",
	  "processor\t: 0\nBogoMIPS\t: 48.00\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x2\n"
	  "CPU part\t: 0xd46\nCPU revision\t: 0\n\n"
	  "processor\t: 1\nCPU implementer\t: 0x41\nCPU part\t: 0xd46\n\n"
	  "processor\t: 2\nCPU implementer\t: 0x41\nCPU part\t: 0xd47\n\n"
	  "processor\t: 3\nCPU implementer\t: 0x41\nCPU part\t: 0xfff\n\n"
	  "processor\t: 4\nCPU implementer\t: 0x41\nCPU part\t: 0xd47\n",
	  0, CPU_VENDOR_ARM, "0x41", "arm64", 0, 0, 0, "Arm Cortex-A510 + Cortex-A710",
	  "arm arm64 (Arm Cortex-A510 + Cortex-A710)" },
	{ "arm part the table does not know",
	  "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xabc\n",
	  0, CPU_VENDOR_ARM, "0x41", "arm64", 0, 0, 0, "implementer 0x41 part 0xabc",
	  "arm arm64 (implementer 0x41 part 0xabc)" },
	{ "hisilicon",
	  "processor\t: 0\nCPU implementer\t: 0x48\nCPU architecture: 8\nCPU part\t: 0xd01\n",
	  0, CPU_VENDOR_HISILICON, "0x48", "arm64", 0, 0, 0, "implementer 0x48 part 0xd01",
	  "hisilicon arm64 (implementer 0x48 part 0xd01)" },
	{ "ampere, no part",
	  "processor\t: 0\nCPU implementer\t: 0xc0\n",
	  0, CPU_VENDOR_AMPERE, "0xc0", "arm64", 0, 0, 0, "", "ampere arm64" },
	{ "s390",
	  "vendor_id       : IBM/S390\n# processors    : 2\n"
	  "processor 0: version = FF,  identification = 0133E8,  machine = 2964\n",
	  0, CPU_VENDOR_IBM, "IBM/S390", "s390", 0, 0, 0,
	  "version = FF,  identification = 0133E8,  machine = 2964",
	  "ibm s390 (version = FF,  identification = 0133E8,  machine = 2964)" },
	{ "powerpc",
	  "processor\t: 0\ncpu\t\t: POWER9 (architected), altivec supported\nclock\t\t: 3800.000000MHz\n"
	  "revision\t: 2.2 (pvr 004e 1202)\n",
	  0, CPU_VENDOR_IBM, "IBM", "powerpc", 0, 0, 0, "POWER9 (architected), altivec supported",
	  "ibm powerpc (POWER9 (architected), altivec supported)" },
	{ "riscv",
	  "processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdc_zicntr\nmmu\t\t: sv39\nuarch\t\t: sifive,u74-mc\n"
	  "mvendorid\t: 0x489\n",
	  0, CPU_VENDOR_RISCV, "0x489", "riscv", 0, 0, 0, "sifive,u74-mc", "riscv riscv (sifive,u74-mc)" },

	/* malformed */
	{ "empty", "", -EBADMSG },
	{ "no field we know", "processor\t: 0\nBogoMIPS\t: 48.00\n", -EBADMSG },
	{ "x86 without cpu family", "vendor_id\t: GenuineIntel\nmodel\t\t: 85\n", -ENODATA },
	{ "x86 without model (model name is not model)",
	  "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel name\t: Xeon\n", -ENODATA },
	{ "x86 family not a number", "vendor_id\t: GenuineIntel\ncpu family\t: six\nmodel\t\t: 85\n", -EINVAL },
	{ "x86 model out of range", "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 99999999999\n",
	  -ERANGE },
	{ "the first processor block ends at its blank line",
	  "processor\t: 0\nvendor_id\t: GenuineIntel\n\ncpu family\t: 6\nmodel\t\t: 85\n", -ENODATA },
	{ "a key without its colon", "vendor_id GenuineIntel\ncpu family 6\nmodel 85\n", -EBADMSG },
};

static void test_cpuinfo(void)
{
	for (size_t i = 0; i < ELEMENTSOF(cpuinfo_cases); i++) {
		const char *name = cpuinfo_cases[i].name;
		CpuIdentity id = { .vendor = _CPU_VENDOR_INVALID, .family = 4242 };
		_cleanup_free_ char *d = NULL;
		int r;

		r = cpuid_parse_cpuinfo(cpuinfo_cases[i].text, &id);
		check_ctx(name, r == cpuinfo_cases[i].ret);
		if (r != cpuinfo_cases[i].ret)
			fprintf(stderr, "  [%s] got %d, want %d\n", name, r, cpuinfo_cases[i].ret);
		if (r < 0 || cpuinfo_cases[i].ret < 0) {
			/* @ret is untouched on failure. */
			check_ctx(name, id.vendor == _CPU_VENDOR_INVALID && id.family == 4242);
			continue;
		}
		check_ctx(name, id.source == IDENTITY_SOURCE_CPUINFO);
		check_ctx(name, id.vendor == cpuinfo_cases[i].vendor);
		check_str(id.vendor_string, cpuinfo_cases[i].vendor_string);
		check_str(id.arch, cpuinfo_cases[i].arch);
		check_ctx(name, id.have_family == (cpuinfo_cases[i].family > 0));
		if (id.have_family) {
			check_int(id.family, cpuinfo_cases[i].family);
			check_int(id.model, cpuinfo_cases[i].model);
			check_ctx(name, id.have_stepping == (cpuinfo_cases[i].stepping != NO_STEPPING));
			if (id.have_stepping)
				check_int(id.stepping, cpuinfo_cases[i].stepping);
		} else
			check_ctx(name, !id.have_stepping);
		check_str(id.brand, cpuinfo_cases[i].brand);
		check_ctx(name, !id.codename[0] && !id.codename_note[0]);
		check_ctx(name, cpu_identity_describe(&id, &d) == 0);
		check_str(d, cpuinfo_cases[i].describe);
	}
}

/* ---- the x86 cpu modalias ---- */

static const struct {
	const char *text;
	int ret;
	CpuVendor vendor;
	unsigned family, model;
	const char *vendor_string;
} modalias_cases[] = {
	{ "cpu:type:x86,ven0000fam0006mod00AD:feature:,0000,0001,0002", 0, CPU_VENDOR_INTEL, 6, 0xad, "x86 vendor 0" },
	{ "cpu:type:x86,ven0002fam0019mod0011:feature:,0000", 0, CPU_VENDOR_AMD, 0x19, 0x11, "x86 vendor 2" },
	{ "cpu:type:x86,ven0005fam0006mod000F:feature:", 0, CPU_VENDOR_CENTAUR, 6, 0xf, "x86 vendor 5" },
	{ "cpu:type:x86,ven0009fam0018mod0007:feature:,0000", 0, CPU_VENDOR_HYGON, 0x18, 7, "x86 vendor 9" },
	{ "cpu:type:x86,ven000Afam0007mod003B:feature:", 0, CPU_VENDOR_ZHAOXIN, 7, 0x3b, "x86 vendor 10" },
	{ "cpu:type:x86,ven0003fam0005mod0004:feature:", 0, CPU_VENDOR_UNKNOWN, 5, 4, "x86 vendor 3" },

	/* malformed, or not x86 */
	{ "", -EOPNOTSUPP },
	{ "cpu:type:aarch64:feature:,0000,0001", -EOPNOTSUPP },
	{ "cpu:type:x86,", -EBADMSG },
	{ "cpu:type:x86,venXXXXfam0006mod0055:feature:", -EBADMSG },
	{ "cpu:type:x86,ven0000fam0006:feature:", -EBADMSG },
};

static void test_modalias(void)
{
	for (size_t i = 0; i < ELEMENTSOF(modalias_cases); i++) {
		const char *name = modalias_cases[i].text;
		CpuIdentity id = { .vendor = _CPU_VENDOR_INVALID };
		int r;

		r = cpuid_parse_modalias(modalias_cases[i].text, &id);
		check_ctx(name, r == modalias_cases[i].ret);
		if (r < 0 || modalias_cases[i].ret < 0) {
			check_ctx(name, id.vendor == _CPU_VENDOR_INVALID);
			continue;
		}
		check_ctx(name, id.source == IDENTITY_SOURCE_MODALIAS);
		check_ctx(name, id.vendor == modalias_cases[i].vendor);
		check_str(id.arch, "x86");
		check_ctx(name, id.have_family && !id.have_stepping);
		check_int(id.family, modalias_cases[i].family);
		check_int(id.model, modalias_cases[i].model);
		check_str(id.vendor_string, modalias_cases[i].vendor_string);
		check_str(id.brand, "");
	}
}

/* ---- a sysroot: proc/cpuinfo, else the modalias ---- */

static char *tmp_dir(void)
{
	char tmpl[] = "/tmp/test-cpuid.XXXXXX";

	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		exit(EXIT_FAILURE);
	}
	return strdup(tmpl);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static void put(int root, const char *path, const char *text)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = strchr(dir, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		(void)mkdirat(root, dir, 0755);
		*slash = '/';
	}
	check_ctx(path, create_file_at(root, path, text, 0644) >= 0);
}

#define CPUINFO_HYGON "processor\t: 0\nvendor_id\t: HygonGenuine\ncpu family\t: 24\nmodel\t\t: 7\nstepping\t: 1\n"
#define MODALIAS_AMD "cpu:type:x86,ven0002fam001Amod0011:feature:,0000\n"

static const struct {
	const char *name;
	const char *cpuinfo, *modalias;   /* NULL: no such file */
	int ret;
	IdentitySource source;
	CpuVendor vendor;
} sysroot_cases[] = {
	{ "cpuinfo", CPUINFO_HYGON, MODALIAS_AMD, 0, IDENTITY_SOURCE_CPUINFO, CPU_VENDOR_HYGON },
	{ "cpuinfo it cannot parse: the modalias", "processor\t: 0\n", MODALIAS_AMD, 0, IDENTITY_SOURCE_MODALIAS,
	  CPU_VENDOR_AMD },
	{ "no cpuinfo: the modalias", NULL, MODALIAS_AMD, 0, IDENTITY_SOURCE_MODALIAS, CPU_VENDOR_AMD },
	{ "cpuinfo only", CPUINFO_HYGON, NULL, 0, IDENTITY_SOURCE_CPUINFO, CPU_VENDOR_HYGON },

	/* malformed or missing */
	{ "neither file", NULL, NULL, -ENODATA },
	{ "bad cpuinfo, no modalias", "garbage\n", NULL, -ENODATA },
	{ "no cpuinfo, bad modalias", NULL, "cpu:type:x86,ven\n", -EBADMSG },
	{ "no cpuinfo, an arm modalias", NULL, "cpu:type:aarch64:feature:,0000\n", -EOPNOTSUPP },
};

static void test_sysroot(void)
{
	for (size_t i = 0; i < ELEMENTSOF(sysroot_cases); i++) {
		const char *name = sysroot_cases[i].name;
		_cleanup_free_ char *dir = tmp_dir();
		_cleanup_close_ int root = -EBADF;
		CpuIdentity id = { .vendor = _CPU_VENDOR_INVALID };
		int r;

		check(root_open(dir, &root) == 0);
		if (sysroot_cases[i].cpuinfo)
			put(root, "proc/cpuinfo", sysroot_cases[i].cpuinfo);
		if (sysroot_cases[i].modalias)
			put(root, "sys/devices/system/cpu/modalias", sysroot_cases[i].modalias);

		r = cpuid_identify_sysroot(root, &id);
		check_ctx(name, r == sysroot_cases[i].ret);
		if (r != sysroot_cases[i].ret)
			fprintf(stderr, "  [%s] got %d, want %d\n", name, r, sysroot_cases[i].ret);
		if (r >= 0 && sysroot_cases[i].ret >= 0) {
			check_ctx(name, id.source == sysroot_cases[i].source);
			check_ctx(name, id.vendor == sysroot_cases[i].vendor);
		} else
			check_ctx(name, id.vendor == _CPU_VENDOR_INVALID);

		/* Not live, no dump: cpuid_identify() is the sysroot's answer. */
		id = (CpuIdentity) { .vendor = _CPU_VENDOR_INVALID };
		check_ctx(name, cpuid_identify(root, false, NULL, &id) == sysroot_cases[i].ret);
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
}

/* Only the first processor's block is read: a large machine's cpuinfo is not formatted whole. */
static void test_sysroot_large_cpuinfo(void)
{
	_cleanup_free_ char *dir = tmp_dir();
	_cleanup_close_ int root = -EBADF;
	StrBuf b = {};
	CpuIdentity id;

	check(root_open(dir, &root) == 0);
	strbuf_append(&b, CPUINFO_HYGON);
	for (unsigned cpu = 1; cpu < 1024; cpu++)
		strbuf_appendf(&b, "\nprocessor\t: %u\nvendor_id\t: HygonGenuine\ncpu family\t: 24\nmodel\t\t: 7\n",
			       cpu);
	check(b.len > 16384);
	put(root, "proc/cpuinfo", b.buf);
	strbuf_done(&b);
	check(cpuid_identify_sysroot(root, &id) == 0);
	check(id.vendor == CPU_VENDOR_HYGON && id.family == 0x18 && id.model == 7);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- raw CPUID dumps (libcpuid's format), through libcpuid ---- */

/* Leaf 0 and 1, and the brand string of leaves 0x80000002-4, as cpuid_tool writes them. */
#define DUMP_HYGON                                                   \
	"basic_cpuid[0]=0000000d 6f677948 656e6975 6e65476e\n"       \
	"basic_cpuid[1]=00900f12 00800800 7ed8320b 178bfbff\n"       \
	"ext_cpuid[0]=8000001f 6f677948 656e6975 6e65476e\n"         \
	"ext_cpuid[2]=6f677948 3843206e 31372036 33203538\n"         \
	"ext_cpuid[3]=6f632d32 50206572 65636f72 726f7373\n"         \
	"ext_cpuid[4]=00000000 00000000 00000000 00000000\n"
#define DUMP_AMD(sig)                                                \
	"basic_cpuid[0]=00000010 68747541 444d4163 69746e65\n"       \
	"basic_cpuid[1]=" sig " 00800800 7ed8320b 178bfbff\n"        \
	"ext_cpuid[0]=80000028 68747541 444d4163 69746e65\n"         \
	"ext_cpuid[2]=20444d41 43595045 31373720 34362033\n"         \
	"ext_cpuid[3]=726f432d 72502065 7365636f 00726f73\n"         \
	"ext_cpuid[4]=00000000 00000000 00000000 00000000\n"

static int identify_dump_text(const char *dir, const char *text, CpuIdentity *id)
{
	_cleanup_free_ char *path = strprintf("%s/dump.raw", dir);
	_cleanup_close_ int root = -EBADF;

	check(root_open(dir, &root) == 0);
	(void)unlinkat(root, "dump.raw", 0);
	put(root, "dump.raw", text);
	return cpuid_identify_dump(path, id);
}

/* The version of the libcpuid cpuid.c loads, asked without keeping it loaded. */
static const char *libcpuid_version(void)
{
	static char version[32];

	if (!version[0])
		check_int(cpuid_libcpuid_probe(NULL, version, sizeof(version)), 0);
	return version;
}

/* Whether a file named @name is mapped into this process. */
static bool mapped(const char *name)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/maps", "re");
	char line[512];

	check(f != NULL);
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, name))
			return true;
	return false;
}

static void test_dump(void)
{
	_cleanup_free_ char *dir = tmp_dir();
	_cleanup_free_ char *d = NULL, *missing = strprintf("%s/no-such-dump", dir);
	CpuIdentity id;

	/* Hygon: identified by number, never by libcpuid's codename. */
	check(identify_dump_text(dir, DUMP_HYGON, &id) == 0);
	check(id.source == IDENTITY_SOURCE_DUMP);
	check(id.vendor == CPU_VENDOR_HYGON);
	check_str(id.vendor_string, "HygonGenuine");
	check_str(id.arch, "x86");
	check(id.have_family && id.have_stepping);
	check_int(id.family, 0x18);
	check_int(id.model, 1);
	check_int(id.stepping, 2);
	check_str(id.brand, "Hygon C86 7185 32-core Processor");
	check_str(id.codename, "");
	check_str(id.codename_note, "");
	check(cpu_identity_describe(&id, &d) == 0);
	check_str(d, "hygon family 0x18 model 0x1 stepping 2 (Hygon C86 7185 32-core Processor)");

	/* Milan (0x19/0x01): a part libcpuid names since 0.5.1. */
	check(identify_dump_text(dir, DUMP_AMD("00a00f11"), &id) == 0);
	check(id.vendor == CPU_VENDOR_AMD && id.family == 0x19 && id.model == 1);
	check_str(id.brand, "AMD EPYC 7713 64-Core Processor");
	check(cpuid_codename_known(libcpuid_version(), CPU_VENDOR_AMD, 0x19, 1));
	check(id.codename[0] != '\0');
	check_str(id.codename_note, "");

	/* Genoa (0x19/0x11): no release in the table names it; a note instead of a wrong name. */
	check(identify_dump_text(dir, DUMP_AMD("00a10f11"), &id) == 0);
	check(id.family == 0x19 && id.model == 0x11);
	check_str(id.codename, "");
	free(d);
	d = strprintf("codename unknown to libcpuid %s", libcpuid_version());
	check_str(id.codename_note, d);

	/* malformed or missing (libcpuid warns about lines it does not understand on stderr) */
	id = (CpuIdentity) { .vendor = _CPU_VENDOR_INVALID };
	check_int(cpuid_identify_dump(missing, &id), -ENOENT);
	check_int(identify_dump_text(dir, "not a dump\n", &id), -EBADMSG);
	check_int(identify_dump_text(dir, "", &id), -EBADMSG);
	/* Leaf 1 without leaf 0 (no vendor, no maximum leaf): not a dump of a CPU. */
	check_int(identify_dump_text(dir, "basic_cpuid[1]=00900f12 00800800 7ed8320b 178bfbff\n", &id), -EBADMSG);
	check(id.vendor == _CPU_VENDOR_INVALID);

	/* A dump wins over the sysroot; the root fd is not even looked at. */
	check(identify_dump_text(dir, DUMP_HYGON, &id) == 0);
	free(d);
	d = strprintf("%s/dump.raw", dir);
	check(cpuid_identify(-EBADF, false, d, &id) == 0);
	check(id.source == IDENTITY_SOURCE_DUMP && id.vendor == CPU_VENDOR_HYGON);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- tables ---- */

static void test_tables(void)
{
	static const struct {
		const char *cpuid;
		CpuVendor vendor;
	} cpuid_strings[] = {
		{ "GenuineIntel", CPU_VENDOR_INTEL },
		{ "AuthenticAMD", CPU_VENDOR_AMD },
		{ "HygonGenuine", CPU_VENDOR_HYGON },
		{ "  Shanghai  ", CPU_VENDOR_ZHAOXIN },
		{ "CentaurHauls", CPU_VENDOR_CENTAUR },
		{ "genuineintel", CPU_VENDOR_UNKNOWN },
		{ "AuthenticAMD ", CPU_VENDOR_UNKNOWN },
		{ "", CPU_VENDOR_UNKNOWN },
	};

	for (size_t i = 0; i < ELEMENTSOF(cpuid_strings); i++)
		check_ctx(cpuid_strings[i].cpuid,
			  cpu_vendor_from_cpuid_string(cpuid_strings[i].cpuid) == cpuid_strings[i].vendor);

	for (CpuVendor v = 0; v < _CPU_VENDOR_MAX; v++) {
		const char *s = cpu_vendor_to_string(v);

		check(s != NULL);
		check_int(cpu_vendor_from_string(s), v);
	}
	check_int(cpu_vendor_from_string("Intel"), -EINVAL);
	check_int(cpu_vendor_from_string(""), -EINVAL);
	check(cpu_vendor_to_string(_CPU_VENDOR_MAX) == NULL);
	check(cpu_vendor_to_string(_CPU_VENDOR_INVALID) == NULL);

	for (IdentitySource s = 0; s < _IDENTITY_SOURCE_MAX; s++)
		check_int(identity_source_from_string(identity_source_to_string(s)), s);
	check_str(identity_source_to_string(IDENTITY_SOURCE_DUMP), "cpuid-dump");
	check_int(identity_source_from_string("dump"), -EINVAL);

	check_str(cpuid_arm_part_name(0x41, 0xd85), "Cortex-X925");
	check_str(cpuid_arm_part_name(0x41, 0xd0c), "Neoverse-N1");
	check(cpuid_arm_part_name(0x41, 0xabc) == NULL);
	/* The part numbers are Arm Ltd.'s: another implementer's 0xd0c is another part. */
	check(cpuid_arm_part_name(0x48, 0xd0c) == NULL);
}

/* libcpuid is mapped while it identifies and not after (issue 33). */
static void test_libcpuid_loading(void)
{
	_cleanup_free_ char *dir = tmp_dir();
	CpuIdentity id;

	check(!mapped("libcpuid"));
	check_int(cpuid_libcpuid_probe(NULL, NULL, 0), 0);
	check(!mapped("libcpuid"));
	check(identify_dump_text(dir, DUMP_HYGON, &id) == 0);
	check(id.vendor == CPU_VENDOR_HYGON);
	check(!mapped("libcpuid"));
#if defined(__x86_64__) || defined(__i386__)
	check(cpuid_identify_host(&id) == 0);
	check(id.source == IDENTITY_SOURCE_LIBCPUID);
	check(!mapped("libcpuid"));
#endif
	/* Missing, or a library without libcpuid's functions: -ENOPKG. */
	check_int(cpuid_libcpuid_probe("libtopotune-no-such-library.so.0", NULL, 0), -ENOPKG);
	check_int(cpuid_libcpuid_probe("libc.so.6", NULL, 0), -ENOPKG);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	test_cpuinfo();
	test_modalias();
	test_sysroot();
	test_sysroot_large_cpuinfo();
	test_dump();
	test_libcpuid_loading();
	test_tables();
	return test_end("cpuid");
}
