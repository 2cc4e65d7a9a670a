/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bus face of topotuned: org.topotune1.Manager at /org/topotune1
 * (DESIGN §6). Properties first, then methods, then signals. A mutating
 * method reads its arguments, validates them (naming the bad value),
 * authorises through polkit, acts, maps errno to a named error, emits
 * PropertiesChanged and replies. Also the systemd client that sets
 * AllowedCPUs= on the isolation slice.
 */
#include "config.h"
#include "fileio.h"
#include "log.h"
#include "manager.h"
#include "strutil.h"

/*
 * What PropertiesChanged may announce, each when its value differs from
 * the one sent last. DomainLayout, costly to render on large machines, is
 * compared only when the layout was replaced (layout_generation).
 */
static const char *const changed_properties[] = {
	"State", "StateReasons", "ActiveProfile", "ActiveProfileReason", "ActiveProfileSource", "ProfileHold",
	"Settings", "IsolatedCpus", "HousekeepingCpus", "RebootRequired", "PendingKernelCmdline", "KernelCapabilities",
	"DomainLayout", NULL,
};

/* --- text for the bus ----------------------------------------------------------- */

/*
 * sd-bus takes only valid UTF-8 in a string, and a reply it cannot build is
 * no reply at all: the caller waits until its timeout. Text that comes from
 * files (a configuration line quoted in an error, a value read back, a
 * debugfs name, a profile's description, the CPU's brand) goes through
 * these, invalid bytes written as \xNN.
 */
static char *bus_text(const char *s)
{
	return utf8_escape_invalid(strempty(s));
}

/*
 * Set ERROR to the named bus error NAME, or when NAME is NULL to the one
 * sd-bus maps errno R to; the message as valid UTF-8.
 */
_printf_(4, 5) static int bus_error_format(sd_bus_error *error, const char *name, int r, const char *fmt, ...)
{
	_cleanup_free_ char *s = NULL, *t = NULL;
	va_list ap;

	va_start(ap, fmt);
	s = vstrprintf(fmt, ap);
	va_end(ap);
	t = s ? bus_text(s) : NULL;
	if (!t)
		return -ENOMEM;
	return name ? sd_bus_error_set(error, name, t) : sd_bus_error_set_errnof(error, r, "%s", t);
}

#define bus_error_setf(error, name, ...) bus_error_format(error, name, 0, __VA_ARGS__)
#define bus_error_set_errnof(error, r, ...) bus_error_format(error, NULL, r, __VA_ARGS__)

static int append_text(sd_bus_message *reply, const char *s)
{
	_cleanup_free_ char *t = bus_text(s);

	return t ? sd_bus_message_append(reply, "s", t) : -ENOMEM;
}

static int append_strv_text(sd_bus_message *reply, char **l)
{
	int r;

	r = sd_bus_message_open_container(reply, 'a', "s");
	if (r < 0)
		return r;
	STRV_FOREACH(s, l) {
		r = append_text(reply, *s);
		if (r < 0)
			return r;
	}
	return sd_bus_message_close_container(reply);
}

/* Only CPU hotplug changes it: not part of every PropertiesChanged. */
void manager_emit_topology(Manager *m)
{
	if (!m->bus)
		return;
	(void)sd_bus_emit_properties_changed(m->bus, TOPOTUNE_BUS_PATH, TOPOTUNE_BUS_INTERFACE, "Topology", NULL);
}

void manager_emit_drift(Manager *m, const char *setting, const char *want, const char *got)
{
	_cleanup_free_ char *w = bus_text(want), *g = bus_text(got);

	if (m->bus && w && g)
		(void)sd_bus_emit_signal(m->bus, TOPOTUNE_BUS_PATH, TOPOTUNE_BUS_INTERFACE, "Drift", "sss", setting, w, g);
}

void manager_emit_applied(Manager *m, unsigned changes)
{
	if (m->bus)
		(void)sd_bus_emit_signal(m->bus, TOPOTUNE_BUS_PATH, TOPOTUNE_BUS_INTERFACE, "Applied", "su",
					 m->profile ? m->profile->name : "", changes);
}

void manager_emit_profile_released(Manager *m, uint32_t cookie, const char *why)
{
	_cleanup_free_ char *text = bus_text(why);

	if (m->bus)
		(void)sd_bus_emit_signal(m->bus, TOPOTUNE_BUS_PATH, TOPOTUNE_BUS_INTERFACE, "ProfileReleased", "us",
					 cookie, strempty(text));
}

/* --- systemd: AllowedCPUs= of the isolation slice ---------------------------------- */

int manager_set_allowed_cpus(void *userdata, const char *unit, const char *cpulist)
{
	Manager *m = userdata;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL, *reply = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	_cleanup_free_ uint8_t *mask = NULL;
	CpuSet set = {};
	size_t n = 0;
	int r;

	if (!m->bus)
		return -ENOTCONN;
	r = cpuset_parse_list(cpulist, &set, NULL);
	if (r < 0)
		return r;
	/* systemd's cpu_set_to_dbus(): bit (cpu % 8) of byte (cpu / 8). */
	if (!cpuset_is_empty(&set)) {
		n = (size_t)cpuset_last(&set) / 8 + 1;
		mask = calloc(n, 1);
		if (!mask) {
			cpuset_done(&set);
			return -ENOMEM;
		}
		CPUSET_FOREACH(cpu, &set)
			mask[cpu / 8] |= (uint8_t)(1U << (cpu % 8));
	}
	cpuset_done(&set);

	r = sd_bus_message_new_method_call(m->bus, &msg, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
					   "org.freedesktop.systemd1.Manager", "SetUnitProperties");
	if (r < 0)
		return r;
	/* SetUnitProperties(s name, b runtime, a(sv) properties) */
	r = sd_bus_message_append(msg, "sb", unit, 1);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(msg, 'a', "(sv)");
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(msg, 'r', "sv");
	if (r < 0)
		return r;
	r = sd_bus_message_append(msg, "s", "AllowedCPUs");
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(msg, 'v', "ay");
	if (r < 0)
		return r;
	r = sd_bus_message_append_array(msg, 'y', mask, n);
	if (r < 0)
		return r;
	for (int i = 0; i < 3; i++) {
		r = sd_bus_message_close_container(msg);
		if (r < 0)
			return r;
	}
	r = sd_bus_call(m->bus, msg, 30 * 1000000ULL, &error, &reply);
	if (r < 0) {
		log_error("systemd refused AllowedCPUs=%s on %s: %s", cpulist, unit, error.message ?: strerror(-r));
		return r;
	}
	log_info("systemd: %s AllowedCPUs=%s", unit, *cpulist ? cpulist : "(reset)");
	return 0;
}

/*
 * Start or stop a unit: the job runs in systemd's event loop after the
 * call returns; the applier waits for its effect on the cgroup tree.
 */
int manager_set_unit_active(void *userdata, const char *unit, bool active)
{
	Manager *m = userdata;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	int r;

	if (!m->bus)
		return -ENOTCONN;
	r = sd_bus_call_method(m->bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
			       "org.freedesktop.systemd1.Manager", active ? "StartUnit" : "StopUnit", &error, &reply,
			       "ss", unit, "replace");
	if (r < 0) {
		log_error("systemd refused to %s %s: %s", active ? "start" : "stop", unit, error.message ?: strerror(-r));
		return r;
	}
	log_info("systemd: %s %s", active ? "started" : "stopped", unit);
	return 0;
}

