#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Check that the PromQL of the Prometheus rules and the Grafana dashboard
names only metrics (and label names) that topotuned exports.

  check-metric-names.py METRICS.txt [--rules FILE]... [--dashboard FILE]...
                        [--promql-out FILE]

METRICS.txt is real output of "topotunectl metrics" (the test makes it from a
daemon on a generated tree). Every identifier in a query that starts with
topotune_ must be a family of that output (its TYPE line); every label name a
query matches on or groups by must be a label of that family's samples (or a
target label Prometheus adds: instance, job); other metric names must be
node_exporter's, listed in NODE_EXPORTER below with why. Recording rules'
names (level:metric:ops, with colons) may be used once recorded.
--promql-out writes every dashboard query as a recording rule, with Grafana's
variables replaced, for "promtool check rules" to parse.
Prints one line per problem; exit 1 when there is one.
"""
import argparse
import json
import re
import sys

import yaml

# Not topotune's, but what the textfile collector says about our file.
NODE_EXPORTER = {"node_textfile_mtime_seconds": {"file"}}
TARGET_LABELS = {"instance", "job"}
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool",
                "and", "or", "unless", "offset", "inf", "nan",
                # aggregations, which may be followed by "by (...)" before their "("
                "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
                "bottomk", "topk", "quantile"}


def exported(path):
    """family -> set of label names, from the Prometheus text format."""
    fams = {}
    for line in open(path):
        m = re.match(r"# TYPE (\S+) (\S+)", line)
        if m:
            fams.setdefault(m.group(1), set())
            continue
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s", line)
        if not m:
            continue
        name = m.group(1)
        if name not in fams:
            sys.exit(f"{path}: sample {name} without a TYPE line")
        fams[name] |= set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', m.group(3) or ""))
    return fams


def strip_strings(expr):
    return re.sub(r'"(\\.|[^"\\])*"', '""', expr)


def check_expr(where, expr, fams, recorded, problems):
    bare = strip_strings(expr)
    # Metric names: identifiers not followed by "(" (a function) and not label names
    # inside {...} or by/without/on/ignoring (...).
    selectors = re.finditer(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{([^}]*)\})?", bare)
    grouping = set()
    for g in re.finditer(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", bare):
        grouping |= {x.strip() for x in g.group(2).split(",") if x.strip()}
    names = []
    for m in selectors:
        name = m.group(1)
        after = bare[m.end(1):].lstrip()
        if after.startswith("(") or name.lower() in PROMQL_WORDS or name in grouping:
            continue
        if re.fullmatch(r"[0-9].*|[smhdwy]", name):
            continue
        # label names inside a selector are followed by =, !=, =~ or !~
        prev = bare[:m.start(1)].rstrip()
        if prev.endswith("{") or prev.endswith(","):
            continue
        if re.match(r"\s*(=|!=|=~|!~)", bare[m.end(1):]) and "{" in bare[:m.start(1)]:
            continue
        matchers = set(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)", m.group(3) or ""))
        names.append((name, matchers))
    if not names:
        problems.append(f"{where}: no metric in {expr!r}")
    used = set()
    for name, matchers in names:
        if name.startswith("$") or name == "__rate_interval":
            continue
        if name in fams:
            labels = fams[name]
        elif name in NODE_EXPORTER:
            labels = NODE_EXPORTER[name]
        elif name in recorded:
            labels = recorded[name]
        else:
            problems.append(f"{where}: {name} is not exported by topotuned ({expr!r})")
            continue
        used.add(name)
        for lab in matchers - TARGET_LABELS - labels:
            problems.append(f"{where}: {name} has no label {lab} ({expr!r})")
    if used:
        known = set().union(*(fams.get(n, NODE_EXPORTER.get(n, recorded.get(n, set()))) for n in used))
        for lab in grouping - TARGET_LABELS - known:
            problems.append(f"{where}: no metric of {expr!r} has the label {lab}")
    return used


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("metrics")
    ap.add_argument("--rules", action="append", default=[])
    ap.add_argument("--dashboard", action="append", default=[])
    ap.add_argument("--promql-out")
    a = ap.parse_args()
    fams = exported(a.metrics)
    problems = []
    recorded = {}
    used = set()
    count = 0
    for path in a.rules:
        for group in yaml.safe_load(open(path))["groups"]:
            for rule in group["rules"]:
                name = rule.get("record") or rule.get("alert")
                used |= check_expr(f"{path}: {name}", rule["expr"], fams, recorded, problems)
                count += 1
                if "record" in rule:
                    grp = re.search(r"\bby\s*\(([^)]*)\)", strip_strings(rule["expr"]))
                    recorded[rule["record"]] = {x.strip() for x in grp.group(1).split(",")} if grp else set()
    queries = []
    for path in a.dashboard:
        dash = json.load(open(path))
        for var in dash.get("templating", {}).get("list", []):
            q = var.get("query")
            if var.get("type") == "query":
                expr = q["query"] if isinstance(q, dict) else q
                inner = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)", expr)
                if not inner:
                    problems.append(f"{path}: variable {var['name']}: not label_values(METRIC, LABEL): {expr}")
                    continue
                check_expr(f"{path}: variable {var['name']}", f"{inner.group(1)}{{{inner.group(2)}=\"\"}}",
                           fams, {}, problems)
                count += 1
        for panel in dash["panels"]:
            for tgt in panel.get("targets", []):
                where = f"{path}: panel {panel['title']!r} {tgt['refId']}"
                used |= check_expr(where, tgt["expr"], fams, {}, problems)
                queries.append(tgt["expr"])
                count += 1
    if a.promql_out:
        rules = [{"record": f"dashboard:query{i}:check",
                  "expr": q.replace("$__rate_interval", "5m").replace("$instance", "host:9100")}
                 for i, q in enumerate(queries)]
        with open(a.promql_out, "w") as f:
            yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)
    for p in problems:
        print(p)
    print(f"# {count} queries, {len(used)} metrics, all of them exported" if not problems
          else f"# {len(problems)} problems in {count} queries")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
