# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Environment= of units/topotuned.service, for the benchmarks that
start topotuned by hand: they measure the daemon as its unit runs it.
UNIT_ENV=0 in the environment leaves it out (to see what it changes)."""
import os
import shlex


def unit_environment(src):
    """{NAME: VALUE} of every Environment= line of the unit, in order."""
    if os.environ.get("UNIT_ENV", "1") == "0":
        return {}
    env = {}
    with open(os.path.join(src, "units/topotuned.service")) as f:
        for line in f:
            if line.startswith("Environment="):
                for word in shlex.split(line[len("Environment="):]):
                    name, sep, value = word.partition("=")
                    if not sep:
                        raise SystemExit(f"units/topotuned.service: not NAME=VALUE: {word!r}")
                    env[name] = value
    return env


def describe(env):
    return " ".join(f"{k}={v}" for k, v in env.items()) or "none (UNIT_ENV=0 or no Environment= line)"
