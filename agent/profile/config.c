/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * topotune.conf and its conf.d drop-ins: daemon options and the
 * administrator's [scheduler]/[isolation] overrides, which beat any profile.
 * Depends on basic and the module's inih wrapper; reads via the root fd.
 */
#include "profile-internal.h"
#include "strutil.h"

static const char *const config_sections[] = {
	"daemon", "scheduler", "isolation", NULL,
};

Config *config_free(Config *c)
{
	if (!c)
		return NULL;
	free(c->profile);
	free(c->metrics_textfile);
	origin_done(&c->profile_origin);
	profile_settings_done(&c->overrides);
	for (size_t i = 0; c->layers && c->files && c->files[i]; i++)
		profile_settings_done(&c->layers[i]);
	free(c->layers);
	strv_free(c->files);
	free(c);
	return NULL;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && streq(s + n - k, suffix);
}

static int config_key(IniFile *ini, const char *section, const char *key, const char *value,
		      void *userdata)
{
	Config *c = userdata;
	int r;

	if (streq(section, "daemon")) {
		if (streq(key, "profile")) {
			r = ini_check_profile_name(ini, key, value);
			if (r < 0)
				return r;
			if (strdup_to(&c->profile, value) < 0 ||
			    origin_set(&c->profile_origin, ini_file(ini), ini_line(ini)) < 0)
				return ini_error(ini, -ENOMEM, "out of memory");
			return 0;
		}
		if (streq(key, "rollback")) {
			RollbackMode m = rollback_mode_from_string(value);

			if (m < 0)
				return ini_error(ini, -EINVAL,
						 "invalid value '%s' for %s: expected on-exit or not-on-exit",
						 value, key);
			c->rollback = m;
			return 0;
		}
		if (streq(key, "manage_bootloader") || streq(key, "partial_apply")) {
			if (!streq(value, "yes") && !streq(value, "no"))
				return ini_error(ini, -EINVAL,
						 "invalid value '%s' for %s: expected yes or no", value, key);
			*(streq(key, "partial_apply") ? &c->partial_apply : &c->manage_bootloader) = streq(value, "yes");
			return 0;
		}
		if (streq(key, "verify_interval")) {
			unsigned sec;

			if (safe_atou_base(value, 10, &sec) < 0)
				return ini_error(ini, -EINVAL,
						 "invalid value '%s' for %s: expected seconds (0 = off)",
						 value, key);
			c->verify_interval_sec = sec;
			return 0;
		}
		if (streq(key, "metrics_interval")) {
			unsigned sec;

			if (safe_atou_base(value, 10, &sec) < 0 || sec == 0)
				return ini_error(ini, -EINVAL,
						 "invalid value '%s' for %s: expected seconds (1 or more)",
						 value, key);
			c->metrics_interval_sec = sec;
			return 0;
		}
		if (streq(key, "metrics_textfile")) {
			/* node_exporter's textfile collector reads only *.prom; "off" unsets a file's choice. */
			if (streq(value, "off")) {
				free(c->metrics_textfile);
				c->metrics_textfile = NULL;
				return 0;
			}
			if (value[0] != '/' || !has_suffix(value, ".prom") || has_suffix(value, "/.prom") ||
			    strstr(value, "/../") || strstr(value, "/./"))
				return ini_error(ini, -EINVAL,
						 "invalid value '%s' for %s: expected an absolute path of a file ending in .prom, or off",
						 value, key);
			if (strdup_to(&c->metrics_textfile, value) < 0)
				return ini_error(ini, -ENOMEM, "out of memory");
			return 0;
		}
		return ini_unknown_key(ini, section, key);
	}

	return settings_parse_key(ini, &c->overrides, section, key, value);
}

static const IniSyntax config_syntax = {
	.sections = config_sections,
	.key = config_key,
};

/* Parse one file over @c: later files win key by key. */
static int config_apply_file(Config *c, int root_fd, const char *dir, const char *name,
			     char **ret_error)
{
	_cleanup_free_ char *text = NULL, *file = NULL;
	ProfileSettings *layers;
	size_t n;
	int r;

	r = config_file_read(root_fd, dir, name, &text, &file, ret_error);
	if (r == -ENOENT && !name)
		return 0;   /* topotune.conf itself is optional */
	if (r == -ENOENT)   /* a drop-in vanished between readdir() and open() */
		return error_message(ret_error, r, "/%s/%s: %s", dir, name, strerror(ENOENT));
	if (r < 0)
		return r;

	r = ini_parse_text(text, file, &config_syntax, c, ret_error);
	if (r < 0)
		return r;
	n = strv_length(c->files);
	layers = reallocarray(c->layers, n + 1, sizeof(ProfileSettings));
	if (!layers)
		return -ENOMEM;
	c->layers = layers;
	profile_settings_init(&layers[n]);
	r = profile_settings_overlay(&layers[n], &c->overrides);
	if (r >= 0)
		r = strv_push(&c->files, TAKE_PTR(file));
	if (r < 0)
		profile_settings_done(&layers[n]);
	return r;
}

/*
 * A file failed with @r (message in *@err). Collecting every error: remember
 * the first and go on (true); else stop (false, *@err the message).
 */
static bool config_failed(int r, char **err, int *first, char **first_error)
{
	if (r == -ENOMEM || !config_error_collected(*err))
		return false;
	if (*first >= 0) {
		*first = r;
		*first_error = TAKE_PTR(*err);
	}
	free(*err);
	*err = NULL;
	return true;
}

int config_load(int root_fd, Config **ret, char **ret_error)
{
	_cleanup_(config_freep) Config *c = NULL;
	_cleanup_strv_free_ char **dropins = NULL;
	_cleanup_free_ char *err = NULL, *first_error = NULL;
	int r, first = 0;

	c = calloc(1, sizeof(Config));
	if (!c)
		return -ENOMEM;
	c->profile = strdup("balanced");
	c->files = calloc(1, sizeof(char *));
	if (!c->profile || !c->files)
		return -ENOMEM;
	c->rollback = ROLLBACK_ON_EXIT;
	c->manage_bootloader = false;
	c->partial_apply = true;
	c->verify_interval_sec = 60;
	c->metrics_interval_sec = 60;
	profile_settings_init(&c->overrides);

	r = config_apply_file(c, root_fd, CONFIG_FILE, NULL, &err);
	if (r < 0 && !config_failed(r, &err, &first, &first_error))
		goto fail;

	r = config_dir_list(root_fd, CONFIG_DROPIN_DIR, ".conf", &dropins, ret_error);
	if (r < 0)
		return r;
	STRV_FOREACH(d, dropins) {
		r = config_apply_file(c, root_fd, CONFIG_DROPIN_DIR, *d, &err);
		if (r < 0 && !config_failed(r, &err, &first, &first_error))
			goto fail;
	}
	if (first < 0) {
		r = first;
		goto fail;
	}

	*ret = TAKE_PTR(c);
	return 0;

fail:
	if (ret_error)
		*ret_error = TAKE_PTR(first_error) ?: TAKE_PTR(err);
	return r;
}