/* A unit's ActiveState: LoadUnit() gives its object whether it ran before or not. */
int manager_get_unit_state(void *userdata, const char *unit, char **ret)
{
	Manager *m = userdata;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	const char *path;
	int r;

	if (!m->bus)
		return -ENOTCONN;
	r = sd_bus_call_method(m->bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
			       "org.freedesktop.systemd1.Manager", "LoadUnit", &error, &reply, "s", unit);
	if (r >= 0)
		r = sd_bus_message_read(reply, "o", &path);
	if (r < 0)
		goto fail;
	r = sd_bus_get_property_string(m->bus, "org.freedesktop.systemd1", path, "org.freedesktop.systemd1.Unit",
				       "ActiveState", &error, ret);
	if (r < 0)
		goto fail;
	return 0;
fail:
	log_error("systemd does not say whether %s is active: %s", unit, error.message ?: strerror(-r));
	return r;
}

/* --- properties ------------------------------------------------------------------ */

#define GETTER(name)                                                                                    \
	static int name(sd_bus *bus, const char *path, const char *interface, const char *property,    \
			sd_bus_message *reply, void *userdata, sd_bus_error *error)

GETTER(property_get_version)
{
	return sd_bus_message_append(reply, "s", TOPOTUNE_VERSION);
}

GETTER(property_get_state)
{
	Manager *m = userdata;

	return sd_bus_message_append(reply, "s", manager_state_to_string(m->state));
}

GETTER(property_get_state_reasons)
{
	Manager *m = userdata;
	_cleanup_strv_free_ char **l = NULL;
	int r;

	r = manager_state_reasons(m, &l);
	if (r < 0)
		return r;
	return append_strv_text(reply, l);
}

GETTER(property_get_active_profile)
{
	Manager *m = userdata;

	return sd_bus_message_append(reply, "s", m->profile ? m->profile->name : "");
}

GETTER(property_get_active_profile_reason)
{
	Manager *m = userdata;

	return append_text(reply, m->profile ? m->choice.reason : "");
}

GETTER(property_get_active_profile_source)
{
	Manager *m = userdata;

	return append_text(reply, m->profile ? m->choice.source : "");
}

/* (ussss): cookie (0: no hold), profile, holder, reason, source; empty strings without a hold. */
GETTER(property_get_profile_hold)
{
	Manager *m = userdata;
	const ChoiceHold *h = &m->choice.hold;
	int r;

	r = sd_bus_message_open_container(reply, 'r', "ussss");
	if (r < 0)
		return r;
	r = sd_bus_message_append(reply, "uss", h->cookie, strempty(h->profile), strempty(h->holder));
	if (r < 0)
		return r;
	r = append_text(reply, strempty(h->reason));
	if (r < 0)
		return r;
	r = append_text(reply, strempty(h->source));
	if (r < 0)
		return r;
	return sd_bus_message_close_container(reply);
}

/*
 * The match counts move with every exec and exit on the machine, so this
 * property sends no PropertiesChanged at all (EmitsChangedSignal=false):
 * a watcher reads it when it wants the counts.
 */
GETTER(property_get_workload_rules)
{
	Manager *m = userdata;
	const WorkloadMatcher *wm = m->workload ? workload_tracker_matcher(m->workload) : NULL;
	int r;

	r = sd_bus_message_open_container(reply, 'a', "(sss)");
	if (r < 0)
		return r;
	for (size_t i = 0; wm && i < wm->n_rules; i++) {
		_cleanup_free_ char *text = bus_text(wm->rules[i].text);
		char count[16];

		if (!text)
			return -ENOMEM;
		snprintf(count, sizeof(count), "%u", workload_tracker_count(m->workload, i));
		r = sd_bus_message_append(reply, "(sss)", text, wm->rules[i].profile, count);
		if (r < 0)
			return r;
	}
	return sd_bus_message_close_container(reply);
}

GETTER(property_get_cpu_vendor)
{
	Manager *m = userdata;

	return sd_bus_message_append(reply, "s", strempty(cpu_vendor_to_string(m->session.identity.vendor)));
}

GETTER(property_get_cpu_family)
{
	Manager *m = userdata;

	return sd_bus_message_append(reply, "u", m->session.identity.have_family ? m->session.identity.family : 0);
}

GETTER(property_get_cpu_model)
{
	Manager *m = userdata;

	return sd_bus_message_append(reply, "u", m->session.identity.have_family ? m->session.identity.model : 0);
}

GETTER(property_get_cpu_name)
{
	Manager *m = userdata;

	return append_text(reply, m->session.identity.brand);
}

GETTER(property_get_topology)
{
	Manager *m = userdata;
	const Topology *t = m->session.topology;

	return sd_bus_message_append(reply, "a{sv}", 7,
				     "packages", "u", (unsigned)t->packages.n,
				     "nodes", "u", topology_cpu_nodes(t),
				     "cores", "u", (unsigned)t->cores.n,
				     "threads", "u", cpuset_count(&t->online),
				     "llcs", "u", (unsigned)t->llcs.n,
				     "nodes_per_package", "u", t->nodes_per_package,
				     "smt", "b", t->threads_per_core > 1);
}

GETTER(property_get_settings)
{
	Manager *m = userdata;
	int r;

	r = sd_bus_message_open_container(reply, 'a', "(sssbs)");
	if (r < 0)
		return r;
	for (size_t i = 0; m->plan && i < _SETTING_MAX; i++) {
		const PlanStep *st = &m->plan->steps[i];
		_cleanup_free_ char *actual = NULL, *o = NULL, *desired = NULL;
		_cleanup_free_ char *a = NULL, *ot = NULL, *d = NULL;

		if (!plan_has_step(m->plan, i))
			continue;
		actual = manager_setting_actual(m, (SettingId)i);
		o = origin_to_string(&st->origin);
		desired = st->action == STEP_KEEP ? strdup("keep") : strdup(st->to);
		if (!actual || !o || !desired)
			return -ENOMEM;
		a = bus_text(actual);
		ot = bus_text(o);
		d = bus_text(desired);
		if (!a || !ot || !d)
			return -ENOMEM;
		r = sd_bus_message_append(reply, "(sssbs)", setting_id_to_string(st->setting), d, a,
					  manager_setting_in_sync(m, (SettingId)i, actual), ot);
		if (r < 0)
			return r;
	}
	return sd_bus_message_close_container(reply);
}

GETTER(property_get_kernel_caps)
{
	Manager *m = userdata;
	KernelCaps k = m->session.caps;   /* borrowed: only sched_ext's two strings are read again */
	const char *name;
	bool v;
	int r;

	kernel_probe_sched_ext(m->session.root_fd, &k);
	r = sd_bus_message_open_container(reply, 'a', "{sb}");
	for (size_t i = 0; r >= 0 && (name = kernel_caps_entry(&k, i, &v)); i++)
		r = sd_bus_message_append(reply, "{sb}", name, v);
	if (r < 0)
		return r;
	return sd_bus_message_close_container(reply);
}

