/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The inih wrapper of the profile module, and the file helpers its parsers
 * share. Depends on basic and inih only.
 *
 * Debian's inih (r55) is built without INI_HANDLER_LINENO, with multi-line
 * values, ';'-only inline comments, a 200 byte line buffer that silently
 * splits longer lines, and no callback for empty sections. Its tunables are
 * process-wide globals, which we must not touch. So inih reads our text
 * through a reader that hands it one preprocessed line at a time: the reader
 * counts lines, drops '#' and ';' comments (inline ones when preceded by
 * white space, as in the DESIGN example), strips leading white space (so
 * nothing is ever a continuation line), checks section headers and rejects
 * lines inih would truncate. The handler then sees exactly one key per line
 * and knows its line number. inih's positive "line of first error" return is
 * converted here and nowhere else.
 */
#include <dirent.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>

#include "fileio.h"
#include "profile-internal.h"
#include "strutil.h"

typedef struct IniSeen {
	char *section, *key;
	unsigned line;
} IniSeen;

struct IniFile {
	const char *file;
	const IniSyntax *syntax;
	void *userdata;

	const char *pos;        /* next unread text */
	unsigned line;          /* line last handed to inih */
	char *section;          /* current section name, NULL before the first */

	IniSeen *seen;
	size_t n_seen;
	bool skip_section;      /* collecting errors: the keys of a bad section header are not checked */
	unsigned n_errors;      /* ini_error() calls */

	int error;
	unsigned error_line;
	char *error_msg;
};

const char *ini_file(const IniFile *ini)
{
	return ini->file;
}

unsigned ini_line(const IniFile *ini)
{
	return ini->line;
}

static void ini_file_done(IniFile *ini)
{
	for (size_t i = 0; i < ini->n_seen; i++) {
		free(ini->seen[i].section);
		free(ini->seen[i].key);
	}
	free(ini->seen);
	free(ini->section);
	free(ini->error_msg);
}

static char ***error_sink;

void config_errors_collect(char ***sink)
{
	error_sink = sink;
}

bool config_error_collected(const char *msg)
{
	if (!error_sink || !msg)
		return false;
	if (!strv_contains(*error_sink, msg))
		(void)strv_extend(error_sink, msg);
	return true;
}

int ini_error(IniFile *ini, int error, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = vstrprintf(fmt, ap);
	va_end(ap);

	ini->n_errors++;
	if (error_sink && msg && error != -ENOMEM) {
		_cleanup_free_ char *full = strprintf("%s:%u: %s", ini->file, ini->line, msg);

		(void)config_error_collected(full);
	}
	if (ini->error < 0)
		return error;

	ini->error = error;
	ini->error_line = ini->line;
	if (msg)
		ini->error_msg = strprintf("%s:%u: %s", ini->file, ini->line, msg);
	if (!ini->error_msg)
		ini->error = -ENOMEM;
	return error;
}

int ini_unknown_key(IniFile *ini, const char *section, const char *key)
{
	return ini_error(ini, -EINVAL, "unknown key '%s' in [%s]", key, section);
}

static bool ini_section_known(const IniFile *ini, const char *name)
{
	for (const char *const *s = ini->syntax->sections; *s; s++)
		if (streq(*s, name))
			return true;
	return false;
}

/* Cut a comment: at the line start, or after white space ("a = b # c"). */
static void cut_comment(char *s)
{
	for (char *p = s; *p; p++)
		if ((*p == '#' || *p == ';') && (p == s || strchr(WHITESPACE, p[-1]))) {
			*p = '\0';
			return;
		}
}

static int ini_section_header(IniFile *ini, const char *line)
{
	_cleanup_free_ char *name = NULL;
	const char *end;

	end = strchr(line, ']');
	if (!end)
		return ini_error(ini, -EINVAL, "unterminated section header '%s'", line);
	if (end[1])
		return ini_error(ini, -EINVAL, "unexpected text after section header: '%s'", end + 1);

	name = strndup(line + 1, (size_t)(end - line - 1));
	if (!name)
		return ini_error(ini, -ENOMEM, "out of memory");
	if (!ini_section_known(ini, name))
		return ini_error(ini, -EINVAL, "unknown section [%s]", name);

	free(ini->section);
	ini->section = TAKE_PTR(name);
	ini->skip_section = false;

	if (ini->syntax->section)
		return ini->syntax->section(ini, ini->section, ini->userdata);
	return 0;
}

