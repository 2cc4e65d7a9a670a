/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include "cpuid.h"
#include "json.h"
#include "topology.h"

void print_identity(FILE *f, const CpuIdentity *id);
void print_topology(FILE *f, const Topology *t);
/* The topology's keys, into the object @w has open. */
void print_topology_json(JsonWriter *w, const CpuIdentity *id, const Topology *t);
