/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * topotunectl check: read topotune.conf, its drop-ins, every profile and
 * every hardware rule as topotuned would, and report each error as
 * FILE:LINE, and whether the profile topotuned would select there exists.
 * Candidate files (not yet installed) are read in place of the file they
 * would become. Reads the configuration root and the machine (for the
 * hardware rules); writes nothing. Depends on the profile and session
 * modules.
 */
#include <getopt.h>
#include <limits.h>

#include "ctl.h"
#include "fileio.h"
#include "json.h"
#include "log.h"
#include "profile.h"
#include "session.h"
#include "strutil.h"

#define CANDIDATE_FILE_MAX (8U * 1024U * 1024U)

typedef struct Candidate {
	char *file;   /* as given */
	char *as;     /* "/etc/topotune/profiles/db.ini" */
	char *text;
} Candidate;

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && streq(s + n - k, suffix);
}

/*
 * Which configuration file @path would be, from its directory's name:
 * topotune.conf, topotune.conf.d/NAME.conf, profiles/NAME.ini,
 * hardware.d/NAME.ini (below /usr/lib/topotune if the path says so, else
 * /etc/topotune).
 */
static int config_path_of(const char *path, char **ret)
{
	_cleanup_free_ char *dir = strdup(path);
	const char *base, *parent, *slash;
	bool usr = strstr(path, "usr/lib/topotune/") != NULL;
	char *s;

	if (!dir)
		return -ENOMEM;
	s = strrchr(dir, '/');
	base = s ? s + 1 : dir;
	if (s)
		*s = 0;
	slash = s ? strrchr(dir, '/') : NULL;
	parent = !s ? "" : slash ? slash + 1 : dir;

	if (streq(base, "topotune.conf"))
		*ret = strdup("/etc/topotune/topotune.conf");
	else if (streq(parent, "topotune.conf.d") && has_suffix(base, ".conf") && base[0] != '.')
		*ret = strprintf("/etc/topotune/topotune.conf.d/%s", base);
	else if ((streq(parent, "profiles") || streq(parent, "hardware.d")) && has_suffix(base, ".ini") &&
		 base[0] != '.')
		*ret = strprintf("/%s/topotune/%s/%s", usr ? "usr/lib" : "etc", parent, base);
	else
		return -EINVAL;
	return *ret ? 0 : -ENOMEM;
}

static int candidate_read(const char *file, const char *as, Candidate *ret)
{
	_cleanup_free_ char *abs_path = NULL, *text = NULL, *where = NULL, *err = NULL;
	_cleanup_close_ int fd = -EBADF;
	size_t size = 0;
	int r;

	if (as)
		r = config_path_of(as, &where);
	else
		r = config_path_of(file, &where);
	if (r == -EINVAL) {
		log_error("%s: not a place topotuned reads; expected topotune.conf, topotune.conf.d/NAME.conf, "
			  "profiles/NAME.ini or hardware.d/NAME.ini%s",
			  as ?: file, as ? "" : " (give --as PATH for a file elsewhere)");
		return r;
	}
	if (r < 0)
		return log_oom();
	if (has_suffix(where, ".ini") && strstr(where, "/profiles/")) {
		_cleanup_free_ char *name = strndup(strrchr(where, '/') + 1, strlen(strrchr(where, '/') + 1) - 4);

		if (!name)
			return log_oom();
		if (!profile_name_is_valid(name)) {
			log_error("%s: '%s' is not a profile name topotuned loads "
				  "(letters, digits, '_', '.' or '-', not starting with '.')", where, name);
			return -EINVAL;
		}
	}

	/*
	 * FILE is the caller's own path, not one below a --root: it is read
	 * as the caller's "/" sees it, so that a symlink in it, absolute or
	 * not, leads where it leads for cat(1).
	 */
	if (file[0] == '/')
		abs_path = strdup(file);
	else {
		_cleanup_free_ char *cwd = get_current_dir_name();

		abs_path = cwd ? strprintf("%s/%s", cwd, file) : NULL;
	}
	if (!abs_path)
		return log_oom();
	r = root_open("/", &fd);
	if (r >= 0)
		r = read_file_at(fd, abs_path, CANDIDATE_FILE_MAX, &text, &size);
	if (r == -EFBIG)
		return log_error_errno(r, "%s: larger than %u MiB", file, CANDIDATE_FILE_MAX / (1024U * 1024U));
	if (r < 0)
		return log_error_errno(r, "%s: %s", file,
				       r == -EBADFD ? "not a regular file" : strerror(-r));
	r = config_text_check(file, text, size, &err);
	if (r < 0) {
		log_error("%s", err);
		return r;
	}

	ret->file = strdup(file);
	if (!ret->file)
		return log_oom();
	ret->as = TAKE_PTR(where);
	ret->text = TAKE_PTR(text);
	return 0;
}

