/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Human and JSON renderings of identity and topology for topotunectl. */
#include "json.h"
#include "strutil.h"
#include "topology-print.h"

void print_identity(FILE *f, const CpuIdentity *id)
{
	fprintf(f, "CPU:        %s", cpu_vendor_to_string(id->vendor));
	if (id->have_family) {
		fprintf(f, " family 0x%x model 0x%x", id->family, id->model);
		if (id->have_stepping)
			fprintf(f, " stepping %u", id->stepping);
	} else
		fprintf(f, " %s", id->arch);
	fprintf(f, "\n");
	if (id->brand[0])
		fprintf(f, "Name:       %s\n", id->brand);
	if (id->codename[0])
		fprintf(f, "Codename:   %s\n", id->codename);
	else if (id->codename_note[0])
		fprintf(f, "Codename:   %s (family 0x%x model 0x%x)\n",
			startswith(id->codename_note, "codename ") ?: id->codename_note, id->family, id->model);
	fprintf(f, "Identified: %s (%s)\n", identity_source_to_string(id->source), id->vendor_string);
}

/*
 * "8 cores, 16 threads" for the CPUs of a kind ("16" read as cores on an
 * 8 P-core part); "4 CPUs" where each core has one thread or cores are unknown.
 */
static const char *kind_count_text(const Topology *t, const CpuSet *cpus, char *buf, size_t n)
{
	unsigned cores = 0, threads = cpuset_count(cpus);
	bool known = true;

	CPUSET_FOREACH(cpu, cpus) {
		bool first = true;

		if (t->cpus[cpu].core < 0) {
			known = false;
			break;
		}
		/* A core counts at the lowest of its CPUs among @cpus. */
		CPUSET_FOREACH(sib, &t->cores.items[t->cpus[cpu].core].cpus)
			if (sib < cpu && cpuset_contains(cpus, (unsigned)sib))
				first = false;
		cores += first;
	}
	if (!known || cores == threads)
		snprintf(buf, n, "%u CPU%s", threads, threads == 1 ? "" : "s");
	else
		snprintf(buf, n, "%u core%s, %u threads", cores, cores == 1 ? "" : "s", threads);
	return buf;
}

static void print_set_line(FILE *f, const char *label, const CpuSet *s)
{
	_cleanup_free_ char *l = NULL;

	if (cpuset_format_list(s, &l) < 0)
		return;
	fprintf(f, "%-11s %s (%u)\n", label, l, cpuset_count(s));
}

void print_topology(FILE *f, const Topology *t)
{
	print_set_line(f, "Online:", &t->online);
	if (!cpuset_is_empty(&t->offline))
		print_set_line(f, "Offline:", &t->offline);
	if (!cpuset_is_empty(&t->missing))
		print_set_line(f, "Missing:", &t->missing);
	fprintf(f, "Packages:   %zu\n", t->packages.n);
	if (t->dies.n)
		fprintf(f, "Dies:       %zu\n", t->dies.n);
	fprintf(f, "Cores:      %zu (%u thread%s per core)\n", t->cores.n, t->threads_per_core,
		t->threads_per_core == 1 ? "" : "s");
	if (t->llcs.n)
		fprintf(f, "LLCs:       %zu (L%u)\n", t->llcs.n, t->llc_level);
	else
		fprintf(f, "LLCs:       unknown\n");
	fprintf(f, "Nodes:      %u with CPUs, %zu in all%s, %u per package\n", topology_cpu_nodes(t), t->nodes.n,
		t->nodes_synthetic ? " (assumed)" : "", t->nodes_per_package);
	for (size_t i = 0; i < t->nodes.n; i++) {
		_cleanup_free_ char *l = NULL;

		if (cpuset_format_list(&t->nodes.items[i].cpus, &l) < 0)
			return;
		fprintf(f, "  node%-4d  %s\n", t->nodes.items[i].id, *l ? l : "(no CPUs)");
	}
	if (t->kinds.n > 0) {
		fprintf(f, "Core kinds: %zu (from %s)\n", t->kinds.n, t->kinds.source);
		for (size_t i = 0; i < t->kinds.n; i++) {
			const TopoKind *k = &t->kinds.items[i];
			_cleanup_free_ char *l = NULL;
			char count[48];

			if (cpuset_format_list(&k->cpus, &l) < 0)
				return;
			fprintf(f, "  %-13s %s, ", k->key, k->name);
			if (k->capacity && k->capacity_min && k->capacity_min != k->capacity)
				fprintf(f, "capacity %u-%u", k->capacity_min, k->capacity);
			else if (k->capacity)
				fprintf(f, "capacity %u", k->capacity);
			else
				fprintf(f, "capacity unknown");
			fprintf(f, ": %s (%s)\n", l, kind_count_text(t, &k->cpus, count, sizeof(count)));
		}
	}
	if (t->distance && t->nodes.n > 1) {
		fprintf(f, "Distances:\n  node ");
		for (size_t j = 0; j < t->nodes.n; j++)
			fprintf(f, " %3d", t->nodes.items[j].id);
		fprintf(f, "\n");
		for (size_t i = 0; i < t->nodes.n; i++) {
			fprintf(f, "  %4d:", t->nodes.items[i].id);
			for (size_t j = 0; j < t->nodes.n; j++)
				fprintf(f, " %3u", topology_distance(t, i, j));
			fprintf(f, "\n");
		}
	} else if (!t->distance && !t->nodes_synthetic)
		fprintf(f, "Distances:  unknown\n");
	STRV_FOREACH(n, t->notes)
		fprintf(f, "Note:       %s\n", *n);
}

