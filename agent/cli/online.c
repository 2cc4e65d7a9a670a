/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * topotunectl verbs that talk to topotuned over D-Bus (org.topotune1):
 * status, layout, profiles, apply, revert, verify, set-profile. They print
 * readable tables, or JSON with --json, and never touch the system
 * themselves. Depends on basic (JSON, strings) and sd-bus.
 */
#include <getopt.h>
#include <signal.h>
#include <sys/wait.h>
#include "sd-bus-dl.h"
#include <unistd.h>

#include "ctl.h"
#include "cpuset.h"
#include "json.h"
#include "log.h"
#include "online.h"
#include "planner.h"
#include "strutil.h"

#define DEST ONLINE_DEST
#define PATH ONLINE_PATH
#define IFACE ONLINE_IFACE

/* A client of the bus at @address (--bus-address). */
static int bus_open_address(const char *address, sd_bus **ret)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	int r;

	r = sd_bus_new(&bus);
	if (r < 0)
		return r;
	r = sd_bus_set_address(bus, address);
	if (r < 0)
		return r;
	r = sd_bus_set_bus_client(bus, true);
	if (r < 0)
		return r;
	r = sd_bus_start(bus);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(bus);
	return 0;
}

static int bus_open(const CtlContext *ctx, sd_bus **ret)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	int has = 0, r;

	r = sd_bus_dl_open();
	if (r < 0) {
		log_debug_errno(r, "Failed to load libsystemd.so.0 for sd-bus: %m");
		return -ENOTCONN;
	}
	if (ctx->bus_address)
		r = bus_open_address(ctx->bus_address, &bus);
	else
		r = sd_bus_open_system(&bus);
	if (r < 0) {
		log_debug_errno(r, "Failed to connect to the bus: %m");
		return -ENOTCONN;
	}
	r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
			       "NameHasOwner", &error, &reply, "s", DEST);
	if (r >= 0)
		r = sd_bus_message_read(reply, "b", &has);
	if (r < 0 || !has)
		return -ESRCH;
	(void)sd_bus_set_allow_interactive_authorization(bus, isatty(STDIN_FILENO) > 0);
	*ret = TAKE_PTR(bus);
	return 0;
}

int online_connect(const CtlContext *ctx, sd_bus **ret)
{
	int r = bus_open(ctx, ret);

	if (r == -ENOTCONN) {
		log_error("topotuned is not running (cannot connect to the %s bus).", ctx->bus_address ? "given" : "system");
		return 2;
	}
	if (r < 0) {
		log_error("topotuned is not running (org.topotune1 not on the bus).");
		return 2;
	}
	return 0;
}

bool online_daemon_available(const CtlContext *ctx)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;

	return bus_open(ctx, &bus) >= 0;
}

/*
 * D-Bus strings are UTF-8: sd-bus refuses anything else with a bare
 * "Invalid argument". Say what is wrong before asking it. 0 or 2.
 */
static int argument_utf8(const char *verb, const char *what, const char *s)
{
	_cleanup_free_ char *e = NULL;

	if (utf8_is_valid(s))
		return 0;
	e = text_bounded(s, 64);
	log_error("%s: the %s '%s' is not valid UTF-8 (D-Bus carries text only as UTF-8; invalid bytes shown as \\xNN)",
		  verb, what, strna(e));
	return 2;
}

int online_call_failed(const char *what, const sd_bus_error *e, int r)
{
	if (sd_bus_error_is_set(e))
		log_error("%s failed: %s (%s)", what, e->message ?: "", e->name);
	else
		log_error_errno(r, "%s failed: %m", what);
	return 2;
}

static char *get_string(sd_bus *bus, const char *prop)
{
	char *s = NULL;

	if (sd_bus_get_property_string(bus, DEST, PATH, IFACE, prop, NULL, &s) < 0)
		return NULL;
	return s;
}

