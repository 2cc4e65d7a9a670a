/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Workload profiles: one ini file each, /etc shadowing /usr/lib by name,
 * single inheritance through [profile] include=. Depends on basic and the
 * module's inih wrapper; all reads go through the root fd.
 */
#include "profile-internal.h"
#include "strutil.h"

/* Longest include chain, the requested profile included. */
#define PROFILE_CHAIN_MAX 16

#define PROFILE_SEARCH_TEXT "/etc/topotune/profiles or /usr/lib/topotune/profiles"

static const char *const profile_sections[] = {
	"profile", "scheduler", "isolation", "workload", NULL,
};

typedef struct ProfileParse {
	Profile *profile;
	char *include;
	unsigned include_line;
} ProfileParse;

Profile *profile_free(Profile *p)
{
	if (!p)
		return NULL;
	free(p->name);
	free(p->path);
	free(p->description);
	strv_free(p->chain);
	profile_settings_done(&p->settings);
	for (size_t i = 0; i < p->n_layers; i++)
		profile_settings_done(&p->layers[i]);
	free(p->layers);
	strv_free(p->workload_exe);
	strv_free(p->workload_comm);
	strv_free(p->workload_cgroup);
	origin_done(&p->workload_origin);
	free(p);
	return NULL;
}

void profile_info_array_free(ProfileInfo *a, size_t n)
{
	if (!a)
		return;
	for (size_t i = 0; i < n; i++) {
		free(a[i].name);
		free(a[i].description);
		free(a[i].path);
	}
	free(a);
}

static int workload_words(IniFile *ini, const char *key, const char *value, char ***ret)
{
	_cleanup_strv_free_ char **l = NULL;
	int r;

	r = strv_split(value, WHITESPACE, &l);
	if (r < 0)
		return ini_error(ini, r, "out of memory");

	STRV_FOREACH(w, l) {
		if (streq(key, "comm")) {
			/* The kernel keeps TASK_COMM_LEN - 1 = 15 characters. */
			if (strlen(*w) > 15)
				return ini_error(ini, -EINVAL,
						 "invalid value '%s' for comm: '%s' is longer than 15 characters",
						 value, *w);
		} else if ((*w)[0] != '/')
			return ini_error(ini, -EINVAL,
					 "invalid value '%s' for %s: '%s' is not an absolute path",
					 value, key, *w);
	}

	*ret = TAKE_PTR(l);
	return 0;
}

static int profile_key(IniFile *ini, const char *section, const char *key, const char *value,
		       void *userdata)
{
	ProfileParse *pp = userdata;
	Profile *p = pp->profile;
	int r;

	if (streq(section, "profile")) {
		if (streq(key, "description")) {
			if (strdup_to(&p->description, value) < 0)
				return ini_error(ini, -ENOMEM, "out of memory");
			return 0;
		}
		if (streq(key, "include")) {
			r = ini_check_profile_name(ini, key, value);
			if (r < 0)
				return r;
			if (strdup_to(&pp->include, value) < 0)
				return ini_error(ini, -ENOMEM, "out of memory");
			pp->include_line = ini_line(ini);
			return 0;
		}
		return ini_unknown_key(ini, section, key);
	}

	if (streq(section, "workload")) {
		char ***l;

		if (streq(key, "exe"))
			l = &p->workload_exe;
		else if (streq(key, "comm"))
			l = &p->workload_comm;
		else if (streq(key, "cgroup"))
			l = &p->workload_cgroup;
		else
			return ini_unknown_key(ini, section, key);

		strv_free(*l);
		*l = NULL;
		r = workload_words(ini, key, value, l);
		if (r < 0)
			return r;
		/* One origin for the rules: the first [workload] line. */
		if (!p->workload_origin.file &&
		    origin_set(&p->workload_origin, ini_file(ini), ini_line(ini)) < 0)
			return ini_error(ini, -ENOMEM, "out of memory");
		return 0;
	}

	return settings_parse_key(ini, &p->settings, section, key, value);
}

static const IniSyntax profile_syntax = {
	.sections = profile_sections,
	.key = profile_key,
};