static void json_set(JsonWriter *w, const char *key, const CpuSet *s)
{
	_cleanup_free_ char *l = NULL;

	json_key(w, key);
	if (cpuset_format_list(s, &l) < 0)
		json_null(w);
	else
		json_string(w, l);
}

static void json_groups(JsonWriter *w, const char *key, const TopoGroupList *l)
{
	json_key(w, key);
	json_begin_array(w);
	for (size_t i = 0; i < l->n; i++) {
		json_begin_object(w);
		json_key(w, "id");
		json_int(w, l->items[i].id);
		json_set(w, "cpus", &l->items[i].cpus);
		json_end_object(w);
	}
	json_end_array(w);
}

static void json_identity(JsonWriter *w, const CpuIdentity *id)
{
	json_key(w, "cpu");
	json_begin_object(w);
	json_key(w, "vendor");
	json_string(w, cpu_vendor_to_string(id->vendor));
	if (id->have_family) {
		json_key(w, "family");
		json_int(w, id->family);
		json_key(w, "model");
		json_int(w, id->model);
		if (id->have_stepping) {
			json_key(w, "stepping");
			json_int(w, id->stepping);
		}
	}
	/* Only a codename the linked libcpuid can know; else why not. */
	if (id->codename[0]) {
		json_key(w, "codename");
		json_string(w, id->codename);
	} else if (id->codename_note[0]) {
		json_key(w, "codename_note");
		json_string(w, id->codename_note);
	}
	json_key(w, "name");
	json_string(w, id->brand);
	json_key(w, "source");
	json_string(w, identity_source_to_string(id->source));
	json_end_object(w);
}

static void json_counts(JsonWriter *w, const Topology *t)
{
	json_key(w, "cpus");
	json_int(w, cpuset_count(&t->online));
	json_set(w, "online", &t->online);
	json_set(w, "offline", &t->offline);
	json_set(w, "present", &t->present);
	json_set(w, "missing", &t->missing);
	json_key(w, "packages");
	json_int(w, (long long)t->packages.n);
	json_key(w, "dies");
	json_int(w, (long long)t->dies.n);
	json_key(w, "cores");
	json_int(w, (long long)t->cores.n);
	json_key(w, "threads_per_core");
	json_int(w, t->threads_per_core);
	json_key(w, "smt");
	json_bool(w, t->threads_per_core > 1);
	json_key(w, "llc_level");
	json_int(w, t->llc_level);
	json_key(w, "llcs");
	json_int(w, (long long)t->llcs.n);
	json_key(w, "nodes");
	json_int(w, (long long)t->nodes.n);
	json_key(w, "cpu_nodes");
	json_int(w, topology_cpu_nodes(t));
	json_key(w, "nodes_per_package");
	json_int(w, t->nodes_per_package);
}

static void json_kind(JsonWriter *w, const TopoKind *k)
{
	char hex[8];

	json_begin_object(w);
	json_key(w, "kind");
	json_string(w, k->key);
	json_key(w, "name");
	json_string(w, k->name);
	if (*k->core_type) {
		json_key(w, "core_type");
		json_string(w, k->core_type);
	}
	if (k->have_midr) {
		json_key(w, "implementer");
		snprintf(hex, sizeof(hex), "0x%02x", k->implementer);
		json_string(w, hex);
		json_key(w, "part");
		snprintf(hex, sizeof(hex), "0x%03x", k->part);
		json_string(w, hex);
	}
	/* The highest and the lowest of its CPUs, as the text's "capacity 718-731". */
	json_key(w, "capacity");
	if (k->capacity)
		json_int(w, k->capacity);
	else
		json_null(w);
	json_key(w, "capacity_min");
	if (k->capacity)
		json_int(w, k->capacity_min ?: k->capacity);
	else
		json_null(w);
	json_set(w, "cpus", &k->cpus);
	json_key(w, "count");
	json_int(w, cpuset_count(&k->cpus));
	json_end_object(w);
}

static void json_distances(JsonWriter *w, const Topology *t)
{
	json_key(w, "distances");
	if (!t->distance) {
		json_null(w);
		return;
	}
	json_begin_array(w);
	for (size_t i = 0; i < t->nodes.n; i++) {
		json_begin_array(w);
		for (size_t j = 0; j < t->nodes.n; j++)
			json_int(w, topology_distance(t, i, j));
		json_end_array(w);
	}
	json_end_array(w);
}

/* The topology's keys, into the object @w has open. */
void print_topology_json(JsonWriter *w, const CpuIdentity *id, const Topology *t)
{
	if (id)
		json_identity(w, id);
	json_counts(w, t);
	json_groups(w, "package_list", &t->packages);
	json_groups(w, "llc_list", &t->llcs);
	json_groups(w, "node_list", &t->nodes);
	json_key(w, "core_kinds");
	json_begin_array(w);
	for (size_t i = 0; i < t->kinds.n; i++)
		json_kind(w, &t->kinds.items[i]);
	json_end_array(w);
	json_key(w, "core_kinds_source");
	if (t->kinds.n)
		json_string(w, t->kinds.source);
	else
		json_null(w);
	json_distances(w, t);
	json_key(w, "notes");
	json_begin_array(w);
	STRV_FOREACH(n, t->notes)
		json_string(w, *n);
	json_end_array(w);
}