static unsigned get_u(sd_bus *bus, const char *prop)
{
	uint32_t u = 0;

	(void)sd_bus_get_property_trivial(bus, DEST, PATH, IFACE, prop, NULL, 'u', &u);
	return u;
}

static bool get_b(sd_bus *bus, const char *prop)
{
	int b = 0;

	(void)sd_bus_get_property_trivial(bus, DEST, PATH, IFACE, prop, NULL, 'b', &b);
	return b;
}

typedef struct SettingRow {
	const char *name, *desired, *actual, *source;
	int in_sync;
} SettingRow;

typedef struct TopologyInfo {
	unsigned packages, nodes, cores, threads, llcs, nodes_per_package;
	int smt;
} TopologyInfo;

static int read_topology(sd_bus *bus, TopologyInfo *t)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	int r;

	r = sd_bus_get_property(bus, DEST, PATH, IFACE, "Topology", NULL, &reply, "a{sv}");
	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		const char *key, *contents;
		char type;
		uint32_t u = 0;
		int b = 0;

		r = sd_bus_message_read(reply, "s", &key);
		if (r >= 0)
			r = sd_bus_message_peek_type(reply, &type, &contents);
		if (r < 0)
			return r;
		if (streq(contents, "b"))
			r = sd_bus_message_read(reply, "v", "b", &b);
		else if (streq(contents, "u"))
			r = sd_bus_message_read(reply, "v", "u", &u);
		else
			r = sd_bus_message_skip(reply, "v");
		if (r < 0)
			return r;
		if (streq(key, "packages"))
			t->packages = u;
		else if (streq(key, "nodes"))
			t->nodes = u;
		else if (streq(key, "cores"))
			t->cores = u;
		else if (streq(key, "threads"))
			t->threads = u;
		else if (streq(key, "llcs"))
			t->llcs = u;
		else if (streq(key, "nodes_per_package"))
			t->nodes_per_package = u;
		else if (streq(key, "smt"))
			t->smt = b;
		r = sd_bus_message_exit_container(reply);
		if (r < 0)
			return r;
	}
	return r;
}

/* What status shows, as the daemon's properties say. */
typedef struct StatusInfo {
	char *state, *profile, *reason, *source, *vendor, *name, *isolated, *housekeeping, *cmdline, *version;
	char **reasons;
	unsigned family, model;
	bool reboot;
	TopologyInfo topology;
	sd_bus_message *settings;    /* the strings of @rows live here */
	SettingRow *rows;
	size_t n_rows;
} StatusInfo;

static void status_info_done(StatusInfo *i)
{
	free(i->state);
	free(i->profile);
	free(i->reason);
	free(i->source);
	free(i->vendor);
	free(i->name);
	free(i->isolated);
	free(i->housekeeping);
	free(i->cmdline);
	free(i->version);
	strv_free(i->reasons);
	sd_bus_message_unref(i->settings);
	free(i->rows);
}

/* Settings, as many rows as the daemon has settings; 0, or 2 (logged). */
static int status_read_settings(sd_bus *bus, StatusInfo *i)
{
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	int r;

	r = sd_bus_get_property(bus, DEST, PATH, IFACE, "Settings", &error, &i->settings, "a(sssbs)");
	if (r < 0)
		return online_call_failed("Reading Settings", &error, r);
	r = sd_bus_message_enter_container(i->settings, 'a', "(sssbs)");
	while (r >= 0) {
		SettingRow row, *more;

		r = sd_bus_message_read(i->settings, "(sssbs)", &row.name, &row.desired, &row.actual, &row.in_sync,
					&row.source);
		if (r <= 0)
			break;
		more = reallocarray(i->rows, i->n_rows + 1, sizeof(SettingRow));
		if (!more)
			return log_oom(), 2;
		i->rows = more;
		i->rows[i->n_rows++] = row;
	}
	if (r < 0)
		return online_call_failed("Reading Settings", &error, r);
	return 0;
}

