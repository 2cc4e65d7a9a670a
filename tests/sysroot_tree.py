# SPDX-License-Identifier: LGPL-2.1-or-later
"""A generated sysroot with the shipped configuration installed, for the
tests that run topotunectl --root on it (tests/cli)."""
import os
import shutil
import subprocess
import sys


def make_tree(gen, conf, base, spec, *gen_args):
    """Generate machine SPEC under BASE with GEN (tests/sysroot/gen-sysroot.py,
    extra GEN_ARGS before the spec) and install CONF's profiles, hardware
    rules and topotune.conf as the packages do; returns the root."""
    root = os.path.join(base, spec)
    subprocess.run([sys.executable, gen, "-q", *gen_args, spec, root], check=True)
    shutil.copytree(os.path.join(conf, "profiles"), os.path.join(root, "usr/lib/topotune/profiles"))
    shutil.copytree(os.path.join(conf, "hardware.d"), os.path.join(root, "usr/lib/topotune/hardware.d"))
    os.makedirs(os.path.join(root, "etc/topotune"), exist_ok=True)
    shutil.copy(os.path.join(conf, "topotune.conf"), os.path.join(root, "etc/topotune/topotune.conf"))
    return root