static int append_cpuset(sd_bus_message *reply, const CpuSet *s)
{
	_cleanup_free_ char *l = NULL;
	int r = cpuset_format_list(s, &l);

	return r < 0 ? r : sd_bus_message_append(reply, "s", l);
}

GETTER(property_get_isolated)
{
	Manager *m = userdata;

	/* What the kernel holds, as Settings reads it; the plan's only where that cannot be read. */
	manager_refresh_layout(m);
	if (m->kernel_isolated_known)
		return append_cpuset(reply, &m->kernel_isolated);
	if (m->plan && m->state != MANAGER_OFF)
		return append_cpuset(reply, &m->plan->isolated);
	return append_cpuset(reply, &m->session.caps.isolated);
}

GETTER(property_get_housekeeping)
{
	Manager *m = userdata;
	CpuSet h = {};
	int r;

	manager_refresh_layout(m);
	if (!m->kernel_isolated_known && m->plan && m->state != MANAGER_OFF)
		return append_cpuset(reply, &m->plan->housekeeping);
	r = cpuset_copy(&h, &m->session.topology->online);
	if (r >= 0) {
		cpuset_andnot(&h, m->kernel_isolated_known ? &m->kernel_isolated : &m->session.caps.isolated);
		r = append_cpuset(reply, &h);
	}
	cpuset_done(&h);
	return r;
}

bool manager_reboot_required(const Manager *m)
{
	for (size_t i = 0; m->plan && m->state != MANAGER_OFF && i < _SETTING_MAX; i++)
		if (m->plan->steps[i].action == STEP_PENDING_REBOOT)
			return true;
	return false;
}

GETTER(property_get_reboot_required)
{
	return sd_bus_message_append(reply, "b", manager_reboot_required(userdata));
}

GETTER(property_get_pending_cmdline)
{
	Manager *m = userdata;

	return append_text(reply, manager_reboot_required(m) ? m->plan->kernel_cmdline : "");
}

/* One level of the layout over all CPUs. */
typedef struct LevelSummary {
	bool used;
	char name[16];
	char *flags;
	CpuSet covered;
	char **spans;
	/*
	 * The distinct spans seen (spans[i] is seen[i] formatted), found by
	 * their hash: every CPU's domain is added, and comparing each with the
	 * spans so far as text (640 CPUs, 320 SMT spans) was most of a switch.
	 */
	CpuSet *seen;
	size_t n_seen;
	unsigned *table;       /* open addressing: 1 + index into seen[]; 0 empty */
	size_t table_size;     /* a power of two, at least twice n_seen */
} LevelSummary;

#define LEVELS_MAX 32

static void levels_done(LevelSummary *l)
{
	for (size_t i = 0; i < LEVELS_MAX; i++) {
		free(l[i].flags);
		cpuset_done(&l[i].covered);
		strv_free(l[i].spans);
		for (size_t k = 0; k < l[i].n_seen; k++)
			cpuset_done(&l[i].seen[k]);
		free(l[i].seen);
		free(l[i].table);
	}
}

/* The slot of @span in @l's table: its entry, or the empty slot where it goes. */
static unsigned *span_slot(LevelSummary *l, const CpuSet *span, uint64_t h)
{
	size_t mask = l->table_size - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask)
		if (!l->table[i] || cpuset_equal(&l->seen[l->table[i] - 1], span))
			return &l->table[i];
}

static int span_table_grow(LevelSummary *l)
{
	size_t size = l->table_size ? l->table_size * 2 : 64;
	unsigned *t = calloc(size, sizeof(unsigned)), *old = l->table;
	CpuSet *seen = reallocarray(l->seen, size / 2, sizeof(CpuSet));

	if (!t || !seen) {
		free(t);
		if (seen)
			l->seen = seen;
		return -ENOMEM;
	}
	l->seen = seen;
	l->table = t;
	l->table_size = size;
	for (size_t k = 0; k < l->n_seen; k++)
		*span_slot(l, &l->seen[k], cpuset_hash(&l->seen[k])) = (unsigned)k + 1;
	free(old);
	return 0;
}

/* @flags is formatted (by domain_flags_to_string()) only for a level's first domain. */
static int level_add(LevelSummary *l, int level, const char *name, const char *flags, unsigned flag_bits,
		     const CpuSet *span)
{
	_cleanup_free_ char *s = NULL;
	unsigned *slot;
	uint64_t h;
	int r;

	if (level < 0 || level >= LEVELS_MAX)
		return 0;
	l += level;
	if (!l->used) {
		l->used = true;
		snprintf(l->name, sizeof(l->name), "%s", name);
		r = flags ? ((l->flags = strdup(flags)) ? 0 : -ENOMEM) : domain_flags_to_string(flag_bits, &l->flags);
		if (r < 0)
			return r;
	}
	r = cpuset_or(&l->covered, span);
	if (r < 0)
		return r;
	if (2 * (l->n_seen + 1) > l->table_size) {
		r = span_table_grow(l);
		if (r < 0)
			return r;
	}
	h = cpuset_hash(span);
	slot = span_slot(l, span, h);
	if (*slot)
		return 0;
	l->seen[l->n_seen] = (CpuSet) {};
	r = cpuset_copy(&l->seen[l->n_seen], span);
	if (r < 0)
		return r;
	l->n_seen++;
	*slot = (unsigned)l->n_seen;
	r = cpuset_format_list(span, &s);
	if (r < 0)
		return r;
	return strv_push(&l->spans, TAKE_PTR(s));
}

static int layout_levels(Manager *m, LevelSummary *l)
{
	int r;

	if (manager_layout_is_live(m)) {
		for (unsigned c = 0; c < m->live->n_slots; c++)
			for (size_t i = 0; i < m->live->cpus[c].n; i++) {
				const LiveDomain *d = &m->live->cpus[c].sd[i];
				char name[16];

				snprintf(name, sizeof(name), "%s", *d->name ? d->name : "domain");
				r = level_add(l, d->level >= 0 ? d->level : d->index, name, d->flags ?: "", 0, &d->span);
				if (r < 0)
					return r;
			}
		return 0;
	}
	if (!m->predicted)
		return 0;
	for (unsigned c = 0; c < m->predicted->n_slots; c++)
		for (size_t i = 0; i < m->predicted->cpus[c].n; i++) {
			const SchedDomain *d = &m->predicted->cpus[c].sd[i];
			_cleanup_free_ char *flags = NULL;

			r = level_add(l, d->level, d->name, NULL, d->flags, &d->span->cpus);
			if (r < 0)
				return r;
		}
	return 0;
}

/* a(usssas): per level its number, name, flags, CPUs covered and spans. */
static int append_levels(sd_bus_message *reply, const LevelSummary *l)
{
	int r;

	r = sd_bus_message_open_container(reply, 'a', "(usssas)");
	if (r < 0)
		return r;
	for (unsigned i = 0; i < LEVELS_MAX; i++) {
		_cleanup_free_ char *covered = NULL;

		if (!l[i].used)
			continue;
		r = cpuset_format_list(&l[i].covered, &covered);
		if (r < 0)
			return r;
		r = sd_bus_message_open_container(reply, 'r', "usssas");
		if (r < 0)
			return r;
		r = sd_bus_message_append(reply, "u", i);
		if (r < 0)
			return r;
		r = append_text(reply, l[i].name);   /* names and flags from debugfs */
		if (r < 0)
			return r;
		r = append_text(reply, l[i].flags);
		if (r < 0)
			return r;
		r = sd_bus_message_append(reply, "s", covered);
		if (r < 0)
			return r;
		r = sd_bus_message_append_strv(reply, l[i].spans);
		if (r < 0)
			return r;
		r = sd_bus_message_close_container(reply);
		if (r < 0)
			return r;
	}
	return sd_bus_message_close_container(reply);
}