/* 0, or 2 (logged) when not even State can be read. */
static int status_read(sd_bus *bus, StatusInfo *i)
{
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

	i->state = get_string(bus, "State");
	if (!i->state)
		return online_call_failed("Reading State", &error, -EIO);
	i->profile = get_string(bus, "ActiveProfile");
	i->reason = get_string(bus, "ActiveProfileReason");
	i->source = get_string(bus, "ActiveProfileSource");
	i->vendor = get_string(bus, "CpuVendor");
	i->name = get_string(bus, "CpuName");
	i->isolated = get_string(bus, "IsolatedCpus");
	i->housekeeping = get_string(bus, "HousekeepingCpus");
	i->cmdline = get_string(bus, "PendingKernelCmdline");
	i->version = get_string(bus, "Version");
	i->family = get_u(bus, "CpuFamily");
	i->model = get_u(bus, "CpuModel");
	i->reboot = get_b(bus, "RebootRequired");
	(void)sd_bus_get_property_strv(bus, DEST, PATH, IFACE, "StateReasons", NULL, &i->reasons);
	(void)read_topology(bus, &i->topology);
	return status_read_settings(bus, i);
}

static void status_print_json(const StatusInfo *i)
{
	const TopologyInfo *t = &i->topology;
	JsonWriter w;

	ctl_json_begin(&w);
	json_key(&w, "state");
	json_string(&w, i->state);
	json_key(&w, "state_reasons");
	json_begin_array(&w);
	STRV_FOREACH(s, i->reasons)
		json_string(&w, *s);
	json_end_array(&w);
	json_key(&w, "profile");
	json_string(&w, i->profile);
	json_key(&w, "profile_reason");
	json_string(&w, i->reason);
	json_key(&w, "profile_origin");
	json_string(&w, i->source && *i->source ? i->source : NULL);
	json_key(&w, "version");
	json_string(&w, i->version);
	json_key(&w, "cpu");
	json_row(&w, JSON_STR("vendor", i->vendor), JSON_INT("family", i->family), JSON_INT("model", i->model),
		 JSON_STR("name", i->name));
	json_key(&w, "topology");
	json_row(&w, JSON_INT("packages", t->packages), JSON_INT("nodes", t->nodes),
		 JSON_INT("nodes_per_package", t->nodes_per_package), JSON_INT("cores", t->cores),
		 JSON_INT("threads", t->threads), JSON_INT("llcs", t->llcs), JSON_BOOL("smt", t->smt));
	json_key(&w, "settings");
	json_begin_array(&w);
	for (size_t k = 0; k < i->n_rows; k++)
		json_row(&w, JSON_STR("setting", i->rows[k].name), JSON_STR("desired", i->rows[k].desired),
			 JSON_STR("actual", i->rows[k].actual), JSON_BOOL("in_sync", i->rows[k].in_sync),
			 JSON_STR("origin", i->rows[k].source));
	json_end_array(&w);
	json_key(&w, "isolated_cpus");
	json_string(&w, i->isolated);
	json_key(&w, "housekeeping_cpus");
	json_string(&w, i->housekeeping);
	json_key(&w, "reboot_required");
	json_bool(&w, i->reboot);
	json_key(&w, "pending_kernel_cmdline");
	json_string(&w, i->cmdline);
	ctl_json_end(&w);
}

