/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "domains-live.h"
#include "domains.h"

/*
 * Compare a predicted layout with the one the kernel reports: per CPU it
 * reports (LiveLayout.listed) the
 * number of attached domains, and per domain the span, the name and
 * sd->level (where the kernel says them) and the flags (debugfs only).
 * Pure. @ret_diffs gets one readable line per difference, at most @max
 * (the return value is the total number of differences).
 */
int domains_compare(const DomainLayout *predicted, const LiveLayout *live, size_t max, char ***ret_diffs);

/* Flags text as debugfs prints it ("SD_BALANCE_NEWIDLE SD_SHARE_LLC ..."). */
int domain_flags_parse(const char *text, unsigned *ret);