static void candidates_free(Candidate *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].file);
		free(c[i].as);
		free(c[i].text);
	}
	free(c);
}

/* Each error once: a base profile's error shows in every profile that includes it. */
static int add_error(char ***errors, const char *msg)
{
	if (strv_contains(*errors, msg))
		return 0;
	return strv_extend(errors, msg);
}

/* A profile that a file names (profile =): an error at that line if it does not exist. */
static int check_named_profile(int fd, const char *name, const Origin *o, char ***errors)
{
	_cleanup_(profile_freep) Profile *p = NULL;
	_cleanup_free_ char *err = NULL, *where = NULL, *msg = NULL;
	int r;

	r = profile_load(fd, name, &p, &err);
	if (r == -ENOMEM)
		return r;
	if (r != -ENOENT)
		return 0;   /* loads, or its own error is reported with the profiles */
	where = origin_to_string(o);
	msg = strprintf("%s: %s", strna(where), err ?: "no such profile");
	if (!msg)
		return -ENOMEM;
	return add_error(errors, msg);
}

typedef struct CheckCounts {
	size_t config_files, profiles, hardware_rules;
	char *profile;          /* the profile topotuned would select at start */
	char *profile_origin;   /* where that choice is made */
	char **notes;
	/*
	 * Errors in a profile topotuned does not select at start, and no
	 * candidate has: they cannot make it fail to configure, only a later
	 * switch to that profile (which is then refused, the profile in force
	 * kept). "FILE:LINE: message".
	 */
	char **warnings;
} CheckCounts;

static void check_counts_done(CheckCounts *c)
{
	free(c->profile);
	free(c->profile_origin);
	strv_free(c->notes);
	strv_free(c->warnings);
}

/* @error ("FILE:LINE: message") is in a file being checked as a candidate. */
static bool in_candidate(const char *error, const Candidate *cand, size_t n_cand)
{
	for (size_t i = 0; i < n_cand; i++) {
		const char *rest = startswith(error, cand[i].as);

		if (rest && *rest == ':')
			return true;
	}
	return false;
}

/*
 * Every profile, each error of it once: an error when topotuned would meet
 * it configuring (the profile it selects, with its include chain) or when it
 * is in a candidate, else a warning.
 */
static int check_profiles(int fd, const Candidate *cand, size_t n_cand, char ***errors, CheckCounts *counts)
{
	_cleanup_strv_free_ char **listing = NULL;
	_cleanup_free_ char *err = NULL;
	ProfileInfo *list = NULL;
	size_t n = 0;
	int r;

	/* Listing reads each profile too: its errors come again with the profile's load below. */
	config_errors_collect(&listing);
	r = profile_list(fd, &list, &n, &err);
	config_errors_collect(errors);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return add_error(errors, err ?: "profiles: failed to list");
	counts->profiles = n;
	for (size_t i = 0; r >= 0 && i < n; i++) {
		_cleanup_(profile_freep) Profile *p = NULL;
		_cleanup_strv_free_ char **mine = NULL;
		_cleanup_free_ char *e = NULL;
		bool selected = counts->profile && streq(list[i].name, counts->profile);

		/* This profile's errors alone, every one of them. */
		config_errors_collect(&mine);
		r = profile_load(fd, list[i].name, &p, &e);
		config_errors_collect(errors);
		if (r == -ENOMEM)
			break;
		r = r < 0 && !strv_contains(mine, e ?: list[i].path) ? strv_extend(&mine, e ?: list[i].path) : 0;
		STRV_FOREACH(m, mine) {
			if (r < 0)
				break;
			if (selected || in_candidate(*m, cand, n_cand) || strv_contains(*errors, *m))
				r = add_error(errors, *m);
			else
				r = add_error(&counts->warnings, *m);
		}
	}
	profile_info_array_free(list, n);
	return r;
}

/*
 * The profile topotuned selects at start, as it selects it (one function,
 * session_select_profile()): it must exist. A hardware rule it does not
 * choose names a profile that need not exist here: said in a note, as it
 * would fail on a machine the rule matches. Without @facts (the machine not
 * read) no rule can be told to match, and each rule's profile must exist.
 */