static void status_print_text(const StatusInfo *i)
{
	const TopologyInfo *t = &i->topology;
	const char *source = i->source;

	printf("       State: %s\n", i->state);
	printf("     Profile: %s", tty_text(strna(i->profile)));
	if (i->reason && *i->reason)
		printf(" (%s%s%s)", tty_text(i->reason), source && *source ? ", " : "",
		       source && *source ? tty_text(source) : "");
	printf("\n");
	printf("         CPU: %s family 0x%x model 0x%x (%s)\n", tty_text(strna(i->vendor)), i->family, i->model,
	       tty_text(strna(i->name)));
	printf("    Topology: %u package%s, %u node%s (%u per package), %u cores, %u CPUs, %u LLCs, SMT %s\n",
	       t->packages, t->packages == 1 ? "" : "s", t->nodes, t->nodes == 1 ? "" : "s", t->nodes_per_package,
	       t->cores, t->threads, t->llcs, t->smt ? "on" : "off");
	printf("    Isolated: %s\n", i->isolated && *i->isolated ? i->isolated : "none");
	printf("Housekeeping: %s\n", strna(i->housekeeping));
	printf("      Reboot: %s%s%s\n", i->reboot ? "required, add to the kernel command line: " : "not required",
	       i->reboot ? strempty(i->cmdline) : "", "");
	printf("    Settings:\n      %-20s %-14s %-14s %-5s %s\n", "SETTING", "DESIRED", "ACTUAL", "SYNC", "SOURCE");
	for (size_t k = 0; k < i->n_rows; k++)
		printf("      %-20s %-14s %-14s %-5s %s\n", i->rows[k].name, i->rows[k].desired,
		       tty_text(i->rows[k].actual), i->rows[k].in_sync ? "yes" : "NO", tty_text(i->rows[k].source));
	if (i->reasons && *i->reasons) {
		printf("     Reasons:\n");
		STRV_FOREACH(s, i->reasons)
			printf("      %s\n", tty_text(*s));
	}
}

int verb_status(const CtlContext *ctx, int argc, char *argv[])
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(status_info_done) StatusInfo info = {};
	bool json = ctx->json;
	int r;

	if (parse_json_option(argc, argv, &json) < 0)
		return 2;
	r = online_connect(ctx, &bus);
	if (r)
		return r;
	r = status_read(bus, &info);
	if (r)
		return r;
	if (json)
		status_print_json(&info);
	else
		status_print_text(&info);
	return 0;
}

/* After a mutating call with --json: what the daemon says now. */
static void result_json(sd_bus *bus, const char *verb)
{
	_cleanup_free_ char *state = get_string(bus, "State"), *profile = get_string(bus, "ActiveProfile");
	_cleanup_strv_free_ char **reasons = NULL;
	JsonWriter w;

	(void)sd_bus_get_property_strv(bus, DEST, PATH, IFACE, "StateReasons", NULL, &reasons);
	ctl_json_begin(&w);
	json_key(&w, "command");
	json_string(&w, verb);
	json_key(&w, "state");
	json_string(&w, state);
	json_key(&w, "state_reasons");
	json_begin_array(&w);
	STRV_FOREACH(x, reasons)
		json_string(&w, *x);
	json_end_array(&w);
	json_key(&w, "profile");
	json_string(&w, profile && *profile ? profile : NULL);
	ctl_json_end(&w);
}

/*
 * Call a mutating method (its last argument is "interactive"); with
 * --json print the daemon's state afterwards. Errors go to stderr, exit 2.
 */
static int simple_call(const CtlContext *ctx, bool json, const char *verb, const char *method, const char *sig, ...)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	va_list ap;
	int r;

	r = online_connect(ctx, &bus);
	if (r)
		return r;
	r = sd_bus_message_new_method_call(bus, &m, DEST, PATH, IFACE, method);
	if (r < 0)
		return online_call_failed(method, &error, r);
	va_start(ap, sig);
	r = sd_bus_message_appendv(m, sig, ap);
	va_end(ap);
	if (r >= 0)
		r = sd_bus_message_set_allow_interactive_authorization(m, isatty(STDIN_FILENO) > 0);
	if (r < 0)
		return online_call_failed(method, &error, r);
	r = sd_bus_call(bus, m, 150 * 1000000ULL, &error, &reply);
	if (r < 0)
		return online_call_failed(method, &error, r);
	if (json)
		result_json(bus, verb);
	return 0;
}

