/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * topotunectl: the command-line client. Offline (--root DIR) it runs the
 * library in-process on a sysroot; every verb that only reads works
 * offline. Without --root, status/apply/revert/verify/set-profile talk to
 * topotuned over D-Bus, and profiles/layout do when it runs.
 * Exit codes: 0 success, 1 drift (verify), 2 error.
 */
#include <getopt.h>

#include "config.h"
#include "ctl.h"
#include "log.h"
#include "strutil.h"

static void help(void)
{
	printf("topotunectl [OPTIONS] COMMAND [ARGS]\n\n"
	       "Scheduler-topology tuning: inspect, plan, explain, and drive topotuned.\n\n"
	       "Every command but metrics and hold takes --json (topotunectl(1), JSON OUTPUT).\n\n"
	       "Commands (topotuned over D-Bus):\n"
	       "  status                     State, profile, CPU, settings desired/actual\n"
	       "  apply                      Apply the selected profile again\n"
	       "  revert                     Restore every value topotuned changed\n"
	       "  reload                     Re-read the configuration and apply the diff\n"
	       "  verify                     Exit 0 in sync, 1 drift, 2 error\n"
	       "  set-profile PROFILE        Switch to PROFILE (until reload or restart)\n"
	       "  set-profile --persistent PROFILE\n"
	       "                             Switch and keep it: a conf.d drop-in\n"
	       "  auto-profile               Back to the configured/hardware-rule profile\n"
	       "  hold [--reason TEXT] PROFILE -- COMMAND...\n"
	       "                             Hold PROFILE while COMMAND runs\n"
	       "  trial --profile A --profile B [--rounds N] [--warmup K]\n"
	       "        [--metric REGEX [--higher-is-better]] (--preset NAME[:N] | -- COMMAND...)\n"
	       "                             Measure which profile is faster, with a 95%% interval\n\n"
	       "Commands (topotuned when it runs, else in-process; --root: in-process):\n"
	       "  profiles                   List the profiles\n"
	       "  layout [--cpu N]           Scheduler-domain layout (live or predicted)\n"
	       "  metrics                    Prometheus text format (offline: kernel counters only)\n\n"
	       "Commands (always in-process, read-only; no daemon needed):\n"
	       "  topology                   CPU identity and topology\n"
	       "  plan [--profile P] [--cpu N]\n"
	       "                             Show what would be changed, and why\n"
	       "  layout --profile P [--cpu N]\n"
	       "                             The layout predicted for profile P\n"
	       "  layout --compare           The kernel's reported layout against the prediction\n"
	       "                             for its current settings (exit 1 if they differ)\n"
	       "  explain SETTING            Where a setting's value comes from\n"
	       "  diagnose [--duration S] [--only KIND[,KIND]]\n"
	       "                             Name the scheduler-topology pathologies of this\n"
	       "                             machine, with evidence and remedy; exit 0 none,\n"
	       "                             1 findings, 2 error (--root: recorded-tree kinds)\n"
	       "  check [--as PATH] [FILE...]\n"
	       "                             Check the configuration (and candidate files);\n"
	       "                             exit 0 valid, 2 errors with FILE:LINE\n\n"
	       "Options:\n"
	       "  -h --help                  Show this help\n"
	       "     --version               Show the version\n"
	       "     --root DIR              Inspect the system below DIR (offline)\n"
	       "     --bus-address ADDR      Talk to topotuned on this bus (default: system bus)\n"
	       "     --json                  JSON output (schema 1, /usr/share/topotune/\n"
	       "                             topotunectl.schema.json)\n"
	       "     --config-root DIR       Read etc/ and usr/lib/ from DIR (default: --root)\n"
	       "     --cpuid-dump FILE       Identify the CPU from a raw CPUID dump\n"
	       "     --kernel KIND           Capabilities to plan for when offline:\n"
	       "                             probe (default), patched, stock\n"
	       "  -v --verbose               Debug logging\n");
}

int main(int argc, char *argv[])
{
	enum {
		ARG_VERSION = 0x100,
		ARG_ROOT,
		ARG_CONFIG_ROOT,
		ARG_CPUID_DUMP,
		ARG_KERNEL,
		ARG_BUS_ADDRESS,
		ARG_JSON,
	};
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{ "root", required_argument, NULL, ARG_ROOT },
		{ "config-root", required_argument, NULL, ARG_CONFIG_ROOT },
		{ "cpuid-dump", required_argument, NULL, ARG_CPUID_DUMP },
		{ "kernel", required_argument, NULL, ARG_KERNEL },
		{ "bus-address", required_argument, NULL, ARG_BUS_ADDRESS },
		{ "json", no_argument, NULL, ARG_JSON },
		{ "verbose", no_argument, NULL, 'v' },
		{}
	};
	CtlContext ctx = { .root = "/" , .kernel = "probe" };
	int c;

	/* "+": stop at the verb; verbs parse their own options. */
	while ((c = getopt_long(argc, argv, "+hv", options, NULL)) >= 0) {
		switch (c) {
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
			printf("topotunectl %s\n", TOPOTUNE_VERSION);
			return 0;
		case ARG_ROOT:
			ctx.root = optarg;
			ctx.offline = true;
			break;
		case ARG_CONFIG_ROOT:
			ctx.config_root = optarg;
			break;
		case ARG_CPUID_DUMP:
			ctx.cpuid_dump = optarg;
			break;
		case ARG_KERNEL:
			if (!streq(optarg, "probe") && !streq(optarg, "patched") && !streq(optarg, "stock")) {
				log_error("--kernel: expected probe, patched or stock, got '%s'", optarg);
				return 2;
			}
			ctx.kernel = optarg;
			break;
		case ARG_BUS_ADDRESS:
			ctx.bus_address = optarg;
			break;
		case ARG_JSON:
			ctx.json = true;
			break;
		case 'v':
			log_set_max_level(LOG_DEBUG);
			break;
		default:
			return 2;
		}
	}
	if (optind >= argc) {
		help();
		return 2;
	}
	return ctl_dispatch(&ctx, argc - optind, argv + optind);
}
