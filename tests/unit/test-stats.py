#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""agent/basic/stats against scipy, computed here, independently of the C code.

Usage: test-stats.py STATS-DRIVER

For each table row (fixed samples, a confidence level, the metric's
direction) the C driver prints what stats_compare() found; this script
recomputes every figure with numpy/scipy:

- median, quartiles (numpy.quantile, method "linear"), MAD
  (scipy.stats.median_abs_deviation, scale=1);
- the Hodges-Lehmann estimate (numpy.median of all pairwise differences);
- the interval rank k and its achieved level by inverting
  scipy.stats.mannwhitneyu (method "exact" while both samples have at most
  50 values, like the C code; "asymptotic" with continuity correction above):
  on samples whose pairwise differences are the N consecutive values
  D(r) = r - n + 1/2, shifting B by D(1) + r - 1/2 leaves exactly r differences
  at or below the shift, so the two-sided p-value is p(r) = 2 P(U <= r) and
  k - 1 is the largest r with p(r) <= alpha; the level is 1 - p(k - 1). The
  interval must then be [D(k), D(N + 1 - k)] of the real samples, on the
  values and on their logarithms (the ratio), and the verdict follows the
  sign of the interval;
- bad input: the errno the header promises.

A k one off (either way), a level computed from the wrong tail, a type-6
quantile or a scaled MAD all fail here. Exit 77 (skip) without scipy.
"""
import math
import subprocess
import sys

try:
    import numpy as np
    from scipy import stats
except ImportError as e:
    print(f"SKIP: {e} (apt-get install python3-scipy; run with /usr/bin/python3)")
    sys.exit(77)

EXACT_MAX = 50
SLACK = 1e-9

failures = 0
checks = 0


def fail(case, what, got, want):
    global failures
    failures += 1
    print(f"FAIL [{case}] {what}: got {got!r}, want {want!r}")


def close(case, what, got, want, rel=1e-12, abs_=1e-12):
    global checks
    checks += 1
    if not math.isclose(got, want, rel_tol=rel, abs_tol=abs_):
        fail(case, what, got, want)


def same(case, what, got, want):
    global checks
    checks += 1
    if got != want:
        fail(case, what, got, want)


def wave(n, base, amp, phase):
    """Deterministic, tie-free 'measurements'."""
    return [round(base + amp * math.sin(1.7 * i + phase) + 0.013 * i * i, 6) for i in range(n)]


# name, confidence, direction, A, B
CASES = [
    ("3v3 at 95%: no interval", 0.95, "lower", [10.2, 11.0, 10.6], [9.1, 9.4, 8.7]),
    ("3v3 at 90%", 0.90, "lower", [10.2, 11.0, 10.6], [9.1, 9.4, 8.7]),
    ("4v4 hackbench-like", 0.95, "lower", [1.921, 2.034, 1.987, 2.102], [1.702, 1.688, 1.811, 1.745]),
    ("5v5 stream-like", 0.95, "higher",
     [21034.5, 20987.1, 21210.7, 20888.3, 21101.9], [30312.2, 29876.4, 30555.0, 30101.7, 29990.3]),
    ("5v5 overlapping", 0.95, "lower", [5.11, 5.32, 4.97, 5.25, 5.04], [5.08, 5.29, 5.15, 4.99, 5.36]),
    ("6v8 asymmetric", 0.95, "lower",
     [3.31, 3.52, 3.44, 3.29, 3.61, 3.38], [3.12, 3.58, 3.21, 3.05, 3.49, 3.17, 3.26, 3.09]),
    ("7v5 at 99%", 0.99, "higher", wave(7, 100, 3, 0.1), wave(5, 104, 3, 0.7)),
    ("10v10 at 90%", 0.90, "lower", wave(10, 50, 2, 0.3), wave(10, 49, 2, 1.1)),
    ("20v17", 0.95, "higher", wave(20, 1000, 40, 0.2), wave(17, 1030, 40, 2.0)),
    ("30v30", 0.95, "lower", wave(30, 12, 0.5, 0.4), wave(30, 11.8, 0.5, 0.9)),
    ("50v50 last exact", 0.95, "lower", wave(50, 7, 0.3, 0.5), wave(50, 7.1, 0.3, 1.5)),
    ("51v55 normal approximation", 0.95, "higher", wave(51, 300, 10, 0.6), wave(55, 296, 10, 1.9)),
    # floor(N/2 + 1/2 - z sigma) = floor(1094.81): rounding instead of floor is caught here
    ("53v53 normal approximation", 0.95, "lower", wave(53, 9, 0.4, 0.1), wave(53, 9.3, 0.4, 2.2)),
    ("80v70 normal approximation at 80%", 0.80, "lower", wave(80, 2, 0.1, 0.2), wave(70, 2.01, 0.1, 0.8)),
    ("negative values: no ratio", 0.95, "higher", [-3.1, -2.2, -1.4, -2.7, -1.9], [1.2, 0.4, 2.9, 2.2, 1.6]),
    ("8v8 slower", 0.95, "lower", wave(8, 4.0, 0.05, 0.3), wave(8, 4.4, 0.05, 1.2)),
    ("ties in the data", 0.95, "lower", [25, 25, 27, 31, 26, 25], [22, 25, 21, 22, 24, 22]),
]

BAD = [
    ("empty A", "", "1,2", -61),   # -ENODATA
    ("NaN in B", "1,2", "1,nan", -22),
    ("inf in A", "inf,2", "1,2", -22),
]


def run(driver, conf, direction, a, b):
    """a, b: lists of numbers, or the command line's text as it is."""
    if not isinstance(a, str):
        a, b = ",".join(map(repr, a)), ",".join(map(repr, b))
    out = subprocess.run([driver, repr(conf), direction, a, b],
                         capture_output=True, text=True)
    kv = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
    return out.returncode, kv