static int profile_parse_one(const char *text, const char *file, ProfileParse *ret,
			     char **ret_error)
{
	_cleanup_(profile_freep) Profile *p = NULL;
	ProfileParse pp = {};
	const char *base;
	size_t n;
	int r;

	p = calloc(1, sizeof(Profile));
	if (!p)
		return -ENOMEM;
	profile_settings_init(&p->settings);

	base = strrchr(file, '/');
	base = base ? base + 1 : file;
	n = strlen(base);
	if (n > 4 && streq(base + n - 4, ".ini"))
		n -= 4;
	p->name = strndup(base, n);
	p->path = strdup(file);
	if (!p->name || !p->path)
		return -ENOMEM;
	r = strv_extend(&p->chain, p->name);
	if (r < 0)
		return r;

	pp.profile = p;
	r = ini_parse_text(text, file, &profile_syntax, &pp, ret_error);
	if (r < 0) {
		free(pp.include);
		return r;
	}

	pp.profile = TAKE_PTR(p);
	*ret = pp;
	return 0;
}

int profile_parse_string(const char *text, const char *filename, Profile **ret, char **ret_error)
{
	ProfileParse pp;
	int r;

	r = profile_parse_one(text, filename, &pp, ret_error);
	if (r < 0)
		return r;
	free(pp.include);
	*ret = pp.profile;
	return 0;
}

/*
 * /etc shadows /usr/lib. @vendor_only: an /etc profile that includes its own
 * name extends the vendor profile of that name rather than itself.
 */
static int profile_read(int root_fd, const char *name, bool vendor_only, char **ret_text,
			char **ret_file, char **ret_error)
{
	_cleanup_free_ char *fn = NULL;
	int r;

	fn = strprintf("%s.ini", name);
	if (!fn)
		return -ENOMEM;
	if (!vendor_only) {
		r = config_file_read(root_fd, PROFILE_DIR_ETC, fn, ret_text, ret_file, ret_error);
		if (r != -ENOENT)
			return r;
	}
	return config_file_read(root_fd, PROFILE_DIR_USR, fn, ret_text, ret_file, ret_error);
}

typedef struct ProfileChain {
	ProfileParse files[PROFILE_CHAIN_MAX];   /* [0] requested, then its bases */
	size_t n;
} ProfileChain;

static void profile_chain_done(ProfileChain *c)
{
	for (size_t i = 0; i < c->n; i++) {
		profile_free(c->files[i].profile);
		free(c->files[i].include);
	}
	c->n = 0;
}

/* "a -> b -> @last" over the names loaded so far. */
static char *profile_chain_text(const ProfileChain *c, const char *last)
{
	_cleanup_free_ char *s = NULL;
	StrBuf b = {};

	for (size_t i = 0; i < c->n; i++)
		strbuf_appendf(&b, "%s -> ", c->files[i].profile->name);
	strbuf_append(&b, last);
	if (strbuf_steal(&b, &s) < 0)
		return NULL;
	return TAKE_PTR(s);
}

static int profile_merge(ProfileChain *c, Profile **ret)
{
	_cleanup_(profile_settings_done) ProfileSettings s = {};
	_cleanup_strv_free_ char **names = NULL;
	Profile *leaf = c->files[0].profile;
	int r;

	profile_settings_init(&s);
	names = calloc(1, sizeof(char *));
	if (!names)
		return -ENOMEM;
	leaf->layers = calloc(c->n, sizeof(ProfileSettings));
	if (!leaf->layers)
		return -ENOMEM;

	for (size_t i = c->n; i > 0; i--) {
		const Profile *p = c->files[i - 1].profile;
		ProfileSettings *l = &leaf->layers[leaf->n_layers++];

		profile_settings_init(l);
		r = profile_settings_overlay(l, &p->settings);
		if (r < 0)
			return r;
		r = profile_settings_overlay(&s, &p->settings);
		if (r < 0)
			return r;
		r = strv_extend(&names, p->name);
		if (r < 0)
			return r;
	}

	/* The nearest description is inherited; workload rules are not: they
	 * would make a base and its includer claim the same processes. */
	for (size_t i = 1; !leaf->description && i < c->n; i++)
		if (c->files[i].profile->description &&
		    strdup_to(&leaf->description, c->files[i].profile->description) < 0)
			return -ENOMEM;

	profile_settings_done(&leaf->settings);
	leaf->settings = s;
	s = (ProfileSettings) {};
	strv_free(leaf->chain);
	leaf->chain = TAKE_PTR(names);

	*ret = TAKE_PTR(c->files[0].profile);
	return 0;
}

