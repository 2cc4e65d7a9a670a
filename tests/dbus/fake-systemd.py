#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A stand-in for systemd's manager on a private bus, for the dbus tier.

Usage: fake-systemd.py BUS_ADDRESS SYSROOT CALLS_LOG

It models what systemd 252 does to the cgroup tree below SYSROOT for a
slice, so that the fast tier fails where a real systemd does:

- SetUnitProperties(s, b, a(sv)), AllowedCPUs= only: the property is kept,
  and the slice's cgroup is realised even when the slice is inactive
  (bus_slice_commit_properties()); an inactive slice's cgroup gets no
  cpuset files here, so a cgroup is no proof that the slice runs.
- StartUnit(s, s) of a slice: the slice's cgroup is made; when it has
  AllowedCPUs=, "cpuset" is enabled in the root's cgroup.subtree_control
  first (the kernel then gives the child its cpuset.* files) and its
  cpuset.cpus is written.
- StopUnit(s, s): the cgroup is removed (unless units still run in it),
  and cpuset is disabled in the root again when no active unit wants it.
- LoadUnit(s) and the unit object's ActiveState property (through
  org.freedesktop.DBus.Properties.Get): "active" or "inactive".
- A slice's cgroup is where systemd puts it: a dash nests, so
  "a-b.slice" is a/b's "a.slice/a-b.slice", made with its parents (cpuset
  enabled in each parent on the way down).

Like systemd, it answers the call first and changes the tree from its event
loop a little later (a job, the cgroup realisation queue): callers must wait
for the effect. Each call is recorded in CALLS_LOG as
"UNIT runtime=B AllowedCPUs=CPULIST", "StartUnit UNIT MODE" or
"StopUnit UNIT MODE".
"""
import os
import shutil
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

ADDR, ROOT, LOG = sys.argv[1:4]
CG = os.path.join(ROOT, "sys/fs/cgroup")
DELAY_MS = 60      # how long after the reply the tree changes

units = {}         # name -> {"active": bool, "cpus": str}
jobs = [0]


def mask_to_list(mask):
    cpus = [i * 8 + b for i, byte in enumerate(mask) for b in range(8) if byte & (1 << b)]
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


def record(line):
    with open(LOG, "a") as f:
        f.write(line + "\n")


def later(fn, *args):
    def run():
        fn(*args)
        return False
    GLib.timeout_add(DELAY_MS, run)


def root_controllers():
    with open(os.path.join(CG, "cgroup.subtree_control")) as f:
        return f.read().split()


def set_root_controllers(ctrls):
    with open(os.path.join(CG, "cgroup.subtree_control"), "w") as f:
        f.write(" ".join(ctrls) + "\n")


def cgroup_path(name):
    """systemd's slice_build_subslice(): every dash is a level."""
    parts = name[:-len(".slice")].split("-")
    return os.path.join(*["-".join(parts[:i + 1]) + ".slice" for i in range(len(parts))])


def realise(name):
    u = units[name]
    d = os.path.join(CG, cgroup_path(name))
    if not u["active"]:
        os.makedirs(d, exist_ok=True)   # bus_slice_commit_properties(): a cgroup, no cpuset
        return
    parent = CG
    for part in cgroup_path(name).split("/")[:-1]:
        parent = os.path.join(parent, part)
        os.makedirs(parent, exist_ok=True)
        with open(os.path.join(parent, "cgroup.subtree_control"), "w") as f:
            f.write("cpuset\n" if u["cpus"] else "\n")
    os.makedirs(d, exist_ok=True)
    for fname, text in (("cgroup.procs", ""), ("cgroup.stat", "nr_descendants 0\nnr_dying_descendants 0\n")):
        if not os.path.exists(os.path.join(d, fname)):
            with open(os.path.join(d, fname), "w") as f:
                f.write(text)
    if u["cpus"]:
        ctrls = root_controllers()
        if "cpuset" not in ctrls:
            set_root_controllers(["cpuset"] + ctrls)
    if "cpuset" in root_controllers():
        part = os.path.join(d, "cpuset.cpus.partition")
        if not os.path.exists(part):
            with open(part, "w") as f:
                f.write("member\n")
        with open(os.path.join(d, "cpuset.cpus"), "w") as f:
            f.write(u["cpus"] + "\n")


def prune(name):
    d = os.path.join(CG, cgroup_path(name))
    if os.path.isdir(d) and not [e for e in os.scandir(d) if e.is_dir()]:
        shutil.rmtree(d)
    if not any(u["active"] and u["cpus"] for u in units.values()):
        set_root_controllers([c for c in root_controllers() if c != "cpuset"])


class Manager(dbus.service.Object):
    @dbus.service.method("org.freedesktop.systemd1.Manager", in_signature="sba(sv)", out_signature="")
    def SetUnitProperties(self, unit, runtime, props):
        for name, value in props:
            if name != "AllowedCPUs":
                raise dbus.exceptions.DBusException(f"property {name} not supported by the fake",
                                                    name="org.freedesktop.DBus.Error.InvalidArgs")
            cpus = mask_to_list(bytes(value))
            record(f"{unit} runtime={int(runtime)} AllowedCPUs={cpus}")
            units.setdefault(str(unit), {"active": False, "cpus": ""})["cpus"] = cpus
            later(realise, str(unit))

    @dbus.service.method("org.freedesktop.systemd1.Manager", in_signature="s", out_signature="o")
    def LoadUnit(self, unit):
        units.setdefault(str(unit), {"active": False, "cpus": ""})
        return dbus.ObjectPath("/org/freedesktop/systemd1/unit/" + str(unit).replace(".", "_2e").replace("-", "_2d"))

    def _job(self):
        jobs[0] += 1
        return dbus.ObjectPath(f"/org/freedesktop/systemd1/job/{jobs[0]}")

    @dbus.service.method("org.freedesktop.systemd1.Manager", in_signature="ss", out_signature="o")
    def StartUnit(self, unit, mode):
        record(f"StartUnit {unit} {mode}")
        if not str(unit).endswith(".slice"):
            raise dbus.exceptions.DBusException(f"Unit {unit} not found.",
                                                name="org.freedesktop.systemd1.NoSuchUnit")
        units.setdefault(str(unit), {"active": False, "cpus": ""})["active"] = True
        later(realise, str(unit))
        return self._job()

    @dbus.service.method("org.freedesktop.systemd1.Manager", in_signature="ss", out_signature="o")
    def StopUnit(self, unit, mode):
        record(f"StopUnit {unit} {mode}")
        units.setdefault(str(unit), {"active": False, "cpus": ""})["active"] = False
        later(prune, str(unit))
        return self._job()


class UnitObject(dbus.service.FallbackObject):
    """Every /org/freedesktop/systemd1/unit/NAME: its ActiveState."""
    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="ss", out_signature="v",
                         path_keyword="path")
    def Get(self, interface, prop, path=None):
        name = path.rsplit("/", 1)[1].replace("_2e", ".").replace("_2d", "-")
        if interface != "org.freedesktop.systemd1.Unit" or prop != "ActiveState":
            raise dbus.exceptions.DBusException(f"{interface}.{prop} not supported by the fake",
                                                name="org.freedesktop.DBus.Error.UnknownProperty")
        active = units.get(name, {}).get("active", False)
        return dbus.String("active" if active else "inactive", variant_level=1)


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(ADDR)
name = dbus.service.BusName("org.freedesktop.systemd1", bus)
Manager(bus, "/org/freedesktop/systemd1")
UnitObject(bus, "/org/freedesktop/systemd1/unit")
GLib.MainLoop().run()