_k_cache = {}


def scipy_k(n, m, conf):
    """(k, level, exact) from scipy's Mann-Whitney test; k = 0: no interval."""
    key = (n, m, conf)
    if key in _k_cache:
        return _k_cache[key]
    exact = n <= EXACT_MAX and m <= EXACT_MAX
    method = "exact" if exact else "asymptotic"
    alpha = 1 - conf
    x = np.arange(n, dtype=float)
    y = np.arange(m, dtype=float) * n + 0.5     # differences y - x: N distinct, spacing 1
    d1 = -(n - 1) + 0.5

    def p(r):   # two-sided p-value with exactly r differences <= the shift
        delta = d1 + r - 0.5
        return stats.mannwhitneyu(y - delta, x, alternative="two-sided", method=method,
                                  use_continuity=True).pvalue

    N = n * m
    if p(0) > alpha * (1 + SLACK):
        res = (0, 1 - p(0), exact)
    else:
        lo, hi = 0, (N - 1) // 2      # p(lo) <= alpha; p(r) >= 1 once r >= N/2
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if p(mid) <= alpha * (1 + SLACK):
                lo = mid
            else:
                hi = mid - 1
        res = (lo + 1, 1 - p(lo), exact)
    _k_cache[key] = res
    return res


def check_interval(case, prefix, kv, a, b, conf):
    n, m = len(a), len(b)
    d = np.sort(np.subtract.outer(np.asarray(b), np.asarray(a)).ravel())
    N = n * m
    k, level, exact = scipy_k(n, m, conf)
    same(case, f"{prefix}.n_differences", int(kv[f"{prefix}.n_differences"]), N)
    same(case, f"{prefix}.exact", kv[f"{prefix}.exact"] == "1", exact)
    same(case, f"{prefix}.available", kv[f"{prefix}.available"] == "1", k >= 1)
    same(case, f"{prefix}.k", int(kv[f"{prefix}.k"]), max(k, 1))
    kk = max(k, 1)
    close(case, f"{prefix}.confidence", float(kv[f"{prefix}.confidence"]), level, rel=1e-9)
    return float(np.median(d)), d[kk - 1], d[N - kk], k >= 1


def verdict(lo, hi, available, higher):
    if not available or (lo <= 0 <= hi):
        return "no clear difference"
    up = lo > 0
    return "faster" if up == higher else "slower"


def check_summary(case, p, kv, x):
    x = np.asarray(x, dtype=float)
    same(case, f"{p}.n", int(kv[f"{p}.n"]), len(x))
    close(case, f"{p}.median", float(kv[f"{p}.median"]), float(np.median(x)))
    close(case, f"{p}.mad", float(kv[f"{p}.mad"]), float(stats.median_abs_deviation(x, scale=1.0)))
    q1, q3 = np.quantile(x, [0.25, 0.75], method="linear")
    close(case, f"{p}.q1", float(kv[f"{p}.q1"]), float(q1))
    close(case, f"{p}.q3", float(kv[f"{p}.q3"]), float(q3))
    close(case, f"{p}.min", float(kv[f"{p}.min"]), float(x.min()))
    close(case, f"{p}.max", float(kv[f"{p}.max"]), float(x.max()))


def main():
    driver = sys.argv[1]
    for case, conf, direction, a, b in CASES:
        rc, kv = run(driver, conf, direction, a, b)
        if rc != 0:
            fail(case, "exit status", rc, 0)
            continue
        higher = direction == "higher"
        check_summary(case, "a", kv, a)
        check_summary(case, "b", kv, b)

        est, lo, hi, avail = check_interval(case, "shift", kv, a, b, conf)
        close(case, "shift.estimate", float(kv["shift.estimate"]), est)
        close(case, "shift.lower", float(kv["shift.lower"]), lo)
        close(case, "shift.upper", float(kv["shift.upper"]), hi)
        want_verdict = verdict(lo, hi, avail, higher)

        positive = min(a) > 0 and min(b) > 0
        same(case, "ratio.valid", kv["ratio.valid"] == "1", positive)
        if positive:
            est, lo, hi, avail = check_interval(case, "ratio", kv, np.log(a), np.log(b), conf)
            close(case, "ratio.estimate", float(kv["ratio.estimate"]), math.expm1(est), rel=1e-9)
            close(case, "ratio.lower", float(kv["ratio.lower"]), math.expm1(lo), rel=1e-9)
            close(case, "ratio.upper", float(kv["ratio.upper"]), math.expm1(hi), rel=1e-9)
            want_verdict = verdict(lo, hi, avail, higher)
        same(case, "verdict", kv["verdict"], want_verdict)

        # the smallest n per profile with an exact interval at this level
        n_min = next(n for n in range(1, 20) if scipy_k(n, n, conf)[0] >= 1)
        same(case, "min_samples", int(kv["min_samples"]), n_min)
        print(f"ok [{case}] k={kv['shift.k']} level={float(kv['shift.confidence']):.6f} "
              f"available={kv['shift.available']} verdict={kv['verdict']}")

    for case, a, b, err in BAD:
        rc, kv = run(driver, 0.95, "lower", a, b)
        same(case, "exit status", rc, 1)
        same(case, "error", int(kv.get("error", 0)), err)

    print(f"test-stats.py: {checks} checks, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