int verb_apply(const CtlContext *ctx, int argc, char *argv[])
{
	bool json = ctx->json;

	if (parse_json_option(argc, argv, &json) < 0)
		return 2;
	return simple_call(ctx, json, argv[0], "Apply", "b", isatty(STDIN_FILENO) > 0);
}

int verb_revert(const CtlContext *ctx, int argc, char *argv[])
{
	bool json = ctx->json;

	if (parse_json_option(argc, argv, &json) < 0)
		return 2;
	return simple_call(ctx, json, argv[0], "Revert", "b", isatty(STDIN_FILENO) > 0);
}

int verb_reload(const CtlContext *ctx, int argc, char *argv[])
{
	bool json = ctx->json;

	if (parse_json_option(argc, argv, &json) < 0)
		return 2;
	return simple_call(ctx, json, argv[0], "ReloadConfiguration", "b", isatty(STDIN_FILENO) > 0);
}

int verb_set_profile(const CtlContext *ctx, int argc, char *argv[])
{
	static const struct option options[] = {
		{ "persistent", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{}
	};
	bool persistent = false, json = ctx->json;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "pj", options, NULL)) >= 0)
		if (c == 'p')
			persistent = true;
		else if (c == 'j')
			json = true;
		else
			return 2;
	if (argc - optind != 1)
		return log_error("set-profile: expected one profile name (see 'topotunectl profiles')"), 2;
	if (argument_utf8(argv[0], "profile name", argv[optind]))
		return 2;
	if (persistent)
		return simple_call(ctx, json, argv[0], "SetProfilePersistent", "sb", argv[optind],
				   isatty(STDIN_FILENO) > 0);
	return simple_call(ctx, json, argv[0], "SetProfile", "sb", argv[optind], isatty(STDIN_FILENO) > 0);
}

int verb_auto_profile(const CtlContext *ctx, int argc, char *argv[])
{
	bool json = ctx->json;

	if (parse_json_option(argc, argv, &json) < 0)
		return 2;
	return simple_call(ctx, json, argv[0], "AutoProfile", "b", isatty(STDIN_FILENO) > 0);
}

/*
 * topotunectl hold [--reason TEXT] PROFILE -- COMMAND...: hold PROFILE
 * (HoldProfile) while COMMAND runs, as systemd-inhibit holds a lock. The
 * hold ends with COMMAND (ReleaseProfile), or when this process goes away
 * for any reason: topotuned follows its bus connection. Exits with
 * COMMAND's status; 2 when the hold is refused.
 */