static char *line_reader(char *buf, int size, void *stream)
{
	IniFile *ini = stream;
	_cleanup_free_ char *copy = NULL;
	const char *eol;
	char *line;
	size_t len;

	/* Collecting every error, the parse goes on to the end. */
	if ((ini->error < 0 && (!error_sink || ini->error == -ENOMEM)) || !*ini->pos)
		return NULL;

	eol = strchrnul(ini->pos, '\n');
	copy = strndup(ini->pos, (size_t)(eol - ini->pos));
	ini->pos = *eol ? eol + 1 : eol;
	ini->line++;
	if (!copy) {
		ini_error(ini, -ENOMEM, "out of memory");
		return NULL;
	}

	line = copy;
	if (ini->line == 1 && startswith(line, "\xEF\xBB\xBF"))
		line += 3;    /* UTF-8 byte order mark */
	line = strip(line);
	cut_comment(line);
	line = strip(line);

	if (line[0] == '[') {
		if (ini_section_header(ini, line) < 0) {
			if (!error_sink)
				return NULL;
			/* Its keys would only repeat that the header is bad. */
			ini->skip_section = true;
			line[0] = '\0';
		}
	} else if (line[0] && !strchr(line, '=')) {
		ini_error(ini, -EINVAL, "expected '[section]' or 'key = value', got '%s'", line);
		if (!error_sink)
			return NULL;
		line[0] = '\0';
	}

	/* inih needs room for the NUL; a longer line would be split silently. */
	len = strlen(line);
	if (size < 2 || len > (size_t)size - 2) {
		ini_error(ini, -EINVAL, "line too long (more than %d characters after removing comments)",
			  size - 2);
		if (!error_sink || size < 1)
			return NULL;
		line[0] = '\0';
		len = 0;
	}
	memcpy(buf, line, len + 1);
	return buf;
}

static int ini_seen(IniFile *ini, const char *section, const char *key)
{
	IniSeen *n;

	for (size_t i = 0; i < ini->n_seen; i++)
		if (streq(ini->seen[i].section, section) && streq(ini->seen[i].key, key))
			return ini_error(ini, -EINVAL, "duplicate key '%s' (first set at line %u)",
					 key, ini->seen[i].line);

	n = realloc(ini->seen, sizeof(IniSeen) * (ini->n_seen + 1));
	if (!n)
		return ini_error(ini, -ENOMEM, "out of memory");
	ini->seen = n;
	n[ini->n_seen] = (IniSeen) {
		.section = strdup(section),
		.key = strdup(key),
		.line = ini->line,
	};
	ini->n_seen++;
	if (!n[ini->n_seen - 1].section || !n[ini->n_seen - 1].key)
		return ini_error(ini, -ENOMEM, "out of memory");
	return 0;
}

static int key_handler(void *user, const char *section, const char *name, const char *value)
{
	IniFile *ini = user;
	unsigned n;
	int r;

	if (ini->skip_section)
		return 1;
	if (!ini->section) {
		ini_error(ini, -EINVAL, "key '%s' outside of any section", name);
		return 0;
	}
	if (!*name) {
		ini_error(ini, -EINVAL, "missing key name before '='");
		return 0;
	}
	if (!value || !*value) {
		ini_error(ini, -EINVAL, "empty value for '%s'", name);
		return 0;
	}
	if (ini_seen(ini, ini->section, name) < 0)
		return 0;

	/* inih's own copy of the section may be truncated; ours is not. */
	n = ini->n_errors;
	r = ini->syntax->key(ini, ini->section, name, value, ini->userdata);
	if (r < 0) {
		/* Handlers report through ini_error(); cover one that forgot. */
		if (ini->n_errors == n)
			ini_error(ini, r, "invalid value '%s' for %s", value, name);
		return 0;
	}
	return 1;
}

int ini_parse_text(const char *text, const char *file, const IniSyntax *syntax, void *userdata,
		   char **ret_error)
{
	_cleanup_(ini_file_done) IniFile ini = {
		.file = file,
		.syntax = syntax,
		.userdata = userdata,
		.pos = text,
	};
	int r;

	r = ini_parse_stream(line_reader, &ini, key_handler, &ini);

	/* inih keeps going after a syntax error; report whichever came first. */
	if (r > 0 && (ini.error >= 0 || (unsigned)r < ini.error_line))
		return error_message(ret_error, -EINVAL, "%s:%d: syntax error", file, r);
	if (ini.error < 0) {
		if (ret_error && ini.error_msg)
			*ret_error = TAKE_PTR(ini.error_msg);
		return ini.error;
	}
	if (r == -2)
		return error_message(ret_error, -ENOMEM, "%s: out of memory", file);
	if (r != 0)
		return error_message(ret_error, -EIO, "%s: parser failed (%d)", file, r);
	return 0;
}

