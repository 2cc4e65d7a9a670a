#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A stand-in for systemd's manager on a private bus, for the dbus tier.

Usage: fake-systemd.py BUS_ADDRESS SYSROOT CALLS_LOG

Implements org.freedesktop.systemd1.Manager.SetUnitProperties(s, b, a(sv))
for AllowedCPUs= only: records each call as
"UNIT runtime=B AllowedCPUs=CPULIST" and does what systemd would do to the
cgroup below SYSROOT (creates the slice's cgroup, writes cpuset.cpus).
"""
import os
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

ADDR, ROOT, LOG = sys.argv[1:4]


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


class Manager(dbus.service.Object):
    @dbus.service.method("org.freedesktop.systemd1.Manager", in_signature="sba(sv)", out_signature="")
    def SetUnitProperties(self, unit, runtime, props):
        for name, value in props:
            if name != "AllowedCPUs":
                raise dbus.exceptions.DBusException(f"property {name} not supported by the fake",
                                                    name="org.freedesktop.DBus.Error.InvalidArgs")
            cpus = mask_to_list(bytes(value))
            with open(LOG, "a") as f:
                f.write(f"{unit} runtime={int(runtime)} AllowedCPUs={cpus}\n")
            d = os.path.join(ROOT, "sys/fs/cgroup", unit)
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "cpuset.cpus"), "w") as f:
                f.write(cpus + "\n")
            part = os.path.join(d, "cpuset.cpus.partition")
            if not os.path.exists(part):
                with open(part, "w") as f:
                    f.write("member\n")


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(ADDR)
name = dbus.service.BusName("org.freedesktop.systemd1", bus)
Manager(bus, "/org/freedesktop/systemd1")
GLib.MainLoop().run()