int verb_hold(const CtlContext *ctx, int argc, char *argv[])
{
	static const struct option options[] = {
		{ "reason", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{}
	};
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	_cleanup_free_ char *reason = NULL;
	const char *profile;
	uint32_t cookie;
	int c, r, status;
	pid_t pid;

	optind = 0;
	/* "+": options end at PROFILE; COMMAND's own options are its. */
	while ((c = getopt_long(argc, argv, "+r:j", options, NULL)) >= 0)
		if (c == 'r') {
			free(reason);
			reason = strdup(optarg);
			if (!reason)
				return log_oom(), 2;
		} else if (c == 'j')
			return log_error("hold has no JSON output: what it prints is COMMAND's"), 2;
		else
			return 2;
	if (ctx->json)
		return log_error("hold has no JSON output: what it prints is COMMAND's"), 2;
	if (optind >= argc)
		return log_error("hold: expected PROFILE -- COMMAND..."), 2;
	profile = argv[optind++];
	if (optind < argc && streq(argv[optind], "--"))
		optind++;
	if (optind >= argc)
		return log_error("hold: expected a COMMAND to run while %s is held", profile), 2;
	if (!reason) {
		reason = strv_join(argv + optind, " ");
		if (!reason)
			return log_oom(), 2;
	}
	if (argument_utf8("hold", "profile name", profile) || argument_utf8("hold", "reason", reason))
		return 2;

	r = online_connect(ctx, &bus);
	if (r)
		return r;
	r = sd_bus_call_method(bus, DEST, PATH, IFACE, "HoldProfile", &error, &reply, "ssb", profile, reason,
			       isatty(STDIN_FILENO) > 0);
	if (r >= 0)
		r = sd_bus_message_read(reply, "u", &cookie);
	if (r < 0)
		return online_call_failed("HoldProfile", &error, r);
	log_debug("Holding profile %s (hold %u) while %s runs.", profile, cookie, argv[optind]);

	pid = fork();
	if (pid < 0)
		return log_error_errno(-errno, "fork: %m"), 2;
	if (pid == 0) {
		/* The child must not share the bus connection: it never touches it, and exec closes it. */
		execvp(argv[optind], argv + optind);
		log_error_errno(-errno, "%s: %m", argv[optind]);
		_exit(127);
	}
	/* Ctrl-C reaches COMMAND (the terminal's process group); wait for it to end, then release. */
	(void)signal(SIGINT, SIG_IGN);
	(void)signal(SIGQUIT, SIG_IGN);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return log_error_errno(-errno, "waitpid: %m"), 2;

	sd_bus_error_free(&error);
	r = sd_bus_call_method(bus, DEST, PATH, IFACE, "ReleaseProfile", &error, NULL, "u", cookie);
	if (r < 0)
		/* Revert() or an administrator may have ended it already: said, not an error of COMMAND's. */
		log_warning("ReleaseProfile(%u): %s", cookie, error.message ?: strerror(-r));
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/*
 * A StateReasons entry about a setting the daemon could not apply
 * ("SETTING: unsupported|refused|pending-reboot: why"): its setting, or NULL.
 */
static const char *not_applied_setting(const char *reason, char **ret_setting)
{
	const char *colon = strchr(reason, ':');
	_cleanup_free_ char *name = NULL;

	if (!colon)
		return NULL;
	name = strndup(reason, (size_t)(colon - reason));
	if (!name || setting_id_from_string(name) < 0)
		return NULL;
	if (!startswith(colon, ": unsupported:") && !startswith(colon, ": refused:") &&
	    !startswith(colon, ": pending-reboot:"))
		return NULL;
	*ret_setting = TAKE_PTR(name);
	return colon + 2;
}

int online_metrics(const CtlContext *ctx, int argc, char *argv[])
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	const char *text;
	int r;

	if (argc > 1 || ctx->json)
		return log_error("metrics takes no arguments; its output is the Prometheus text format, not JSON"), 2;
	r = online_connect(ctx, &bus);
	if (r)
		return r;
	r = sd_bus_call_method(bus, DEST, PATH, IFACE, "Metrics", &error, &reply, "");
	if (r >= 0)
		r = sd_bus_message_read(reply, "s", &text);
	if (r < 0)
		return online_call_failed("Metrics", &error, r);
	/* Already the exposition format, valid UTF-8: printed as it is, for a collector to read. */
	fputs(text, stdout);
	return fflush(stdout) == 0 ? 0 : 2;
}

int verb_verify(const CtlContext *ctx, int argc, char *argv[])
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	_cleanup_strv_free_ char **reasons = NULL;
	bool json = ctx->json;
	JsonWriter w;
	int ok = 0, r;
	const char *s, *want, *got;

	if (parse_json_option(argc, argv, &json) < 0)
		return 2;
	r = online_connect(ctx, &bus);
	if (r)
		return r;
	r = sd_bus_call_method(bus, DEST, PATH, IFACE, "Verify", &error, &reply, "");
	if (r < 0)
		return online_call_failed("Verify", &error, r);
	r = sd_bus_message_read(reply, "b", &ok);
	if (r >= 0)
		r = sd_bus_message_enter_container(reply, 'a', "(sss)");
	if (r < 0)
		return online_call_failed("Verify", &error, r);
	if (json) {
		ctl_json_begin(&w);
		json_key(&w, "in_sync");
		json_bool(&w, ok);
		json_key(&w, "mismatches");
		json_begin_array(&w);
	}
	while ((r = sd_bus_message_read(reply, "(sss)", &s, &want, &got)) > 0) {
		if (json)
			json_row(&w, JSON_STR("setting", s), JSON_STR("desired", want), JSON_STR("actual", got));
		else
			printf("drift: %s is %s, wanted %s\n", s, tty_text(got), want);
	}
	if (r < 0)
		return online_call_failed("Verify", &error, r);
	/*
	 * What the profile asks for and the daemon left out (the kernel lacks
	 * it, or it waits for a reboot) is not drift: shown, exit status kept.
	 */
	(void)sd_bus_get_property_strv(bus, DEST, PATH, IFACE, "StateReasons", NULL, &reasons);
	if (json) {
		json_end_array(&w);
		json_key(&w, "not_applied");
		json_begin_array(&w);
	} else if (ok)
		printf("in sync\n");
	STRV_FOREACH(reason, reasons) {
		_cleanup_free_ char *setting = NULL;
		const char *why = not_applied_setting(*reason, &setting);

		if (!why)
			continue;
		if (json)
			json_row(&w, JSON_STR("setting", setting), JSON_STR("reason", why));
		else
			printf("not applied: %s: %s\n", setting, why);
	}
	if (json) {
		json_end_array(&w);
		ctl_json_end(&w);
	}
	return ok ? 0 : 1;
}

