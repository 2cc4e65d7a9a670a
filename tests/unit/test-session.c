/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * agent/session: the one order of the profile choice (HoldProfile(),
 * SetProfile(), a workload rule, the configuration and its drop-ins, the last
 * matching hardware rule, balanced) with the reason and source each reports;
 * discover -> configure -> compute on a generated 2-core SMT machine and a
 * small configuration tree, on the stock and the patched kernel; and each
 * failure with its message: a root that is missing or tells no CPU, a
 * profile name that is invalid, unknown or does not parse, a topotune.conf
 * or hardware rule that does not parse (the configuration in force stays).
 * argv[1] is tests/sysroot/gen-sysroot.py.
 */
#include <ftw.h>
#include <limits.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "fileio.h"
#include "session.h"
#include "strutil.h"
#include "test.h"

extern char **environ;

/* ---- trees ---- */

typedef struct TreeFile {
	const char *path;
	const char *text;
} TreeFile;

static char *tmp_dir(void)
{
	char tmpl[] = "/tmp/test-session.XXXXXX";

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

static void tree_remove(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write @text to @path below @dir, making @dir and the directories on the way. */
static void put(const char *dir, const char *path, const char *text)
{
	_cleanup_close_ int root = -EBADF;
	char parent[PATH_MAX];

	(void)mkdir(dir, 0755);
	check(root_open(dir, &root) == 0);
	snprintf(parent, sizeof(parent), "%s", path);
	for (char *slash = strchr(parent, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		(void)mkdirat(root, parent, 0755);
		*slash = '/';
	}
	check_ctx(path, create_file_at(root, path, text, 0644) >= 0);
}

static void put_all(const char *dir, const TreeFile *files)
{
	for (const TreeFile *f = files; f && f->path; f++)
		put(dir, f->path, f->text);
}

#define RULES "usr/lib/topotune/hardware.d/"
#define PROFILES "usr/lib/topotune/profiles/"
#define CONF "etc/topotune/topotune.conf"

/* The last matching rule names the profile: 50-intel after 40-smt. */
static const TreeFile rules_tree[] = {
	{ RULES "40-smt.ini", "[match]\nsmt = yes\n\n[profile]\nname = latency\n" },
	{ RULES "50-intel.ini", "[match]\nvendor = intel\n\n[profile]\nname = throughput\n" },
	{}
};
static const TreeFile conf_tree[] = {
	{ CONF, "[daemon]\nprofile = hpc\n" },
	{}
};
static const TreeFile dropin_tree[] = {
	{ CONF ".d/50-persistent.conf", "# set-profile --persistent\n[daemon]\nprofile = database\n" },
	{}
};

/* ---- the choice ---- */

static const MatchFacts intel = { .vendor = "intel", .family = 6, .model = 0x55, .packages = 1, .cpus = 8,
				  .nodes_per_package = 1, .smt = true };
static const MatchFacts amd_smt = { .vendor = "amd", .family = 0x19, .model = 1, .packages = 1, .cpus = 8,
				    .nodes_per_package = 1, .smt = true };
static const MatchFacts amd_nosmt = { .vendor = "amd", .family = 0x19, .model = 1, .packages = 1, .cpus = 4,
				      .nodes_per_package = 1, .smt = false };

static const SessionChoice hold = {
	.hold = "latency", .hold_source = "HoldProfile(latency) by :1.9: trial",
	.manual = "hpc", .manual_source = "SetProfile(hpc) by :1.42",
	.workload = "database", .workload_rule = "comm:postgres",
};
static const SessionChoice manual = {
	.manual = "hpc", .manual_source = "SetProfile(hpc) by :1.42",
	.workload = "database", .workload_rule = "comm:postgres",
};
static const SessionChoice workload = { .workload = "database", .workload_rule = "comm:postgres" };
static const SessionChoice hold_unsourced = { .hold = "latency" };
static const SessionChoice workload_unnamed = { .workload = "database" };
static const SessionChoice none = {};

enum { TREE_EMPTY, TREE_RULES, TREE_CONF, TREE_DROPIN, _TREE_MAX };

static const struct {
	const char *name;
	int tree;                      /* each tree holds the ones before it */
	const MatchFacts *facts;       /* NULL: the machine is unknown */
	const SessionChoice *choice;   /* NULL: none */
	const char *profile, *reason, *source;
	bool configured;
} choice_cases[] = {
	{ "nothing configured", TREE_EMPTY, &intel, NULL, "balanced", "configured", "built-in default", true },
	{ "the last matching rule", TREE_RULES, &intel, NULL, "throughput", "configured",
	  "/usr/lib/topotune/hardware.d/50-intel.ini:5", true },
	{ "an earlier rule when the last does not match", TREE_RULES, &amd_smt, NULL, "latency", "configured",
	  "/usr/lib/topotune/hardware.d/40-smt.ini:5", true },
	{ "no rule matches", TREE_RULES, &amd_nosmt, NULL, "balanced", "configured", "built-in default", true },
	{ "an unknown machine matches no rule", TREE_RULES, NULL, NULL, "balanced", "configured",
	  "built-in default", true },
	{ "topotune.conf over the rules", TREE_CONF, &intel, NULL, "hpc", "configured",
	  "/etc/topotune/topotune.conf:2", true },
	{ "a drop-in over topotune.conf", TREE_DROPIN, &intel, &none, "database", "configured",
	  "/etc/topotune/topotune.conf.d/50-persistent.conf:3", true },
	{ "a workload rule over the configuration", TREE_DROPIN, &intel, &workload, "database",
	  "workload:comm:postgres", "workload rule comm:postgres", false },
	{ "SetProfile() over a workload rule", TREE_DROPIN, &intel, &manual, "hpc", "manual",
	  "SetProfile(hpc) by :1.42", false },
	{ "HoldProfile() over everything", TREE_DROPIN, &intel, &hold, "latency", "hold",
	  "HoldProfile(latency) by :1.9: trial", false },
	{ "a hold nobody signed", TREE_EMPTY, &intel, &hold_unsourced, "latency", "hold", "", false },
	{ "a workload without its rule's text", TREE_EMPTY, &intel, &workload_unnamed, "database", "workload:n/a",
	  "workload rule n/a", false },
};

static void test_choice(void)
{
	static const TreeFile *const layers[_TREE_MAX] = { NULL, rules_tree, conf_tree, dropin_tree };
	char *dirs[_TREE_MAX] = {};
	Config *configs[_TREE_MAX] = {};
	HardwareRule **rules[_TREE_MAX] = {};
	size_t n_rules[_TREE_MAX] = {};

	for (int t = 0; t < _TREE_MAX; t++) {
		_cleanup_free_ char *err = NULL;
		_cleanup_close_ int fd = -EBADF;

		dirs[t] = tmp_dir();
		for (int l = 0; l <= t; l++)
			put_all(dirs[t], layers[l]);
		check(root_open(dirs[t], &fd) == 0);
		check(config_load(fd, &configs[t], &err) == 0);
		check(hardware_rules_load(fd, &rules[t], &n_rules[t], &err) == 0);
		if (err)
			fprintf(stderr, "  tree %d: %s\n", t, err);
	}

	for (size_t i = 0; i < ELEMENTSOF(choice_cases); i++) {
		const char *name = choice_cases[i].name;
		int t = choice_cases[i].tree;
		_cleanup_(session_selection_done) SessionSelection sel = {};

		check_ctx(name, session_select_profile(configs[t], rules[t], n_rules[t], choice_cases[i].facts,
						       choice_cases[i].choice, &sel) == 0);
		check_str(sel.name, choice_cases[i].profile);
		check_str(sel.reason, choice_cases[i].reason);
		check_str(sel.source, choice_cases[i].source);
		check_ctx(name, sel.configured == choice_cases[i].configured);
		/* A choice above the configuration has no file and line. */
		if (!sel.configured)
			check_ctx(name, !sel.origin.file);
	}

	for (int t = 0; t < _TREE_MAX; t++) {
		config_free(configs[t]);
		hardware_rules_free(rules[t], n_rules[t]);
		tree_remove(dirs[t]);
		free(dirs[t]);
	}
}

/* ---- discover, configure, compute ---- */

static const char *gen_sysroot;

/* The 2-vCPU guest with SMT: two cores, four CPUs. */
static void make_machine(const char *dir)
{
	char *argv[] = {
		(char *)"python3", (char *)gen_sysroot, (char *)"-q", (char *)"--set",
		(char *)"topology.threads_per_core=2", (char *)"vm-2cpu", (char *)dir, NULL,
	};
	pid_t pid;
	int status;

	if (posix_spawnp(&pid, "python3", NULL, NULL, argv, environ) != 0 || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "cannot generate the machine with %s\n", gen_sysroot);
		exit(EXIT_FAILURE);
	}
}

static const TreeFile config_tree[] = {
	{ PROFILES "balanced.ini", "[profile]\ndescription = the default\n" },
	{ PROFILES "throughput.ini", "[profile]\ndescription = throughput\n\n[scheduler]\nsmt_buddy_assist = on\n" },
	{ PROFILES "broken.ini", "[profile]\ndescription = broken\n[scheduler]\nsmt_buddy_assist = sometimes\n" },
	{ RULES "50-intel.ini", "[match]\nvendor = intel\n\n[profile]\nname = throughput\n" },
	{}
};

static void check_compute(Session *s, const char *name, int want_r, const char *want_profile, StepAction smt_action,
			  const char *want_error)
{
	_cleanup_(profile_freep) Profile *p = NULL;
	_cleanup_(plan_freep) Plan *plan = NULL;
	_cleanup_(profile_settings_done) ProfileSettings settings = {};
	_cleanup_free_ char *err = NULL;
	int r;

	r = session_compute(s, name, &p, &settings, &plan, &err);
	check_ctx(strna(name), r == want_r);
	if (r != want_r)
		fprintf(stderr, "  [%s] got %d (%s), want %d\n", strna(name), r, strna(err), want_r);
	if (want_r < 0) {
		check_ctx(strna(name), !p && !plan);
		check_ctx(strna(name), err && startswith(err, want_error));
		if (err && !startswith(err, want_error))
			fprintf(stderr, "  [%s] error: %s\n  want: %s...\n", strna(name), err, want_error);
		return;
	}
	if (r < 0)
		return;
	check_str(p->name, want_profile);
	check_str(plan->profile, want_profile);
	check_ctx(want_profile, plan->steps[SETTING_SMT_BUDDY_ASSIST].action == smt_action);
	if (smt_action != STEP_KEEP) {
		/* The value and where it came from: the profile's file and line. */
		check_int(settings.value[SETTING_SMT_BUDDY_ASSIST].mode, SMT_BUDDY_ON);
		check_str(plan->steps[SETTING_SMT_BUDDY_ASSIST].origin.file,
			  "/usr/lib/topotune/profiles/throughput.ini");
		check_int(plan->steps[SETTING_SMT_BUDDY_ASSIST].origin.line, 5);
	}
}

static void test_compute(void)
{
	_cleanup_free_ char *dir = tmp_dir(), *machine = strprintf("%s/machine", dir),
			    *cfg = strprintf("%s/config", dir);
	_cleanup_(session_done) Session s = SESSION_INIT;
	_cleanup_(session_selection_done) SessionSelection sel = {};
	_cleanup_free_ char *err = NULL;
	Config *in_force;

	make_machine(machine);
	put_all(cfg, config_tree);

	check(session_discover(&s, machine, cfg, false, NULL, SESSION_KERNEL_STOCK, &err) == 0);
	check(s.root_fd >= 0 && s.config_fd >= 0 && s.config_fd != s.root_fd);
	check(s.identity.vendor == CPU_VENDOR_INTEL && s.identity.source == IDENTITY_SOURCE_CPUINFO);
	check_str(s.identity.brand, "QEMU Virtual CPU version 2.5+");
	check_str(s.facts.vendor, "intel");
	check_int(s.facts.family, 6);
	check_int(s.facts.cpus, 4);
	check(s.facts.smt);
	check(!s.config && s.n_rules == 0);

	check(session_configure(&s, &err) == 0);
	check(s.config != NULL);
	check_int(s.n_rules, 1);
	check(session_select(&s, NULL, &sel) == 0);
	check_str(sel.name, "throughput");
	check_str(sel.source, "/usr/lib/topotune/hardware.d/50-intel.ini:5");

	/* No name: the profile session_select() picks; the stock kernel has no SMT_BUDDY_ASSIST. */
	check_compute(&s, NULL, 0, "throughput", STEP_UNSUPPORTED, NULL);
	check_compute(&s, "balanced", 0, "balanced", STEP_KEEP, NULL);
	check_compute(&s, "../throughput", -ENOENT, NULL, 0, "'../throughput' is not a valid profile name");
	check_compute(&s, "", -ENOENT, NULL, 0, "'' is not a valid profile name");
	check_compute(&s, "nosuch", -ENOENT, NULL, 0,
		      "profile 'nosuch' not found in /etc/topotune/profiles or /usr/lib/topotune/profiles");
	check_compute(&s, "broken", -EINVAL, NULL, 0,
		      "/usr/lib/topotune/profiles/broken.ini:4: invalid value 'sometimes' for smt_buddy_assist");

	/* A topotune.conf that does not parse: an error with its line; what was in force stays. */
	in_force = s.config;
	put(cfg, CONF, "[daemon]\nprofile = balanced\nfrobnicate = yes\n");
	free(err);
	err = NULL;
	check(session_configure(&s, &err) < 0);
	check_str(err, "/etc/topotune/topotune.conf:3: unknown key 'frobnicate' in [daemon]");
	check(s.config == in_force);
	check_int(s.n_rules, 1);
	session_selection_done(&sel);
	check(session_select(&s, NULL, &sel) == 0);
	check_str(sel.name, "throughput");

	/* A hardware rule that does not parse: the same. */
	put(cfg, CONF, "[daemon]\nprofile = balanced\n");
	put(cfg, RULES "60-bad.ini", "[match]\nvendor = intel\nsockets = 2\n");
	free(err);
	err = NULL;
	check(session_configure(&s, &err) < 0);
	check_str(err, "/usr/lib/topotune/hardware.d/60-bad.ini:3: unknown key 'sockets' in [match]");
	check(s.config == in_force);
	check_int(s.n_rules, 1);

	/* Fixed: the new configuration replaces the old. */
	check(unlinkat(s.config_fd, RULES "60-bad.ini", 0) == 0);
	check(session_configure(&s, &err) == 0);
	session_selection_done(&sel);
	check(session_select(&s, NULL, &sel) == 0);
	check_str(sel.name, "balanced");
	check_str(sel.source, "/etc/topotune/topotune.conf:2");

	/* The patched kernel's control: the same profile now sets it. */
	session_done(&s);
	check(s.root_fd == -EBADF && s.config_fd == -EBADF && !s.config && !s.topology && !s.rules);
	session_done(&s);
	check(session_discover(&s, machine, cfg, false, NULL, SESSION_KERNEL_PATCHED, &err) == 0);
	check(session_configure(&s, &err) == 0);
	check_compute(&s, "throughput", 0, "throughput", STEP_SET, NULL);

	/* One root for both: no config root given. */
	session_done(&s);
	put_all(machine, config_tree);
	check(session_discover(&s, machine, NULL, false, NULL, SESSION_KERNEL_STOCK, &err) == 0);
	check(s.config_fd == s.root_fd);
	check(session_configure(&s, &err) == 0);
	check_compute(&s, NULL, 0, "throughput", STEP_UNSUPPORTED, NULL);
	session_done(&s);

	tree_remove(dir);
}

/* Every discover failure says which step failed, on what, and why. */
static void test_discover_errors(void)
{
	_cleanup_free_ char *dir = tmp_dir(), *cpuinfo_only = strprintf("%s/cpuinfo-only", dir),
			    *empty = strprintf("%s/empty", dir), *dump = strprintf("%s/no-dump", dir);
	static const char missing[] = "/nonexistent/topotune-test-session";
	const struct {
		const char *root, *config_root, *dump;
		int ret;
		const char *error;
	} cases[] = {
		{ missing, NULL, NULL, -ENOENT,
		  "Failed to open root directory /nonexistent/topotune-test-session: No such file or directory" },
		{ empty, missing, NULL, -ENOENT,
		  "Failed to open configuration root /nonexistent/topotune-test-session: No such file or directory" },
		{ empty, NULL, NULL, -ENODATA,
		  "Failed to identify the CPU from the sysroot's proc/cpuinfo: No data available" },
		{ empty, NULL, dump, -ENOENT, NULL },
		{ cpuinfo_only, NULL, NULL, -ENOENT, NULL },
	};

	check(mkdir(empty, 0755) == 0);
	put(cpuinfo_only, "proc/cpuinfo",
	    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n");
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_(session_done) Session s = SESSION_INIT;
		_cleanup_free_ char *err = NULL, *want = NULL;
		int r;

		r = session_discover(&s, cases[i].root, cases[i].config_root, false, cases[i].dump,
				     SESSION_KERNEL_STOCK, &err);
		check_int(r, cases[i].ret);
		if (cases[i].error)
			want = strdup(cases[i].error);
		else if (cases[i].dump)
			want = strprintf("Failed to identify the CPU from %s: No such file or directory", dump);
		else
			want = strprintf("Failed to read the CPU topology below %s/sys/devices/system/cpu: "
					 "No such file or directory", cpuinfo_only);
		check_str(err, want);
		/* Nothing half-made is left for the caller to trust. */
		check(!s.topology && !s.config);
	}
	tree_remove(dir);
}

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s GEN-SYSROOT\n", argv[0]);
		return 2;
	}
	gen_sysroot = argv[1];
	test_choice();
	test_compute();
	test_discover_errors();
	return test_end("session");
}
