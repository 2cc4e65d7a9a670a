/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Typed, validated configuration: topotune.conf (+ conf.d drop-ins), workload
 * profiles (ini, single inheritance via include=) and hardware rules. Every
 * effective value remembers the file and line it came from.
 *
 * Search paths, all relative to the configuration root fd:
 *   etc/topotune/topotune.conf, etc/topotune/topotune.conf.d/ *.conf (lexical)
 *   usr/lib/topotune/profiles/NAME.ini, etc/topotune/profiles/NAME.ini (shadows)
 *   usr/lib/topotune/hardware.d/ *.ini, etc/topotune/hardware.d/ *.ini
 *     (a file in etc shadows the vendor file of the same name; all are
 *      applied in lexical order of their file names, later wins)
 *
 * Precedence of one setting, lowest first:
 *   built-in default < matching hardware rules < profile (base first, then
 *   each includer) < topotune.conf [scheduler]/[isolation] < conf.d drop-ins
 *
 * Errors are returned as negative errno; when @ret_error is given it receives
 * "FILE:LINE: message" (FILE as the administrator knows it, i.e. "/etc/...")
 * or "FILE: message" when no line applies.
 */

#include <stdbool.h>

#include "cpuset.h"
#include "macro.h"
#include "setting.h"

typedef struct Origin {
	char *file;     /* NULL: built-in default */
	unsigned line;
} Origin;

typedef enum RollbackMode {
	ROLLBACK_ON_EXIT,
	ROLLBACK_NOT_ON_EXIT,
	_ROLLBACK_MAX,
	_ROLLBACK_INVALID = -EINVAL,
} RollbackMode;

/* Values and origins indexed by SettingId; an origin without a file: not set here. */
typedef struct ProfileSettings {
	SettingValue value[_SETTING_MAX];
	Origin origin[_SETTING_MAX];
} ProfileSettings;

typedef struct Profile {
	char *name;          /* file name without .ini */
	char *path;          /* "/usr/lib/topotune/profiles/NAME.ini" or /etc/... */
	char *description;
	char **chain;        /* names, base first, this profile last */
	ProfileSettings settings;   /* merged over the include chain */
	ProfileSettings *layers;    /* per file of @chain, base first: what that file sets itself */
	size_t n_layers;
	char **workload_exe;
	char **workload_comm;
	char **workload_cgroup;
	Origin workload_origin;
} Profile;

typedef struct ProfileInfo {
	char *name;
	char *description;
	char *path;
} ProfileInfo;

/* Facts about the machine that hardware rules match on. */
#define MATCH_CORE_KINDS_MAX 8U

/* One core kind as hardware rules see it (Topology's TopoKind). */
typedef struct MatchCoreKind {
	const char *key;              /* "atom", "core", "0x41:0xd46", "capacity-280" */
	const char *name;             /* "Intel Atom (E-core)", "Arm Cortex-A510" */
	unsigned capacity;            /* 0 unknown */
} MatchCoreKind;

typedef struct MatchFacts {
	const char *vendor;           /* "intel", "amd", "hygon", ... lower case */
	unsigned family, model;
	unsigned packages, cpus;
	unsigned nodes_per_package;
	bool smt;
	/* Core kinds the kernel tells (0: it tells nothing, not "all alike"); the first MATCH_CORE_KINDS_MAX. */
	unsigned n_core_kinds;
	MatchCoreKind core_kinds[MATCH_CORE_KINDS_MAX];
} MatchFacts;

typedef struct HardwareRule {
	char *path;
	unsigned line;               /* of [match] */
	char *vendor;                /* NULL: any */
	unsigned family_min, family_max;         /* 0..UINT_MAX: any */
	unsigned model_min, model_max;
	unsigned packages_min, packages_max;
	unsigned cpus_min, cpus_max;
	unsigned nodes_per_package_min, nodes_per_package_max;
	int smt;                     /* -1 any, 0 no, 1 yes */
	char **has_core_kinds;       /* has_core_kind = : every one must be a kind of the machine */
	unsigned core_kinds_min, core_kinds_max;
	unsigned core_capacity_min, core_capacity_max;   /* some kind's capacity in range; 0..UINT_MAX: any */
	char *profile;               /* [profile] name = : default profile here */
	Origin profile_origin;
	ProfileSettings settings;
} HardwareRule;

typedef struct Config {
	char *profile;               /* [daemon] profile = (default "balanced") */
	Origin profile_origin;
	RollbackMode rollback;       /* [daemon] rollback = on-exit|not-on-exit */
	bool manage_bootloader;      /* [daemon] manage_bootloader = yes|no */
	bool partial_apply;          /* [daemon] partial_apply = yes|no: apply what the kernel supports */
	unsigned verify_interval_sec;    /* [daemon] verify_interval = 60 (0: off) */
	char *metrics_textfile;      /* [daemon] metrics_textfile = /ABS/PATH.prom; NULL: off */
	unsigned metrics_interval_sec;   /* [daemon] metrics_interval = 60 (>= 1) */
	ProfileSettings overrides;   /* [scheduler] and [isolation] */
	char **files;                /* files read, in order */
	/*
	 * @overrides as they were after each of @files: a setting whose origin
	 * there is that file was set by it (explain shows each file's layer).
	 */
	ProfileSettings *layers;
} Config;