int online_profiles(const CtlContext *ctx, int argc, char *argv[])
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	_cleanup_free_ char *active = NULL;
	const char *name, *desc, *path;
	bool json = ctx->json;
	JsonWriter w;
	int r;

	if (parse_json_option(argc, argv, &json) < 0)
		return 2;
	r = online_connect(ctx, &bus);
	if (r)
		return r;
	active = get_string(bus, "ActiveProfile");
	r = sd_bus_call_method(bus, DEST, PATH, IFACE, "ListProfiles", &error, &reply, "");
	if (r < 0)
		return online_call_failed("ListProfiles", &error, r);
	r = sd_bus_message_enter_container(reply, 'a', "(sss)");
	if (json) {
		ctl_json_begin(&w);
		json_key(&w, "source");
		json_string(&w, "topotuned");
		json_key(&w, "profile");
		json_string(&w, active && *active ? active : NULL);
		json_key(&w, "profiles");
		json_begin_array(&w);
	}
	while (r >= 0 && (r = sd_bus_message_read(reply, "(sss)", &name, &desc, &path)) > 0)
		if (json)
			json_row(&w, JSON_STR("name", name), JSON_STR("description", desc), JSON_STR("path", path));
		else
			printf("%c %-12s %-45s %s\n", streq_ptr(active, name) ? '*' : ' ', tty_text(name),
			       tty_text(path), tty_text(desc));
	if (json) {
		json_end_array(&w);
		ctl_json_end(&w);
	}
	if (r < 0)
		return online_call_failed("ListProfiles", &error, r);
	return 0;
}

