/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bus-latency: D-Bus call latency of topotuned from an in-process sd-bus client.
 *
 *   bus-latency ADDRESS [N]
 *
 * Connects to ADDRESS (e.g. unix:path=/tmp/bus), then, N times each
 * (default 10000, after 100 warm-up calls of each kind), does a blocking
 *   - Properties.Get  org.topotune1.Manager State     (sd_bus_get_property)
 *   - Verify()                                          (sd_bus_call_method)
 *   - GetCpuDomains(u 0)                                (sd_bus_call_method)
 * on org.topotune1 /org/topotune1, timing each call with
 * clock_gettime(CLOCK_MONOTONIC), and prints p50/p99/max (and mean) per kind
 * in microseconds. The kinds take turns call by call, so background load
 * falls on all of them alike. Prints figures, asserts nothing; exits non-zero
 * only when the bus or a call fails.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-bus.h>

#define NAME "org.topotune1"
#define PATH "/org/topotune1"
#define IFACE "org.topotune1.Manager"

enum { K_GET, K_VERIFY, K_DOMAINS, K_MAX };
static const char *const kind_name[K_MAX] = {
	[K_GET] = "Get(State)",
	[K_VERIFY] = "Verify()",
	[K_DOMAINS] = "GetCpuDomains(u 0)",
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int one_call(sd_bus *bus, int kind)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r;

	switch (kind) {
	case K_GET:
		r = sd_bus_get_property(bus, NAME, PATH, IFACE, "State", &error, &reply, "s");
		break;
	case K_VERIFY:
		r = sd_bus_call_method(bus, NAME, PATH, IFACE, "Verify", &error, &reply, "");
		break;
	default:
		r = sd_bus_call_method(bus, NAME, PATH, IFACE, "GetCpuDomains", &error, &reply,
				       "u", (uint32_t)0);
		break;
	}
	if (r < 0)
		fprintf(stderr, "bus-latency: %s: %s\n", kind_name[kind],
			error.message ? error.message : strerror(-r));
	sd_bus_error_free(&error);
	sd_bus_message_unref(reply);
	return r;
}

int main(int argc, char **argv)
{
	uint64_t *t[K_MAX];
	sd_bus *bus = NULL;
	long n = 10000;
	int r;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s ADDRESS [N]\n", argv[0]);
		return 2;
	}
	if (argc == 3) {
		n = strtol(argv[2], NULL, 10);
		if (n < 1) {
			fprintf(stderr, "bus-latency: bad N '%s'\n", argv[2]);
			return 2;
		}
	}

	r = sd_bus_new(&bus);
	if (r >= 0)
		r = sd_bus_set_address(bus, argv[1]);
	if (r >= 0)
		r = sd_bus_set_bus_client(bus, 1);
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r < 0) {
		fprintf(stderr, "bus-latency: cannot connect to %s: %s\n", argv[1], strerror(-r));
		return 1;
	}

	for (int k = 0; k < K_MAX; k++) {
		t[k] = calloc((size_t)n, sizeof(uint64_t));
		if (!t[k])
			return 1;
	}
	for (int i = 0; i < 100; i++)
		for (int k = 0; k < K_MAX; k++)
			if (one_call(bus, k) < 0)
				return 1;

	for (long i = 0; i < n; i++)
		for (int k = 0; k < K_MAX; k++) {
			uint64_t a = now_ns();

			if (one_call(bus, k) < 0)
				return 1;
			t[k][i] = now_ns() - a;
		}

	printf("%-20s %8s %9s %9s %9s %9s\n", "call", "n", "p50 us", "p99 us", "max us", "mean us");
	for (int k = 0; k < K_MAX; k++) {
		uint64_t sum = 0;

		qsort(t[k], (size_t)n, sizeof(uint64_t), cmp_u64);
		for (long i = 0; i < n; i++)
			sum += t[k][i];
		printf("%-20s %8ld %9.1f %9.1f %9.1f %9.1f\n", kind_name[k], n,
		       t[k][(n - 1) / 2] / 1e3, t[k][(long)((n - 1) * 0.99)] / 1e3,
		       t[k][n - 1] / 1e3, (double)sum / n / 1e3);
		free(t[k]);
	}
	sd_bus_flush_close_unref(bus);
	return 0;
}
