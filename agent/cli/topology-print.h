/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include "cpuid.h"
#include "topology.h"

void print_identity(FILE *f, const CpuIdentity *id);
void print_topology(FILE *f, const Topology *t);
void print_topology_json(FILE *f, const CpuIdentity *id, const Topology *t);