int profile_load(int root_fd, const char *name, Profile **ret, char **ret_error)
{
	_cleanup_(profile_chain_done) ProfileChain c = {};
	const char *want = name;

	if (!profile_name_is_valid(name))
		return error_message(ret_error, -EINVAL,
				     "invalid profile name '%s': expected letters, digits, '_', '.' or '-', not starting with '.'",
				     strempty(name));

	for (;;) {
		_cleanup_free_ char *text = NULL, *file = NULL, *chain = NULL;
		const ProfileParse *includer = c.n > 0 ? &c.files[c.n - 1] : NULL;
		bool vendor_only;
		int r;

		vendor_only = includer && streq(includer->profile->name, want) &&
			      startswith(includer->profile->path, "/etc/");

		r = profile_read(root_fd, want, vendor_only, &text, &file, ret_error);
		if (r == -ENOENT && !includer)
			return error_message(ret_error, r, "profile '%s' not found in %s", want,
					     PROFILE_SEARCH_TEXT);
		if (r == -ENOENT)
			/* -ENOLINK: a profile that exists but whose include does not. */
			return error_message(ret_error, -ENOLINK, "%s:%u: included profile '%s' not found in %s",
					     includer->profile->path, includer->include_line, want,
					     vendor_only ? "/usr/lib/topotune/profiles" : PROFILE_SEARCH_TEXT);
		if (r < 0)
			return r;

		for (size_t i = 0; i < c.n; i++)
			if (streq(c.files[i].profile->path, file)) {
				chain = profile_chain_text(&c, want);
				if (!chain)
					return -ENOMEM;
				return error_message(ret_error, -ELOOP, "%s:%u: include cycle %s",
						     includer->profile->path,
						     includer->include_line, chain);
			}
		if (c.n >= PROFILE_CHAIN_MAX) {
			chain = profile_chain_text(&c, want);
			if (!chain)
				return -ENOMEM;
			return error_message(ret_error, -ELOOP,
					     "%s:%u: include chain longer than %u profiles: %s",
					     includer->profile->path, includer->include_line,
					     PROFILE_CHAIN_MAX, chain);
		}

		r = profile_parse_one(text, file, &c.files[c.n], ret_error);
		if (r < 0)
			return r;
		c.n++;

		if (!c.files[c.n - 1].include)
			break;
		want = c.files[c.n - 1].include;
	}

	return profile_merge(&c, ret);
}

/*
 * Every profile name in either directory. A profile that does not load is
 * listed, with "invalid: <error>" as its description, rather than failing
 * the whole list: `topotunectl profiles` is where an operator looks for
 * what is wrong, and one broken file should not hide the others.
 */
int profile_list(int root_fd, ProfileInfo **ret, size_t *ret_n, char **ret_error)
{
	_cleanup_strv_free_ char **etc = NULL, **usr = NULL, **names = NULL;
	ProfileInfo *infos = NULL;
	size_t n = 0;
	int r;

	r = config_dir_list(root_fd, PROFILE_DIR_ETC, ".ini", &etc, ret_error);
	if (r < 0)
		return r;
	r = config_dir_list(root_fd, PROFILE_DIR_USR, ".ini", &usr, ret_error);
	if (r < 0)
		return r;

	names = calloc(1, sizeof(char *));
	if (!names)
		return -ENOMEM;
	for (size_t d = 0; d < 2; d++)
		STRV_FOREACH(f, d == 0 ? etc : usr) {
			_cleanup_free_ char *name = strndup(*f, strlen(*f) - 4);

			if (!name)
				return -ENOMEM;
			if (strv_contains(names, name))
				continue;
			r = strv_push(&names, TAKE_PTR(name));
			if (r < 0)
				return r;
		}
	strv_sort_plain(names);

	infos = calloc(strv_length(names) + 1, sizeof(ProfileInfo));
	if (!infos)
		return -ENOMEM;

	STRV_FOREACH(name, names) {
		_cleanup_(profile_freep) Profile *p = NULL;
		_cleanup_free_ char *err = NULL, *fn = NULL;
		ProfileInfo *i = &infos[n++];

		i->name = strdup(*name);
		if (!i->name)
			goto oom;

		r = profile_load(root_fd, *name, &p, &err);
		if (r == -ENOMEM)
			goto oom;
		if (r < 0) {
			fn = strprintf("%s.ini", *name);
			if (!fn)
				goto oom;
			i->description = strprintf("invalid: %s", err ?: "unknown error");
			i->path = strprintf("/%s/%s", strv_contains(etc, fn) ? PROFILE_DIR_ETC : PROFILE_DIR_USR, fn);
		} else {
			i->description = strdup(strempty(p->description));
			i->path = strdup(p->path);
		}
		if (!i->description || !i->path)
			goto oom;
	}

	*ret = infos;
	*ret_n = n;
	return 0;

oom:
	profile_info_array_free(infos, n);
	return -ENOMEM;
}