static int check_selection(int fd, const Config *c, HardwareRule *const *rules, size_t n_rules,
			   const MatchFacts *facts, char ***errors, CheckCounts *counts)
{
	_cleanup_(session_selection_done) SessionSelection sel = {};
	int r;

	r = session_select_profile(c, rules, n_rules, facts, NULL, &sel);
	if (r < 0)
		return r;
	r = check_named_profile(fd, sel.name, &sel.origin, errors);
	if (r < 0)
		return r;
	counts->profile = TAKE_PTR(sel.name);
	counts->profile_origin = TAKE_PTR(sel.source);

	for (size_t i = 0; i < n_rules; i++) {
		_cleanup_strv_free_ char **missing = NULL;
		const HardwareRule *rule = rules[i];

		if (!rule->profile || (streq(rule->profile, counts->profile) && facts &&
				       hardware_rule_matches(rule, facts)))
			continue;
		r = check_named_profile(fd, rule->profile, &rule->profile_origin, facts ? &missing : errors);
		if (r < 0)
			return r;
		STRV_FOREACH(m, missing) {
			r = strv_push(&counts->notes, strprintf("%s (the rule %s on this machine)", *m,
								 hardware_rule_matches(rule, facts) ?
								 "matches, but the configuration chooses" :
								 "does not match"));
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int check_all(int fd, const MatchFacts *facts, const Candidate *cand, size_t n_cand, char ***errors,
		     CheckCounts *counts)
{
	_cleanup_(config_freep) Config *c = NULL;
	_cleanup_free_ char *err = NULL;
	HardwareRule **rules = NULL;
	size_t n_rules = 0;
	int r;

	r = config_load(fd, &c, &err);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		r = add_error(errors, err ?: "topotune.conf: failed to load");
		if (r < 0)
			return r;
	} else
		counts->config_files = strv_length(c->files);

	free(err);
	err = NULL;
	r = hardware_rules_load(fd, &rules, &n_rules, &err);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		r = add_error(errors, err ?: "hardware.d: failed to load");
		if (r < 0)
			return r;
	}
	counts->hardware_rules = n_rules;
	/*
	 * Without a configuration topotuned does not start, and there is no
	 * choice to check; without the rules (one does not load) neither.
	 * Else: the profile it selects, built-in default (balanced)
	 * included: without it the daemon starts "failed".
	 */
	r = c && r >= 0 ? check_selection(fd, c, rules, n_rules, facts, errors, counts) : 0;
	hardware_rules_free(rules, n_rules);
	if (r < 0)
		return r;
	return check_profiles(fd, cand, n_cand, errors, counts);
}

/* "FILE:LINE: message" into its parts; no line: 0. */
static void error_split(const char *e, char **ret_file, unsigned *ret_line, const char **ret_msg)
{
	const char *colon = strchr(e, ':');
	unsigned line = 0;
	char *end;

	*ret_file = NULL;
	*ret_line = 0;
	*ret_msg = e;
	if (!colon || e[0] != '/')
		return;
	*ret_file = strndup(e, (size_t)(colon - e));
	errno = 0;
	if (colon[1] >= '0' && colon[1] <= '9') {
		unsigned long v = strtoul(colon + 1, &end, 10);

		if (errno == 0 && *end == ':' && v <= UINT_MAX) {
			line = (unsigned)v;
			colon = end;
		}
	}
	*ret_line = line;
	*ret_msg = colon[1] == ' ' ? colon + 2 : colon + 1;
}

static void json_errors(JsonWriter *w, const char *key, char **errors)
{
	json_key(w, key);
	json_begin_array(w);
	STRV_FOREACH(e, errors) {
		_cleanup_free_ char *file = NULL;
		const char *msg;
		unsigned line;

		error_split(*e, &file, &line, &msg);
		json_begin_object(w);
		json_key(w, "file");
		json_string(w, file);
		json_key(w, "line");
		if (line)
			json_int(w, line);
		else
			json_null(w);
		json_key(w, "message");
		json_string(w, msg);
		json_end_object(w);
	}
	json_end_array(w);
}

static void check_json(char **errors, const CheckCounts *counts, const Candidate *cand, size_t n_cand)
{
	JsonWriter w;

	ctl_json_begin(&w);
	json_key(&w, "ok");
	json_bool(&w, !errors || !*errors);
	json_key(&w, "config_files");
	json_int(&w, (long long)counts->config_files);
	json_key(&w, "profiles");
	json_int(&w, (long long)counts->profiles);
	json_key(&w, "hardware_rules");
	json_int(&w, (long long)counts->hardware_rules);
	json_key(&w, "profile");
	json_string(&w, counts->profile);
	json_key(&w, "profile_origin");
	json_string(&w, counts->profile_origin);
	json_key(&w, "notes");
	json_begin_array(&w);
	STRV_FOREACH(n, counts->notes)
		json_string(&w, *n);
	json_end_array(&w);
	json_key(&w, "candidates");
	json_begin_array(&w);
	for (size_t i = 0; i < n_cand; i++)
		json_row(&w, JSON_STR("file", cand[i].file), JSON_STR("as", cand[i].as));
	json_end_array(&w);
	json_errors(&w, "errors", errors);
	json_errors(&w, "warnings", counts->warnings);
	ctl_json_end(&w);
}

int verb_check(const CtlContext *ctx, int argc, char *argv[])
{
	static const struct option options[] = {
		{ "as", required_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{}
	};
	_cleanup_strv_free_ char **errors = NULL;
	_cleanup_(session_done) Session s = SESSION_INIT;
	_cleanup_free_ char *discover_error = NULL;
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ ConfigCandidate *cc = NULL;
	Candidate *cand = NULL;
	CheckCounts counts = {};
	const char *as = NULL, *root = ctx->config_root ?: ctx->root;
	bool json = ctx->json;
	size_t n_cand = 0;
	int c, r, ret = 2;

	optind = 0;
	while ((c = getopt_long(argc, argv, "a:j", options, NULL)) >= 0)
		switch (c) {
		case 'a':
			as = optarg;
			break;
		case 'j':
			json = true;
			break;
		default:
			return 2;
		}
	if (as && argc - optind != 1) {
		log_error("check: --as PATH takes exactly one FILE");
		return 2;
	}

	cand = calloc((size_t)(argc - optind) + 1, sizeof(Candidate));
	cc = calloc((size_t)(argc - optind) + 1, sizeof(ConfigCandidate));
	if (!cand || !cc) {
		free(cand);
		return log_oom(), 2;
	}
	for (int i = optind; i < argc; i++) {
		r = candidate_read(argv[i], as, &cand[n_cand]);
		if (r < 0)
			goto finish;
		for (size_t k = 0; k < n_cand; k++)
			if (streq(cand[k].as, cand[n_cand].as)) {
				log_error("check: %s and %s are both %s", cand[k].file, argv[i], cand[k].as);
				n_cand++;
				goto finish;
			}
		cc[n_cand] = (ConfigCandidate) { cand[n_cand].as, cand[n_cand].text };
		n_cand++;
	}

	r = root_open(root, &fd);
	if (r < 0) {
		log_error_errno(r, "Failed to open configuration root %s: %m", root);
		goto finish;
	}
	/* The machine, for the hardware rules topotuned would match on it. */
	r = session_discover(&s, ctx->root, ctx->config_root, !ctx->offline, ctx->cpuid_dump, SESSION_KERNEL_STOCK,
			     &discover_error);
	if (r == -ENOMEM) {
		log_oom();
		goto finish;
	}
	if (r < 0) {
		r = strv_push(&counts.notes, strprintf("%s: no hardware rule can be matched, each one's profile "
							"must exist", strna(discover_error)));
		if (r < 0) {
			log_oom();
			goto finish;
		}
	}
	config_candidates_set(cc, n_cand);
	config_errors_collect(&errors);
	r = check_all(fd, s.topology ? &s.facts : NULL, cand, n_cand, &errors, &counts);
	config_errors_collect(NULL);
	config_candidates_set(NULL, 0);
	if (r < 0) {
		log_error_errno(r, "check: %m");
		goto finish;
	}

	if (json)
		check_json(errors, &counts, cand, n_cand);
	else {
		for (size_t i = 0; i < n_cand; i++)
			if (!streq(cand[i].file, cand[i].as))
				printf("Checking %s as %s\n", tty_text(cand[i].file), cand[i].as);
		STRV_FOREACH(n, counts.notes)
			fprintf(stderr, "Note: %s\n", tty_text(*n));
		STRV_FOREACH(e, errors)
			fprintf(stderr, "%s\n", tty_text(*e));
		STRV_FOREACH(e, counts.warnings)
			fprintf(stderr, "Warning: %s (a profile topotuned does not select now: switching to it "
				"would be refused)\n", tty_text(*e));
		if (errors && *errors)
			fprintf(stderr, "%zu error%s.\n",
				strv_length(errors), strv_length(errors) == 1 ? "" : "s");
		else
			printf("OK: %zu configuration file%s, %zu profile%s, %zu hardware rule%s.\n",
			       counts.config_files, counts.config_files == 1 ? "" : "s", counts.profiles,
			       counts.profiles == 1 ? "" : "s", counts.hardware_rules,
			       counts.hardware_rules == 1 ? "" : "s");
		if (counts.profile)
			printf("Profile: %s, as topotuned selects it at start (%s).\n", tty_text(counts.profile),
			       tty_text(counts.profile_origin));
	}
	ret = errors && *errors ? 2 : 0;
finish:
	check_counts_done(&counts);
	candidates_free(cand, n_cand);
	return ret;
}
