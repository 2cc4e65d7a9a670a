#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""
Check the C lines changed since BASE against .clang-format, as clang-format 14
would write them (clang-format-diff-14 on `git diff -U0 BASE`, working tree
included), and their whitespace (`git diff --check`).

The code lays out some things by hand where clang-format 14 has no option to
keep them, and those differences are not reported:
  * where a statement breaks across lines, and how its continuation lines
    are indented (tables of cases one row per line, argument lists broken
    before 120 columns, hand-broken conditions and ternaries);
  * blanks that align columns inside a line (two or more, or a tab);
  * the blanks before a trailing comment (clang-format wants exactly one).
Everything else is: spaces around operators, after keywords and casts, in
braces and parentheses; indentation by tabs; the opening brace of a
function or a control statement's body; one statement per line; a line
longer than 120 columns that clang-format can break; trailing whitespace.

Usage: check-format.py [--max N] BASE
Prints FILE:LINE and the wanted text of each place (at most N, default 20),
then one line "format: ...". Exit status 0 clean, 1 places to fix, 2 error.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

CLANG_FORMAT = "clang-format-14"
CLANG_FORMAT_DIFF = "clang-format-diff-14"
COLUMN_LIMIT = 120
PATHS = ["*.c", "*.h"]

TRAILING_COMMENT = re.compile(r"(\S)[ \t]*(/\*.*\*/|//.*)$")
ALIGNMENT = re.compile(r"(?<=\S)(?:[ \t]{2,}|\t)")
LABEL = re.compile(r"^(case\b.*|default|[A-Za-z_]\w*):$")
INITIALIZER = re.compile(r"(=|\([\w\s*]+\))\s*\{$")      # "x = {", "(Type) {"
CONTROL = re.compile(r"^(\}\s*)?(if|for|while|switch|else|do)\b")
CLOSER = re.compile(r"^\}\s*[;,)]")                         # "};", "},": an initializer ends


def plural(n, what):
    return "%d %s%s" % (n, what, "" if n == 1 else "s")


def columns(line):
    return len(line.expandtabs(8))


def is_comment(body):
    return body.startswith(("/*", "//", "* ", "*/")) or body == "*"


class Line:
    def __init__(self, text):
        text = text.rstrip(" \t")
        # A macro's continuation: the backslash and the blanks that align it.
        self.macro = text.endswith("\\")
        if self.macro:
            text = text[:-1].rstrip(" \t")
        text = TRAILING_COMMENT.sub(r"\1 \2", text)
        body = text.lstrip(" \t")
        self.indent = text[: len(text) - len(body)]
        self.body = ALIGNMENT.sub(" ", body)
        self.comment = is_comment(self.body)
        # What the statement's last code says (a comment inside it does not end it).
        self.code = "" if self.comment else TRAILING_COMMENT.sub(r"\1", self.body)
        if self.comment:
            self.indent = ""    # comments are placed by hand
        # "enum X {	/* why */": clang-format 14 indents the next line as a
        # continuation of the comment; that line's indentation is not compared.
        self.brace_comment = self.code.endswith("{") and self.code != self.body

    def key(self):
        return (self.indent, self.body)


def is_open(prev):
    """Whether the statement (or macro) of line @prev goes on."""
    p = prev.code
    if prev.macro:
        return True
    if not p or p.startswith("#"):
        return False
    return not (p.endswith((";", "}", "*/")) or LABEL.match(p))


def joins(prev, cur):
    """Whether line @cur continues the statement (or macro) of line @prev."""
    p, c = prev.code, cur.body
    if prev.macro:
        return True
    if not p or not c or prev.comment or c.startswith("#"):
        return False
    if cur.comment:
        return is_open(prev) and not p.endswith("{")
    if p.startswith("#"):
        return False
    if p.endswith("{") and INITIALIZER.search(p) and not CONTROL.match(p):
        return True
    if CLOSER.match(c) or (c.startswith("}") and p.endswith(",")):
        return True
    if not is_open(prev) or p.endswith("{"):
        return False
    if p.endswith(")"):
        # A body one tab deeper (if, for, while, *_FOREACH), or a
        # function's or a statement's brace on a line of its own.
        if cur.indent == prev.indent + "\t" or c.startswith("{"):
            return False
    if p in ("else", "do") or p.endswith(" else"):
        return False
    return True


def normalize(lines):
    """The lines as statements, without hand layout (see the header)."""
    out = []
    for text in lines:
        line = Line(text)
        if out and joins(out[-1], line):
            prev = out[-1]
            glue = "" if prev.body.endswith(("(", "[")) or not prev.body else " "
            prev.body = prev.body + glue + line.body
            prev.macro = line.macro
            if not line.comment:
                prev.code = line.code
        else:
            if out and out[-1].brace_comment:
                line.indent = ""
            out.append(line)
    return [l.key() for l in out]