const char *rollback_mode_to_string(RollbackMode m) _const_;
RollbackMode rollback_mode_from_string(const char *s) _pure_;

void origin_done(Origin *o);
int origin_copy(Origin *dst, const Origin *src);
/* "FILE:LINE" or "built-in default"; static buffer-free: returns allocated. */
char *origin_to_string(const Origin *o);

void profile_settings_done(ProfileSettings *s);
/* Overlay every value that @over sets (origin.file != NULL) onto @base. */
int profile_settings_overlay(ProfileSettings *base, const ProfileSettings *over);

Profile *profile_free(Profile *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Profile *, profile_free);
HardwareRule *hardware_rule_free(HardwareRule *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(HardwareRule *, hardware_rule_free);
Config *config_free(Config *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(Config *, config_free);
void profile_info_array_free(ProfileInfo *a, size_t n);

int config_load(int root_fd, Config **ret, char **ret_error);

/* Parse one profile file's text (no includes resolved): for tests and fuzzing. */
int profile_parse_string(const char *text, const char *filename, Profile **ret, char **ret_error);

/* Load NAME with /etc shadowing /usr/lib and its include chain resolved. */
int profile_load(int root_fd, const char *name, Profile **ret, char **ret_error);

/* All profiles, shadowing applied, sorted by name. */
int profile_list(int root_fd, ProfileInfo **ret, size_t *ret_n, char **ret_error);

int hardware_rules_load(int root_fd, HardwareRule ***ret, size_t *ret_n, char **ret_error);
void hardware_rules_free(HardwareRule **rules, size_t n);
bool hardware_rule_matches(const HardwareRule *r, const MatchFacts *f);

/*
 * Profile name to use: Config's profile if set by a file, else the last
 * matching hardware rule's [profile] name, else "balanced". @ret_origin
 * (optional) says where the choice came from.
 */
int profile_select(const Config *c, HardwareRule *const *rules, size_t n_rules,
		   const MatchFacts *f, char **ret_name, Origin *ret_origin);

/* Effective settings: defaults < matching rules < profile < config overrides. */
int settings_resolve(HardwareRule *const *rules, size_t n_rules, const MatchFacts *f,
		     const Profile *p, const Config *c, ProfileSettings *ret);

/*
 * Additions (profile module owner). origin_copy() and the other setters
 * release what @dst held before, like strdup_to(): pass initialised values.
 */
/* NAME.ini must fit in one directory entry (NAME_MAX): a longer name is no profile. */
#define PROFILE_NAME_MAX 251

/*
 * Is @size bytes of @text a text inih can read whole? A NUL byte would end
 * it there silently: -EBADMSG with "FILE:LINE: ..." in *ret_error.
 */
int config_text_check(const char *file, const char *text, size_t size, char **ret_error);

/*
 * [A-Za-z0-9_.-]{1,PROFILE_NAME_MAX}, not starting with '.': the only names
 * profile_load() accepts.
 */
bool profile_name_is_valid(const char *name) _pure_;

/* Built-in defaults (the settings table's), no origins. */
void profile_settings_init(ProfileSettings *s);
/* Deep copy; @ret is overwritten (not released) and only on success. */
int profile_settings_copy(const ProfileSettings *s, ProfileSettings *ret);

/*
 * One setting by its ini key (a row of the settings table), spelled as it
 * would be written in a profile ("on", "auto", "0-3,8", "auto:2-per-llc").
 * -ENOENT for an unknown key.
 */
int profile_settings_format_value(const ProfileSettings *s, const char *key, char **ret);
/* Where that setting came from; NULL for an unknown key. */
const Origin *profile_settings_origin(const ProfileSettings *s, const char *key) _pure_;

/*
 * Candidate files for `topotunectl check`: text read wherever the
 * configuration file @as would be ("etc/topotune/profiles/db.ini", relative
 * to the configuration root), and listed in its directory even before it
 * exists there, so that a file can be checked in the context of the
 * installed configuration before it is installed. Errors name @as. The
 * array is borrowed until the next call; NULL, 0 clears it. Process-wide:
 * the daemon never sets it.
 */
typedef struct ConfigCandidate {
	const char *as;
	const char *text;
} ConfigCandidate;

void config_candidates_set(const ConfigCandidate *c, size_t n);

/*
 * For `topotunectl check`: with @sink set, every error of every file is
 * added to *@sink (each message once) and loading goes on past it -- the
 * rest of the file, the next drop-in, the next rule -- while the loaders
 * still fail with their first error as before. NULL turns it off.
 * Process-wide like the candidates: the daemon never sets it.
 */
void config_errors_collect(char ***sink);
