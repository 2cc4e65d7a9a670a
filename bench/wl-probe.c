/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wl-probe: exec of a process a [workload] rule names -> topotuned's Applied
 * signal, received by an in-process sd-bus client (bench/workload-switch.sh).
 *
 *   wl-probe SAMPLES ADDRESS PROBE [ADDRESS PROBE...]
 *
 * For each daemon (its private bus ADDRESS, and PROBE, the program its rule
 * names), SAMPLES times, the daemons taking turns: timestamp, posix_spawn()
 * PROBE 30 (vfork: the exec has happened when it returns), wait for Applied
 * with profile "wl", timestamp; then SIGKILL the probe and wait for Applied
 * "keepall" before the next sample. Prints "I MS" per sample (I: the
 * daemon's index; MS: latency in ms, or -1 when no Applied came within 10 s)
 * for the caller to sum up. The python client the script used before adds
 * its own wakeup and dispatch to every sample; this one waits in ppoll()
 * on the bus socket and reads the signal as soon as it is there.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <systemd/sd-bus.h>

extern char **environ;

#define PATH "/org/topotune1"
#define IFACE "org.topotune1.Manager"
#define TIMEOUT_NS (10ULL * 1000000000ULL)

typedef struct Daemon {
	sd_bus *bus;
	const char *probe;
	char last[64]; /* the profile of the last Applied seen */
	bool seen;
} Daemon;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int on_applied(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Daemon *d = userdata;
	const char *profile;
	uint32_t changes;

	(void)error;
	if (sd_bus_message_read(m, "su", &profile, &changes) < 0)
		return 0;
	snprintf(d->last, sizeof(d->last), "%s", profile);
	d->seen = true;
	return 0;
}

/* Dispatch until an Applied of @profile came; its time of arrival, or 0 after the timeout. */
static uint64_t wait_applied(Daemon *d, const char *profile)
{
	uint64_t end = now_ns() + TIMEOUT_NS;

	for (;;) {
		int r = sd_bus_process(d->bus, NULL);

		if (r < 0) {
			fprintf(stderr, "wl-probe: bus: %s\n", strerror(-r));
			exit(1);
		}
		if (d->seen && strcmp(d->last, profile) == 0) {
			uint64_t t = now_ns();

			d->seen = false;
			return t;
		}
		d->seen = false;
		if (r > 0)
			continue;
		if (now_ns() >= end)
			return 0;
		r = sd_bus_wait(d->bus, (end - now_ns()) / 1000);
		if (r < 0 && r != -EINTR) {
			fprintf(stderr, "wl-probe: wait: %s\n", strerror(-r));
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	Daemon *d;
	int n, samples;

	if (argc < 4 || (argc - 2) % 2 != 0 || (samples = atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: wl-probe SAMPLES ADDRESS PROBE [ADDRESS PROBE...]\n");
		return 2;
	}
	n = (argc - 2) / 2;
	d = calloc((size_t)n, sizeof(Daemon));
	if (!d)
		return 1;
	for (int i = 0; i < n; i++) {
		int r;

		d[i].probe = argv[3 + 2 * i];
		r = sd_bus_new(&d[i].bus);
		if (r >= 0)
			r = sd_bus_set_address(d[i].bus, argv[2 + 2 * i]);
		if (r >= 0)
			r = sd_bus_set_bus_client(d[i].bus, 1);
		if (r >= 0)
			r = sd_bus_start(d[i].bus);
		if (r >= 0)
			r = sd_bus_match_signal(d[i].bus, NULL, NULL, PATH, IFACE, "Applied", on_applied, &d[i]);
		if (r < 0) {
			fprintf(stderr, "wl-probe: %s: %s\n", argv[2 + 2 * i], strerror(-r));
			return 1;
		}
	}
	for (int s = 0; s < samples; s++)
		for (int i = 0; i < n; i++) {
			char *args[] = { (char *)d[i].probe, (char *)"30", NULL };
			uint64_t t0, t1;
			pid_t pid;
			int r;

			/* Anything queued from before is not this sample's. */
			while (sd_bus_process(d[i].bus, NULL) > 0)
				;
			d[i].seen = false;
			t0 = now_ns();
			r = posix_spawn(&pid, d[i].probe, NULL, NULL, args, environ);
			if (r != 0) {
				fprintf(stderr, "wl-probe: %s: %s\n", d[i].probe, strerror(r));
				return 1;
			}
			t1 = wait_applied(&d[i], "wl");
			printf("%d %.3f\n", i, t1 ? (double)(t1 - t0) / 1e6 : -1.0);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			(void)wait_applied(&d[i], "keepall");
		}
	for (int i = 0; i < n; i++)
		sd_bus_flush_close_unref(d[i].bus);
	free(d);
	return 0;
}