static const ConfigCandidate *candidates;
static size_t n_candidates;

void config_candidates_set(const ConfigCandidate *c, size_t n)
{
	candidates = c;
	n_candidates = c ? n : 0;
}

static const ConfigCandidate *candidate_find(const char *path)
{
	for (size_t i = 0; i < n_candidates; i++)
		if (streq(path_relative(candidates[i].as), path_relative(path)))
			return &candidates[i];
	return NULL;
}

int config_file_read(int root_fd, const char *dir, const char *name, char **ret_text,
		     char **ret_file, char **ret_error)
{
	_cleanup_free_ char *path = NULL, *text = NULL;
	const ConfigCandidate *c;
	int r;

	path = name ? strprintf("/%s/%s", dir, name) : strprintf("/%s", dir);
	if (!path)
		return -ENOMEM;

	c = candidate_find(path);
	if (c) {
		text = strdup(c->text);
		if (!text)
			return -ENOMEM;
		*ret_text = TAKE_PTR(text);
		*ret_file = TAKE_PTR(path);
		return 0;
	}

	/* O_NONBLOCK and regular files only: a FIFO here must not hang the daemon or the CLI. */
	r = read_file_at(root_fd, path, CONFIG_FILE_MAX, &text, NULL);
	if (r == -ENOENT)
		return r;
	if (r == -EBADFD)
		return error_message(ret_error, r, "%s: not a regular file (a FIFO, socket or device)", path);
	if (r == -EFBIG)
		return error_message(ret_error, r, "%s: larger than %u MiB", path, CONFIG_FILE_MAX / (1024U * 1024U));
	if (r < 0) {
		errno = -r;
		return error_message(ret_error, r, "%s: %m", path);
	}

	*ret_text = TAKE_PTR(text);
	*ret_file = TAKE_PTR(path);
	return 0;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strv_sort_plain(char **l)
{
	qsort(l, strv_length(l), sizeof(char *), cmp_strp);
}

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

int config_dir_list(int root_fd, const char *dir, const char *suffix, char ***ret,
		    char **ret_error)
{
	_cleanup_strv_free_ char **l = NULL;
	_cleanup_(closedirp) DIR *d = NULL;
	_cleanup_close_ int fd = -EBADF;
	size_t ls = strlen(suffix);
	int r;

	l = calloc(1, sizeof(char *));
	if (!l)
		return -ENOMEM;

	/* Candidates of this directory count as installed (see config_candidates_set()). */
	for (size_t i = 0; i < n_candidates; i++) {
		const char *as = path_relative(candidates[i].as), *name = strrchr(as, '/');
		size_t n;

		if (!name || (size_t)(name - as) != strlen(path_relative(dir)) ||
		    strncmp(as, path_relative(dir), (size_t)(name - as)) != 0)
			continue;
		name++;
		n = strlen(name);
		if (name[0] == '.' || n <= ls || !streq(name + n - ls, suffix) || strv_contains(l, name))
			continue;
		r = strv_extend(&l, name);
		if (r < 0)
			return r;
	}

	fd = open_beneath(root_fd, dir, O_RDONLY | O_DIRECTORY, 0, FILEIO_READ);
	if (fd < 0) {
		if (fd == -ENOENT) {
			strv_sort_plain(l);
			*ret = TAKE_PTR(l);
			return 0;
		}
		r = fd;
		errno = -r;
		return error_message(ret_error, r, "/%s: %m", dir);
	}
	d = fdopendir(fd);
	if (!d) {
		r = negative_errno();
		return error_message(ret_error, r, "/%s: %m", dir);
	}
	TAKE_FD(fd);

	for (;;) {
		struct dirent *de;
		size_t n;

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno > 0) {
				r = -errno;
				return error_message(ret_error, r, "/%s: %m", dir);
			}
			break;
		}
		/* Hidden files are editor and package manager leftovers. */
		if (de->d_name[0] == '.')
			continue;
		n = strlen(de->d_name);
		if (n <= ls || !streq(de->d_name + n - ls, suffix) || strv_contains(l, de->d_name))
			continue;
		r = strv_extend(&l, de->d_name);
		if (r < 0)
			return r;
	}

	strv_sort_plain(l);
	*ret = TAKE_PTR(l);
	return 0;
}