GETTER(property_get_domain_layout)
{
	Manager *m = userdata;
	LevelSummary l[LEVELS_MAX] = {};
	int r;

	manager_refresh_layout(m);
	r = layout_levels(m, l);
	if (r >= 0)
		r = append_levels(reply, l);
	levels_done(l);
	return r;
}

/* --- errors ------------------------------------------------------------------------ */

/*
 * Map a failure of planning (the profile stage) to a named bus error. A
 * profile that cannot be read for whatever reason -- a directory, a FIFO,
 * too big, unreadable -- is an invalid profile, never the errno's generic
 * System.Error.* name.
 */
static int reply_error(sd_bus_error *error, int r, const char *what, const char *detail)
{
	switch (r) {
	case -ENOENT:
		return bus_error_setf(error, BUS_ERROR_NO_SUCH_PROFILE, "%s: %s", what, detail ?: "no such profile");
	case -EOPNOTSUPP:
		return bus_error_setf(error, BUS_ERROR_UNSUPPORTED, "%s: %s", what, strna(detail));
	case -EBUSY:
		return bus_error_setf(error, BUS_ERROR_BUSY, "%s: %s", what, strna(detail));
	case -ENOMEM:
		return r;
	default:
		/* EBADMSG, EINVAL, ELOOP, ENOLINK (a missing include=), ENOTUNIQ, EISDIR, EBADFD, EFBIG, EACCES... */
		return bus_error_setf(error, BUS_ERROR_INVALID_PROFILE, "%s", detail ?: what);
	}
}

/*
 * Map a failure of applying or reverting. The caller was authorised: what
 * refused is the kernel or the file system (EPERM under lockdown, EACCES,
 * EROFS, ENOENT...), which sd-bus would turn into AccessDenied or a generic
 * name. It is an I/O error whose message says what refused, and how.
 */
static int reply_apply_error(sd_bus_error *error, int r, const char *what, const char *detail)
{
	if (r == -ENOMEM)
		return r;
	if (r == -EBUSY)
		return bus_error_setf(error, BUS_ERROR_BUSY, "%s: %s", what, strna(detail));
	return bus_error_setf(error, SD_BUS_ERROR_IO_ERROR, "%s: %s", what, detail ?: strerror(-r));
}

/* A caller's argument quoted in an error: at most 64 bytes, escaped. */
#define ARG_QUOTE_MAX 64U

/* --- methods ------------------------------------------------------------------------ */

/* a(sss): name, description (the file's), path. */
static int append_profiles(sd_bus_message *reply, const ProfileInfo *list, size_t n)
{
	int r;

	r = sd_bus_message_open_container(reply, 'a', "(sss)");
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		r = sd_bus_message_open_container(reply, 'r', "sss");
		if (r < 0)
			return r;
		r = append_text(reply, list[i].name);
		if (r < 0)
			return r;
		r = append_text(reply, list[i].description);
		if (r < 0)
			return r;
		r = append_text(reply, list[i].path);
		if (r < 0)
			return r;
		r = sd_bus_message_close_container(reply);
		if (r < 0)
			return r;
	}
	return sd_bus_message_close_container(reply);
}

static int method_list_profiles(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_free_ char *err = NULL;
	ProfileInfo *list = NULL;
	size_t n = 0;
	int r;

	r = profile_list(m->session.config_fd, &list, &n, &err);
	if (r < 0)
		return bus_error_set_errnof(error, r, "%s", err ?: "Failed to list profiles");
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = append_profiles(reply, list, n);
	profile_info_array_free(list, n);
	if (r < 0)
		return r;
	return sd_bus_send(NULL, reply, NULL);
}

static int busy_error(sd_bus_error *error)
{
	return bus_error_setf(error, BUS_ERROR_BUSY, "An apply is in progress; try again.");
}

/* Apply the plan of @name (NULL: as chosen); the shared core of every method that applies. */
static int switch_profile(Manager *m, const char *name, const char *source, sd_bus_error *error)
{
	_cleanup_(profile_freep) Profile *p = NULL;
	_cleanup_(plan_freep) Plan *plan = NULL;
	_cleanup_free_ char *err = NULL;
	ProfileSettings settings;
	int r;

	if (m->applying)
		return busy_error(error);

	/* Validate: the profile loads. */
	/* Validate: the profile loads. The plan is then the one applied: computed once. */
	r = manager_compute(m, name, &p, &settings, &plan, &err);
	if (r < 0 && !name && m->reload_pending) {
		/* A reload whose configuration selects a profile that does not load. */
		manager_reload_failed(m, r, source, err);
		manager_emit_changed(m);
	}
	m->reload_pending = false;
	if (r < 0)
		return reply_error(error, r, name ? name : "selected profile", err);

	m->applying = true;
	r = manager_switch_computed(m, name, source, TAKE_PTR(p), &settings, TAKE_PTR(plan), &err);
	m->applying = false;
	manager_emit_changed(m);
	if (r == -EOPNOTSUPP)
		return bus_error_setf(error, BUS_ERROR_UNSUPPORTED, "%s", strna(err));
	if (r < 0)
		return reply_apply_error(error, r, "Apply failed and was rolled back", err);
	manager_emit_applied(m, (unsigned)r);
	(void)manager_arm_verify_timer(m);
	return r;
}

/* switch_profile() and an empty reply: SetProfile, Apply, Reload. */
static int switch_and_reply(Manager *m, sd_bus_message *msg, const char *name, const char *source,
			    sd_bus_error *error)
{
	int r = switch_profile(m, name, source, error);

	if (r < 0)
		return r;
	return sd_bus_reply_method_return(msg, NULL);
}

static int profile_name_error(sd_bus_error *error, const char *name)
{
	_cleanup_free_ char *q = text_bounded(name, ARG_QUOTE_MAX);

	return bus_error_setf(error, BUS_ERROR_NO_SUCH_PROFILE,
			      "'%s' is not a profile name ([A-Za-z0-9_.-], at most %d characters, not starting with '.')",
			      strna(q), PROFILE_NAME_MAX);
}

/* A choice other than the hold's while another client holds a profile: Busy, naming the hold. */
static int held_by_other(Manager *m, sd_bus_message *msg, sd_bus_error *error)
{
	const ChoiceHold *h = &m->choice.hold;

	if (!choice_held_by_other(&m->choice, sd_bus_message_get_sender(msg)))
		return 0;
	return bus_error_setf(error, BUS_ERROR_BUSY,
			      "Profile %s is held by %s (%s, hold %u) until it calls ReleaseProfile() or leaves the bus; "
			      "Revert() ends the hold.",
			      h->profile, h->holder, strna(h->reason), h->cookie);
}