static int layout_cpu(sd_bus *bus, unsigned cpu, bool json)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	JsonWriter w;
	int r;

	r = sd_bus_call_method(bus, DEST, PATH, IFACE, "GetCpuDomains", &error, &reply, "u", cpu);
	if (r < 0)
		return online_call_failed("GetCpuDomains", &error, r);
	r = sd_bus_message_enter_container(reply, 'a', "(ussas)");
	if (json) {
		/* The shape of the offline layout --json --cpu N: one entry in "cpus". */
		ctl_json_begin(&w);
		json_key(&w, "source");
		json_string(&w, "topotuned");
		json_key(&w, "cpus");
		json_begin_array(&w);
		json_begin_object(&w);
		json_key(&w, "cpu");
		json_int(&w, cpu);
		json_key(&w, "domains");
		json_begin_array(&w);
	} else
		printf("cpu%u:\n", cpu);
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'r', "ussas")) > 0) {
		_cleanup_strv_free_ char **attrs = NULL;
		const char *name, *flags;
		uint32_t level;

		r = sd_bus_message_read(reply, "uss", &level, &name, &flags);
		if (r >= 0)
			r = sd_bus_message_read_strv(reply, &attrs);
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
		if (r < 0)
			break;
		if (json)
			json_row(&w, JSON_INT("level", level), JSON_STR("name", name),
				 JSON_STR("span", attrs && attrs[0] ? attrs[0] : ""), JSON_STR("flags", flags),
				 JSON_STRV("attributes", attrs && attrs[0] ? attrs + 1 : NULL));
		else {
			CpuSet span = {};
			_cleanup_free_ char *rest = NULL;
			StrBuf b = {};

			if (attrs && attrs[0])
				(void)cpuset_parse_list(attrs[0], &span, NULL);
			STRV_FOREACH(a, attrs && attrs[0] ? attrs + 1 : NULL)
				strbuf_appendf(&b, "%s%s", b.len ? " " : "", *a);
			(void)strbuf_steal(&b, &rest);
			printf("  %u %-5s %4u cpus  %-28s %s\n", level, name, cpuset_count(&span),
			       attrs && attrs[0] ? attrs[0] : "", strempty(rest));
			cpuset_done(&span);
		}
	}
	if (json) {
		json_end_array(&w);
		json_end_object(&w);
		json_end_array(&w);
		ctl_json_end(&w);
	}
	if (r < 0)
		return online_call_failed("GetCpuDomains", &error, r);
	return 0;
}

static int layout_all(sd_bus *bus, bool json)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	JsonWriter w;
	int r;

	r = sd_bus_get_property(bus, DEST, PATH, IFACE, "DomainLayout", &error, &reply, "a(usssas)");
	if (r < 0)
		return online_call_failed("Reading DomainLayout", &error, r);
	r = sd_bus_message_enter_container(reply, 'a', "(usssas)");
	if (json) {
		ctl_json_begin(&w);
		json_key(&w, "source");
		json_string(&w, "topotuned");
		json_key(&w, "levels");
		json_begin_array(&w);
	}
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'r', "usssas")) > 0) {
		_cleanup_strv_free_ char **spans = NULL;
		const char *name, *flags, *covered;
		uint32_t level;

		r = sd_bus_message_read(reply, "usss", &level, &name, &flags, &covered);
		if (r >= 0)
			r = sd_bus_message_read_strv(reply, &spans);
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
		if (r < 0)
			break;
		if (json)
			json_row(&w, JSON_INT("level", level), JSON_STR("name", name), JSON_STR("flags", flags),
				 JSON_STR("cpus", covered), JSON_STRV("spans", spans));
		else {
			_cleanup_free_ char *list = NULL;
			StrBuf b = {};

			if (strv_length(spans) <= 4)
				STRV_FOREACH(s, spans)
					strbuf_appendf(&b, "%s%s", b.len ? " " : ": ", *s);
			(void)strbuf_steal(&b, &list);
			printf("level %u %-5s covers %-12s %zu span%s%s\n", level, name, covered, strv_length(spans),
			       strv_length(spans) == 1 ? "" : "s", strempty(list));
		}
	}
	if (json) {
		json_end_array(&w);
		ctl_json_end(&w);
	}
	if (r < 0)
		return online_call_failed("Reading DomainLayout", &error, r);
	return 0;
}

int online_layout(const CtlContext *ctx, int cpu, bool json)
{
	_cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
	int r;

	r = online_connect(ctx, &bus);
	if (r)
		return r;
	return cpu >= 0 ? layout_cpu(bus, (unsigned)cpu, json) : layout_all(bus, json);
}