class Hunk:
    def __init__(self, path):
        self.path = path
        self.old = []       # context and removed lines: the file as it is
        self.new = []       # context and added lines: as clang-format wants it
        self.removed = []
        self.added = []
        self.first = None   # the line of the first difference

    def verdict(self):
        """None when the difference is hand layout only, else why it is not."""
        if normalize(self.old) != normalize(self.new):
            return "not as %s writes it" % CLANG_FORMAT
        longest = max((columns(t) for t in self.removed), default=0)
        if longest > COLUMN_LIMIT and max((columns(t) for t in self.added), default=0) <= COLUMN_LIMIT:
            return "longer than %d columns" % COLUMN_LIMIT
        return None


def parse_diff(text):
    """clang-format-diff's unified diff -> hunks, old line numbers."""
    hunks = []
    path = None
    hunk = None
    old_line = 0
    for line in text.splitlines():
        if line.startswith("--- "):
            path = line[4:].split("\t")[0]
            hunk = None
        elif line.startswith("+++ "):
            continue
        elif line.startswith("@@ "):
            m = re.match(r"@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@", line)
            old_line = int(m.group(1))
            hunk = Hunk(path)
            hunks.append(hunk)
        elif hunk is None:
            continue
        elif line.startswith("-"):
            hunk.first = hunk.first or old_line
            hunk.old.append(line[1:])
            hunk.removed.append(line[1:])
            old_line += 1
        elif line.startswith("+"):
            hunk.first = hunk.first or old_line
            hunk.new.append(line[1:])
            hunk.added.append(line[1:])
        else:
            hunk.old.append(line[1:])
            hunk.new.append(line[1:])
            old_line += 1
    return hunks


def git(*args, check=True):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=check)


def changed(base):
    """Files and added lines of `git diff BASE` (working tree), C only."""
    diff = git("diff", "-U0", "--no-color", "--no-ext-diff", base, "--", *PATHS).stdout
    files = set(re.findall(r"^\+\+\+ b/(.*)$", diff, re.M))
    lines = sum(1 for l in diff.splitlines() if l.startswith("+") and not l.startswith("+++"))
    return diff, files, lines


def whitespace(base):
    """`git diff --check`: trailing whitespace, a space before a tab, on added lines."""
    out = git("diff", "--check", "--no-color", base, "--", *PATHS, check=False).stdout
    places = []
    for line in out.splitlines():
        m = re.match(r"^([^:\s][^:]*):(\d+): (.*)\.$", line)
        if m:
            places.append((m.group(1), int(m.group(2)), m.group(3)))
    return places


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max", type=int, default=20, help="places to print at most")
    ap.add_argument("--debug", action="store_true", help="print both sides as compared")
    ap.add_argument("base", help="commit the changed lines are counted from")
    args = ap.parse_args()

    top = git("rev-parse", "--show-toplevel", check=False).stdout.strip()
    if not top:
        print("format: not in a git work tree")
        return 2
    os.chdir(top)

    for tool in (CLANG_FORMAT, CLANG_FORMAT_DIFF):
        if not shutil.which(tool):
            print("format: %s not found (Debian: apt-get install clang-format)" % tool)
            return 2
    try:
        diff, files, n_lines = changed(args.base)
    except subprocess.CalledProcessError as e:
        print("format: git diff %s: %s" % (args.base, e.stderr.strip()))
        return 2

    places = []
    if diff:
        p = subprocess.run([CLANG_FORMAT_DIFF, "-p1", "-binary", shutil.which(CLANG_FORMAT)],
                           input=diff, capture_output=True, text=True)
        if p.returncode != 0:
            print("format: %s failed: %s" % (CLANG_FORMAT_DIFF, p.stderr.strip()))
            return 2
        for h in parse_diff(p.stdout):
            why = h.verdict()
            if why:
                body = ["-" + t for t in h.removed] + ["+" + t for t in h.added]
                if args.debug:
                    body += ["< %r" % (k,) for k in normalize(h.old)] + ["> %r" % (k,) for k in normalize(h.new)]
                places.append(("%s:%d: %s; wanted:" % (h.path, h.first, why), body))
    for path, line, what in whitespace(args.base):
        places.append(("%s:%d: %s" % (path, line, what), []))

    for head, body in places[: args.max]:
        print(head)
        for l in body:
            print("    " + l)
    if len(places) > args.max:
        print("... and %d more" % (len(places) - args.max))
    short = git("rev-parse", "--short", args.base, check=False).stdout.strip() or args.base
    print("format: %s in %s since %s, %s to fix" %
          (plural(n_lines, "changed line"), plural(len(files), "file"), short, plural(len(places), "place")))
    return 1 if places else 0


if __name__ == "__main__":
    sys.exit(main())