typedef enum ChangeCheck {
	CHANGE_NOT_HELD = 1 << 0,    /* no other caller holds a profile */
	CHANGE_IDLE = 1 << 1,        /* no apply is in progress */
} ChangeCheck;

/*
 * The prologue of every mutating method, in hostnamed's order once the
 * arguments are read: @name (when not NULL) is a profile name, polkit
 * allows it, then the @checks; and the change is named for the journal,
 * "WHAT(NAME) by :1.23" (when @ret_source). 0: go on; 1: polkit is being
 * asked and the call is dispatched again later (return it); negative: an
 * error (@error set).
 */
static int begin_change(Manager *m, sd_bus_message *msg, const char *what, const char *name, int interactive,
			ChangeCheck checks, sd_bus_error *error, char **ret_source)
{
	const char *sender = strna(sd_bus_message_get_sender(msg));
	int r;

	if (name && !profile_name_is_valid(name))
		return profile_name_error(error, name);
	r = bus_verify_polkit_async(m, msg, interactive, error);
	if (r < 0)
		return r;
	if (r == 0)
		return 1;
	if (checks & CHANGE_NOT_HELD) {
		r = held_by_other(m, msg, error);
		if (r < 0)
			return r;
	}
	if ((checks & CHANGE_IDLE) && m->applying)
		return busy_error(error);
	if (!ret_source)
		return 0;
	*ret_source = name ? strprintf("%s(%s) by %s", what, name, sender) : strprintf("%s by %s", what, sender);
	return *ret_source ? 0 : -ENOMEM;
}

static int method_set_profile(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	_cleanup_free_ char *source = NULL;
	const char *name;
	int interactive, r;

	r = sd_bus_message_read(msg, "sb", &name, &interactive);
	if (r < 0)
		return r;
	r = begin_change(m, msg, "SetProfile", name, interactive, CHANGE_NOT_HELD, error, &source);
	if (r != 0)
		return r;
	r = switch_and_reply(m, msg, name, source, error);
	if (r < 0)
		return r;
	return choice_set_manual(&m->choice, name, source) ?: r;
}

/*
 * The choice as configuration (tuned-adm profile): the drop-in
 * MANAGER_PROFILE_DROPIN is written (or, @name NULL, removed), the
 * configuration re-read and its profile applied. The profile must load
 * and the configuration with the change too, before anything is written.
 */
static int persist_and_reply(Manager *m, sd_bus_message *msg, const char *name, const char *source,
			     sd_bus_error *error)
{
	_cleanup_(profile_freep) Profile *p = NULL;
	_cleanup_(plan_freep) Plan *plan = NULL;
	_cleanup_free_ char *err = NULL;
	ProfileSettings settings;
	int r;

	if (m->applying)
		return busy_error(error);
	r = held_by_other(m, msg, error);
	if (r < 0)
		return r;
	if (name) {
		r = manager_compute(m, name, &p, &settings, &plan, &err);
		if (r < 0)
			return reply_error(error, r, name, err);
		profile_settings_done(&settings);
	}
	r = manager_persist_profile(m, name, &err);
	if (r == -ENOMEM)
		return r;
	if (r == -EBADMSG)
		return bus_error_setf(error, BUS_ERROR_INVALID_CONFIGURATION, "Nothing written: %s", err);
	if (r < 0)
		return bus_error_setf(error, SD_BUS_ERROR_IO_ERROR, "%s", err ?: strerror(-r));
	r = manager_reload_config(m, source, &err);
	if (r < 0) {
		manager_emit_changed(m);
		return bus_error_setf(error, BUS_ERROR_INVALID_CONFIGURATION, "Configuration not reloaded: %s",
				      err ?: strerror(-r));
	}
	m->reload_pending = true;
	return switch_and_reply(m, msg, NULL, source, error);
}

static int method_set_profile_persistent(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	_cleanup_free_ char *source = NULL;
	const char *name;
	int interactive, r;

	r = sd_bus_message_read(msg, "sb", &name, &interactive);
	if (r < 0)
		return r;
	r = begin_change(m, msg, "SetProfilePersistent", name, interactive, CHANGE_NOT_HELD, error, &source);
	if (r != 0)
		return r;
	return persist_and_reply(m, msg, name, source, error);
}

/* The start of a change whose one argument is (b interactive): see begin_change(). */
static int begin_change_b(Manager *m, sd_bus_message *msg, const char *what, ChangeCheck checks,
			  sd_bus_error *error, char **ret_source)
{
	int interactive, r;

	r = sd_bus_message_read(msg, "b", &interactive);
	if (r < 0)
		return r;
	return begin_change(m, msg, what, NULL, interactive, checks, error, ret_source);
}

static int method_auto_profile(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	_cleanup_free_ char *source = NULL;
	int r;

	r = begin_change_b(m, msg, "AutoProfile", 0, error, &source);
	if (r != 0)
		return r;
	return persist_and_reply(m, msg, NULL, source, error);
}

static int method_apply(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	_cleanup_free_ char *source = NULL;
	int r;

	r = begin_change_b(m, msg, "Apply", 0, error, &source);
	if (r != 0)
		return r;
	return switch_and_reply(m, msg, NULL, source, error);
}

static int method_revert(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	_cleanup_free_ char *source = NULL;
	int r;

	r = begin_change_b(m, msg, "Revert", CHANGE_IDLE, error, &source);
	if (r != 0)
		return r;
	r = manager_revert(m, source);
	if (r < 0) {
		manager_emit_changed(m);
		return reply_apply_error(error, r, "Revert failed", m->applier->error);
	}
	(void)manager_release_hold(m, source);   /* state off: nothing applied */
	manager_emit_changed(m);
	return sd_bus_reply_method_return(msg, NULL);
}

/* The holder left the bus (it exited, crashed, or lost its connection): back to the choice without it. */
static int on_holder_gone(sd_bus_track *track, void *userdata)
{
	Manager *m = userdata;
	_cleanup_free_ char *why = strprintf("holder %s left the bus", strna(m->choice.hold.holder));

	(void)manager_release_hold(m, why ?: "holder left the bus");
	manager_emit_changed(m);
	return 0;
}

#define HOLD_REASON_MAX 200U

/* A new hold's holder is followed before anything changes: one that cannot be gets no hold. */
static int hold_track_new(Manager *m, sd_bus_message *msg, sd_bus_error *error, sd_bus_track **ret)
{
	_cleanup_(sd_bus_track_unrefp) sd_bus_track *track = NULL;
	int r;

	r = sd_bus_track_new(m->bus, &track, on_holder_gone, m);
	if (r < 0)
		return bus_error_set_errnof(error, r, "Cannot follow %s on the bus: %s",
					    sd_bus_message_get_sender(msg), strerror(-r));
	r = sd_bus_track_add_sender(track, msg);
	if (r < 0)
		return bus_error_set_errnof(error, r, "Cannot follow %s on the bus: %s",
					    sd_bus_message_get_sender(msg), strerror(-r));
	*ret = TAKE_PTR(track);
	return 0;
}

/*
 * HoldProfile(s profile, s reason, b interactive) -> u cookie: apply
 * @profile and keep it above every other choice while the caller is on the
 * bus (power-profiles-daemon's HoldProfile, for jobs and topotunectl trial).
 * One hold at a time; its holder may call again to hold another profile
 * (same cookie). Authorised as SetProfile.
 */
