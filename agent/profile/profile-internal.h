/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Internal to agent/profile: the inih wrapper (line numbers, strict section
 * and key checking, duplicate keys) and helpers shared by the profile,
 * topotune.conf and hardware.d parsers.
 */

#include "profile.h"

#define PROFILE_DIR_ETC "etc/topotune/profiles"
#define PROFILE_DIR_USR "usr/lib/topotune/profiles"
#define HARDWARE_DIR_ETC "etc/topotune/hardware.d"
#define HARDWARE_DIR_USR "usr/lib/topotune/hardware.d"
#define CONFIG_FILE "etc/topotune/topotune.conf"
#define CONFIG_DROPIN_DIR "etc/topotune/topotune.conf.d"

typedef struct IniFile IniFile;

typedef struct IniSyntax {
	const char *const *sections;    /* known section names, NULL-terminated */
	/* Called for every section header (also empty sections); optional. */
	int (*section)(IniFile *ini, const char *section, void *userdata);
	/* Called for every key; returns a negative errno set with ini_error(). */
	int (*key)(IniFile *ini, const char *section, const char *key, const char *value,
		   void *userdata);
} IniSyntax;

const char *ini_file(const IniFile *ini) _pure_;
unsigned ini_line(const IniFile *ini) _pure_;

/* Record "FILE:LINE: message" as the file's error (first one wins); returns @error. */
int ini_error(IniFile *ini, int error, const char *fmt, ...) _printf_(3, 4);
/* The usual "unknown key 'k' in [s]" error. */
int ini_unknown_key(IniFile *ini, const char *section, const char *key);

/*
 * Parse @text as the file the administrator knows as @file ("/etc/..."),
 * with inih. Returns 0 or a negative errno with *ret_error (if given) set.
 */
int ini_parse_text(const char *text, const char *file, const IniSyntax *syntax, void *userdata,
		   char **ret_error);

/*
 * Read "@dir/@name" below @root_fd; *ret_file is the administrator's name
 * for it ("/" + relative path). Errors other than -ENOENT come with
 * "FILE: strerror" in *ret_error; -ENOENT comes without a message.
 */
int config_file_read(int root_fd, const char *dir, const char *name, char **ret_text,
		     char **ret_file, char **ret_error);
/* Configuration files are small: anything larger is a mistake, refused with -EFBIG. */
#define CONFIG_FILE_MAX (8U * 1024U * 1024U)

/*
 * File names in @dir ending in @suffix, not hidden, sorted. A missing
 * directory is an empty list.
 */
int config_dir_list(int root_fd, const char *dir, const char *suffix, char ***ret,
		    char **ret_error);

/* Sort a string vector in place (strcmp order). */
void strv_sort_plain(char **l);

int origin_set(Origin *o, const char *file, unsigned line);

/*
 * Handle a key of a settings section ([scheduler], [isolation]) into @s,
 * through the settings table. Returns 0, or a negative errno set in @ini
 * (also "unknown key" for a key the table does not have in @section).
 */
int settings_parse_key(IniFile *ini, ProfileSettings *s, const char *section,
		       const char *key, const char *value);

/*
 * Collecting every error (config_errors_collect()): @msg goes to the sink
 * and true is returned, so the caller goes on; false: stop at this error.
 */
bool config_error_collected(const char *msg);

/* Validate a profile name written in a file, error through @ini. */
int ini_check_profile_name(IniFile *ini, const char *key, const char *value);