static int method_hold_profile(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	_cleanup_(sd_bus_track_unrefp) sd_bus_track *track = NULL;
	_cleanup_(choice_hold_done) ChoiceHold hold = {};
	const char *name, *why, *sender;
	int interactive, r;

	r = sd_bus_message_read(msg, "ssb", &name, &why, &interactive);
	if (r < 0)
		return r;
	r = begin_change(m, msg, "HoldProfile", name, interactive, CHANGE_NOT_HELD | CHANGE_IDLE, error, NULL);
	if (r != 0)
		return r;
	sender = sd_bus_message_get_sender(msg);
	if (!sender)
		return bus_error_setf(error, BUS_ERROR_UNSUPPORTED,
				      "A hold needs a bus that names its clients (a message bus, not a direct connection).");
	r = choice_hold_new(&m->choice, name, sender, why, HOLD_REASON_MAX, &hold);
	if (r < 0)
		return r;
	if (!m->choice.hold.cookie) {
		r = hold_track_new(m, msg, error, &track);
		if (r < 0)
			return r;
	}

	/* In place for manager_compute(); put back as it was when the switch fails. */
	choice_hold_swap(&m->choice, &hold);
	r = switch_profile(m, NULL, m->choice.hold.source, error);
	if (r < 0) {
		choice_hold_swap(&m->choice, &hold);
		return r;
	}
	if (!m->choice.hold.cookie) {
		r = choice_hold_commit(&m->choice, sender);
		if (r < 0)
			return r;
		m->hold_track = TAKE_PTR(track);
	}
	log_notice("Profile %s held (hold %u) by %s: %s", name, m->choice.hold.cookie, m->choice.hold.holder,
		   m->choice.hold.reason);
	manager_emit_changed(m);
	return sd_bus_reply_method_return(msg, "u", m->choice.hold.cookie);
}

/*
 * ReleaseProfile(u cookie): end the hold and apply what would be chosen
 * without it. The holder may; anyone else needs the authorisation of
 * SetProfile (an administrator ending someone's hold).
 */
static int method_release_profile(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	_cleanup_free_ char *why = NULL;
	uint32_t cookie;
	int r;

	r = sd_bus_message_read(msg, "u", &cookie);
	if (r < 0)
		return r;
	if (!m->choice.hold.cookie || cookie != m->choice.hold.cookie)
		return bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "No hold with cookie %u%s.", cookie,
				      m->choice.hold.cookie ? " (another hold is in force)" : " (no hold is in force)");
	if (choice_held_by_other(&m->choice, sd_bus_message_get_sender(msg))) {
		/* Not the holder: an administrator ending someone's hold. */
		r = begin_change(m, msg, "ReleaseProfile", NULL, false, 0, error, NULL);
		if (r != 0)
			return r;
	}
	if (m->applying)
		return busy_error(error);
	why = strprintf("ReleaseProfile(%u) by %s", cookie, strna(sd_bus_message_get_sender(msg)));
	if (!why)
		return -ENOMEM;
	r = manager_release_hold(m, why);
	manager_emit_changed(m);
	if (r < 0)
		return reply_apply_error(error, r, "The hold ended, but applying the profile without it failed",
					 m->applier->error);
	return sd_bus_reply_method_return(msg, NULL);
}

static int reload_and_reply(Manager *m, sd_bus_message *msg, bool interactive, sd_bus_error *error)
{
	_cleanup_free_ char *err = NULL, *source = NULL;
	int r;

	r = begin_change(m, msg, "Reload", NULL, interactive, CHANGE_IDLE, error, &source);
	if (r != 0)
		return r;
	r = manager_reload_config(m, source, &err);
	if (r < 0) {
		manager_emit_changed(m);
		return bus_error_setf(error, BUS_ERROR_INVALID_CONFIGURATION, "Configuration not reloaded: %s",
				      err ?: strerror(-r));
	}
	m->reload_pending = true;
	return switch_and_reply(m, msg, NULL, source, error);
}

/* Reload(): the first version, without the interactive flag (never interactive). */
static int method_reload(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	return reload_and_reply(userdata, msg, false, error);
}

static int method_reload_configuration(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	int interactive, r;

	r = sd_bus_message_read(msg, "b", &interactive);
	if (r < 0)
		return r;
	return reload_and_reply(userdata, msg, interactive, error);
}

/* (ssss): setting, action, "from -> to via control", "why (origin)". */
static int append_step(sd_bus_message *reply, const PlanStep *st)
{
	_cleanup_free_ char *change = NULL, *why = NULL, *o = NULL;
	int r;

	o = origin_to_string(&st->origin);
	change = strprintf("%s -> %s%s%s", st->from, st->to, st->control ? " via " : "",
			   st->control ? st->control->name : "");
	why = strprintf("%s (%s)", st->why, strna(o));
	if (!change || !why)
		return -ENOMEM;
	r = sd_bus_message_open_container(reply, 'r', "ssss");
	if (r < 0)
		return r;
	r = sd_bus_message_append(reply, "ss", setting_id_to_string(st->setting), step_action_to_string(st->action));
	if (r < 0)
		return r;
	r = append_text(reply, change);   /* "from" is what the kernel said */
	if (r < 0)
		return r;
	r = append_text(reply, why);
	if (r < 0)
		return r;
	return sd_bus_message_close_container(reply);
}

/* b a(sss): in sync, then per mismatch the setting, the value wanted and the value read. */
static int append_mismatches(sd_bus_message *reply, const Mismatch *mm, size_t n)
{
	int r;

	r = sd_bus_message_append(reply, "b", n == 0);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(reply, 'a', "(sss)");
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		r = sd_bus_message_open_container(reply, 'r', "sss");
		if (r < 0)
			return r;
		r = sd_bus_message_append(reply, "s", setting_id_to_string(mm[i].setting));
		if (r < 0)
			return r;
		r = append_text(reply, mm[i].want);
		if (r < 0)
			return r;
		r = append_text(reply, mm[i].got);   /* as read from the kernel's file */
		if (r < 0)
			return r;
		r = sd_bus_message_close_container(reply);
		if (r < 0)
			return r;
	}
	return sd_bus_message_close_container(reply);
}

static int method_plan(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	_cleanup_(profile_freep) Profile *p = NULL;
	_cleanup_(plan_freep) Plan *plan = NULL;
	_cleanup_free_ char *err = NULL, *text = NULL;
	ProfileSettings settings;
	const char *name;
	int cpu, r;

	r = sd_bus_message_read(msg, "s", &name);
	if (r < 0)
		return r;
	if (*name && !profile_name_is_valid(name)) {
		_cleanup_free_ char *q = text_bounded(name, ARG_QUOTE_MAX);

		return bus_error_setf(error, BUS_ERROR_NO_SUCH_PROFILE, "'%s' is not a profile name", strna(q));
	}
	if (m->applying)
		return busy_error(error);

	r = manager_compute(m, *name ? name : NULL, &p, &settings, &plan, &err);
	if (r < 0)
		return reply_error(error, r, *name ? name : "selected profile", err);
	profile_settings_done(&settings);
	cpu = cpuset_first(&m->session.topology->online);
	r = domain_layout_format(plan->layout, cpu < 0 ? 0 : (unsigned)cpu, &text);
	if (r < 0)
		return r;

	r = sd_bus_message_new_method_return(msg, &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(reply, 'a', "(ssss)");
	if (r < 0)
		return r;
	for (size_t i = 0; i < _SETTING_MAX; i++) {
		if (!plan_has_step(plan, i))
			continue;
		r = append_step(reply, &plan->steps[i]);
		if (r < 0)
			return r;
	}
	r = sd_bus_message_close_container(reply);
	if (r < 0)
		return r;
	r = sd_bus_message_append(reply, "s", text);
	if (r < 0)
		return r;
	return sd_bus_send(NULL, reply, NULL);
}

static int method_metrics(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	_cleanup_free_ char *text = NULL;
	int r;

	r = manager_metrics(userdata, &text);
	if (r < 0)
		return r;
	return sd_bus_reply_method_return(msg, "s", text);
}

static int method_verify(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	Mismatch *mm = NULL;
	size_t n = 0;
	int r;

	if (!m->plan)
		return bus_error_setf(error, BUS_ERROR_UNSUPPORTED, "Nothing applied yet: no plan to verify.");
	if (m->state == MANAGER_OFF)
		return sd_bus_reply_method_return(msg, "ba(sss)", true, 0);
	r = applier_verify(m->applier, m->plan, &mm, &n);
	if (r < 0)
		return bus_error_set_errnof(error, r, "Verification failed: %s", strerror(-r));
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = append_mismatches(reply, mm, n);
	mismatches_free(mm, n);
	if (r < 0)
		return r;
	/* Settings carries the actual values: tell watchers they may have moved. */
	manager_emit_changed(m);
	return sd_bus_send(NULL, reply, NULL);
}

/* (ussas) per domain of @cpu as the kernel reports it: names and flags as debugfs has them. */
static int append_live_domains(sd_bus_message *reply, const LiveLayout *live, uint32_t cpu)
{
	const LiveCpuDomains *d = cpu < live->n_slots ? &live->cpus[cpu] : NULL;
	int r;

	for (size_t i = 0; d && i < d->n; i++) {
		_cleanup_free_ char *span = NULL, *name = bus_text(*d->sd[i].name ? d->sd[i].name : "domain"),
				    *flags = bus_text(d->sd[i].flags);

		if (!name || !flags)
			return -ENOMEM;
		r = cpuset_format_list(&d->sd[i].span, &span);
		if (r < 0)
			return r;
		r = sd_bus_message_append(reply, "(ussas)", d->sd[i].level >= 0 ? d->sd[i].level : d->sd[i].index,
					  name, flags, 2, span, "source=live");
		if (r < 0)
			return r;
	}
	return 0;
}

/* (ussas) per domain of @cpu as predicted; only NODE/NUMA levels stand for a distance. */
static int append_predicted_domains(sd_bus_message *reply, const DomainLayout *predicted, uint32_t cpu)
{
	const CpuDomains *d;
	int r;

	if (!predicted || cpu >= predicted->n_slots)
		return 0;
	d = &predicted->cpus[cpu];
	for (size_t i = 0; i < d->n; i++) {
		_cleanup_free_ char *span = NULL, *flags = NULL, *nd = NULL;
		const char *newidle = d->sd[i].newidle ? "newidle=yes" : "newidle=no";

		r = cpuset_format_list(&d->sd[i].span->cpus, &span);
		if (r < 0)
			return r;
		r = domain_flags_to_string(d->sd[i].flags, &flags);
		if (r < 0)
			return r;
		if (d->sd[i].distance == 0) {
			r = sd_bus_message_append(reply, "(ussas)", d->sd[i].level, d->sd[i].name, flags, 3, span,
						  newidle, "source=predicted");
			if (r < 0)
				return r;
			continue;
		}
		nd = strprintf("distance=%u%s", d->sd[i].distance, predicted->distances_assumed ? " (assumed)" : "");
		if (!nd)
			return -ENOMEM;
		r = sd_bus_message_append(reply, "(ussas)", d->sd[i].level, d->sd[i].name, flags, 4, span, newidle,
					  nd, "source=predicted");
		if (r < 0)
			return r;
	}
	return 0;
}

static int method_get_cpu_domains(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
	Manager *m = userdata;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	uint32_t cpu;
	int r;

	r = sd_bus_message_read(msg, "u", &cpu);
	if (r < 0)
		return r;
	if (cpu >= m->session.topology->n_slots || !cpuset_contains(&m->session.topology->online, cpu))
		return bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "CPU %u is not online (online: 0-%u)", cpu,
					 m->session.topology->n_slots ? m->session.topology->n_slots - 1 : 0);

	manager_refresh_layout(m);
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_open_container(reply, 'a', "(ussas)");
	if (r < 0)
		return r;
	if (manager_layout_is_live(m))
		r = append_live_domains(reply, m->live, cpu);
	else
		r = append_predicted_domains(reply, m->predicted, cpu);
	if (r < 0)
		return r;
	r = sd_bus_message_close_container(reply);
	if (r < 0)
		return r;
	return sd_bus_send(NULL, reply, NULL);
}

int manager_redispatch(Manager *m, sd_bus_message *msg)
{
	static const struct {
		const char *member;
		sd_bus_message_handler_t handler;
	} table[] = {
		{ "SetProfile", method_set_profile },
		{ "SetProfilePersistent", method_set_profile_persistent },
		{ "AutoProfile", method_auto_profile },
		{ "Apply", method_apply },
		{ "Revert", method_revert },
		{ "Reload", method_reload },
		{ "ReloadConfiguration", method_reload_configuration },
		{ "HoldProfile", method_hold_profile },
		{ "ReleaseProfile", method_release_profile },
	};
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	int r = -EBADR;

	if (sd_bus_message_rewind(msg, true) < 0)
		return sd_bus_reply_method_errno(msg, -EIO, NULL);
	for (size_t i = 0; i < ELEMENTSOF(table); i++)
		if (streq_ptr(sd_bus_message_get_member(msg), table[i].member)) {
			r = table[i].handler(msg, m, &error);
			break;
		}
	if (r >= 0)
		return r;
	if (sd_bus_error_is_set(&error))
		return sd_bus_reply_method_error(msg, &error);
	return sd_bus_reply_method_errno(msg, r, NULL);
}

static const sd_bus_vtable manager_vtable[] = {
	SD_BUS_VTABLE_START(0),

	SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("State", "s", property_get_state, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("StateReasons", "as", property_get_state_reasons, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("ActiveProfile", "s", property_get_active_profile, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("ActiveProfileReason", "s", property_get_active_profile_reason, 0,
			SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("ActiveProfileSource", "s", property_get_active_profile_source, 0,
			SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("ProfileHold", "(ussss)", property_get_profile_hold, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("WorkloadRules", "a(sss)", property_get_workload_rules, 0, 0),
	SD_BUS_PROPERTY("CpuVendor", "s", property_get_cpu_vendor, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("CpuFamily", "u", property_get_cpu_family, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("CpuModel", "u", property_get_cpu_model, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("CpuName", "s", property_get_cpu_name, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Topology", "a{sv}", property_get_topology, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("Settings", "a(sssbs)", property_get_settings, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("KernelCapabilities", "a{sb}", property_get_kernel_caps, 0,
			SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),
	SD_BUS_PROPERTY("IsolatedCpus", "s", property_get_isolated, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("HousekeepingCpus", "s", property_get_housekeeping, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("RebootRequired", "b", property_get_reboot_required, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("PendingKernelCmdline", "s", property_get_pending_cmdline, 0,
			SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("DomainLayout", "a(usssas)", property_get_domain_layout, 0,
			SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),

	SD_BUS_METHOD_WITH_NAMES("ListProfiles", "", , "a(sss)", SD_BUS_PARAM(profiles), method_list_profiles,
				 SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("SetProfile", "sb", SD_BUS_PARAM(name) SD_BUS_PARAM(interactive), "", ,
				 method_set_profile, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("Apply", "b", SD_BUS_PARAM(interactive), "", , method_apply,
				 SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("Revert", "b", SD_BUS_PARAM(interactive), "", , method_revert,
				 SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD("Reload", "", "", method_reload, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("ReloadConfiguration", "b", SD_BUS_PARAM(interactive), "", ,
				 method_reload_configuration, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("SetProfilePersistent", "sb", SD_BUS_PARAM(name) SD_BUS_PARAM(interactive), "", ,
				 method_set_profile_persistent, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("AutoProfile", "b", SD_BUS_PARAM(interactive), "", , method_auto_profile,
				 SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("HoldProfile", "ssb", SD_BUS_PARAM(profile) SD_BUS_PARAM(reason) SD_BUS_PARAM(interactive),
				 "u", SD_BUS_PARAM(cookie), method_hold_profile, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("ReleaseProfile", "u", SD_BUS_PARAM(cookie), "", , method_release_profile,
				 SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("Plan", "s", SD_BUS_PARAM(profile), "a(ssss)s",
				 SD_BUS_PARAM(steps) SD_BUS_PARAM(layout_text), method_plan, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("Verify", "", , "ba(sss)", SD_BUS_PARAM(ok) SD_BUS_PARAM(mismatches), method_verify,
				 SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("GetCpuDomains", "u", SD_BUS_PARAM(cpu), "a(ussas)", SD_BUS_PARAM(domains),
				 method_get_cpu_domains, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("Metrics", "", , "s", SD_BUS_PARAM(text), method_metrics,
				 SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_NAMES("Diagnose", "u", SD_BUS_PARAM(duration_ms), "a(ssssdasass)as",
				 SD_BUS_PARAM(findings) SD_BUS_PARAM(notes), manager_method_diagnose,
				 SD_BUS_VTABLE_UNPRIVILEGED),

	SD_BUS_SIGNAL_WITH_NAMES("Applied", "su", SD_BUS_PARAM(profile) SD_BUS_PARAM(changes), 0),
	SD_BUS_SIGNAL_WITH_NAMES("Drift", "sss", SD_BUS_PARAM(setting) SD_BUS_PARAM(want) SD_BUS_PARAM(got), 0),
	SD_BUS_SIGNAL_WITH_NAMES("ProfileReleased", "us", SD_BUS_PARAM(cookie) SD_BUS_PARAM(why), 0),

	SD_BUS_VTABLE_END
};

static int bus_open(Manager *m)
{
	int r;

	if (m->bus)
		return 0;   /* a connection the caller made (tests: one end of a socketpair) */
	if (!m->bus_address)
		return sd_bus_open_system(&m->bus);
	r = sd_bus_new(&m->bus);
	if (r < 0)
		return r;
	r = sd_bus_set_address(m->bus, m->bus_address);
	if (r < 0)
		return r;
	r = sd_bus_set_bus_client(m->bus, true);
	if (r < 0)
		return r;
	return sd_bus_start(m->bus);
}

int manager_connect_bus(Manager *m)
{
	int r;

	r = bus_open(m);
	if (r < 0)
		return log_error_errno(r, "Failed to connect to the %s bus: %m", m->bus_address ?: "system");

	r = sd_bus_add_object_vtable(m->bus, NULL, TOPOTUNE_BUS_PATH, TOPOTUNE_BUS_INTERFACE, manager_vtable, m);
	if (r < 0)
		return log_error_errno(r, "Failed to register the object: %m");
	r = sd_bus_attach_event(m->bus, m->event, 0);
	if (r < 0)
		return log_error_errno(r, "Failed to attach the bus to the event loop: %m");
	return 0;
}

/* A property's value as sd-bus sends it, as text: what manager_emit_changed() compares. */
static char *property_text(Manager *m, const char *property)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
	_cleanup_free_ char *text = NULL;
	FILE *f;
	size_t size;
	int r = -ENOENT;

	for (const sd_bus_vtable *v = manager_vtable; v->type != _SD_BUS_VTABLE_END; v++)
		if (v->type == _SD_BUS_VTABLE_PROPERTY && streq(v->x.property.member, property)) {
			r = sd_bus_message_new_signal(m->bus, &msg, TOPOTUNE_BUS_PATH, TOPOTUNE_BUS_INTERFACE,
						      "PropertyValue");
			if (r >= 0)
				r = v->x.property.get(m->bus, TOPOTUNE_BUS_PATH, TOPOTUNE_BUS_INTERFACE, property,
						      msg, m, &error);
			break;
		}
	if (r >= 0)
		r = sd_bus_message_seal(msg, 1, 0);
	if (r < 0)
		return NULL;
	f = open_memstream(&text, &size);
	if (!f)
		return NULL;
	r = sd_bus_message_dump(msg, f, 0);
	if (fclose(f) != 0 || r < 0)
		return NULL;
	return TAKE_PTR(text);
}

static void emit_changed(Manager *m, bool send)
{
	const char *props[ELEMENTSOF(changed_properties)];
	size_t n = 0;

	_Static_assert(ELEMENTSOF(changed_properties) - 1 <= MANAGER_CHANGED_PROPERTIES_MAX, "emitted[] too small");
	if (!m->bus)
		return;
	/* A DomainLayout that moved since (another writer, a rebuild) is announced too. */
	manager_refresh_layout(m);
	for (size_t i = 0; changed_properties[i]; i++) {
		_cleanup_free_ char *text = NULL;

		/* Not rendered again while the layout has not moved. */
		if (streq(changed_properties[i], "DomainLayout") && m->layout_emitted == m->layout_generation)
			continue;
		/* Unknown (out of memory): announced, as before. */
		text = property_text(m, changed_properties[i]);
		if (text && streq_ptr(text, m->emitted[i]))
			continue;
		free(m->emitted[i]);
		m->emitted[i] = TAKE_PTR(text);
		props[n++] = changed_properties[i];
	}
	props[n] = NULL;
	m->layout_emitted = m->layout_generation;
	if (n > 0 && send)
		(void)sd_bus_emit_properties_changed_strv(m->bus, TOPOTUNE_BUS_PATH, TOPOTUNE_BUS_INTERFACE,
							  (char **)props);
}

void manager_emit_changed(Manager *m)
{
	emit_changed(m, true);
}

void manager_note_properties(Manager *m)
{
	emit_changed(m, false);
}
