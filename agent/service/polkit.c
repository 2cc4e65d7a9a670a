/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Authorisation of mutating bus calls, after systemd's bus-polkit.c: root
 * is always allowed; everyone else needs polkit's yes for the action, asked
 * with the caller as a system-bus-name subject. When polkitd is not on the
 * bus nobody but root gets in, and the error says why.
 */
#include "log.h"
#include "manager.h"
#include "strutil.h"

#define POLKIT_ALLOW_USER_INTERACTION 1U

static int sender_uid(sd_bus_message *m, uid_t *ret)
{
	_cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
	int r;

	r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID, &creds);
	if (r < 0)
		return r;
	return sd_bus_creds_get_euid(creds, ret);
}

static bool polkit_absent(const sd_bus_error *e)
{
	return sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER,
				      "org.freedesktop.DBus.Error.NoServer");
}

/* > 0 allowed, 0 denied (@error set), < 0 failure. */
int bus_verify_polkit(sd_bus_message *m, const char *action, bool interactive, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
	_cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus *bus = sd_bus_message_get_bus(m);
	const char *sender = sd_bus_message_get_sender(m);
	int authorized = 0, challenge = 0, r;
	uid_t uid;

	r = sender_uid(m, &uid);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "Cannot tell who is calling: %s", strerror(-r));
	if (uid == 0)
		return 1;
	if (!sender)
		return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Caller has no bus name.");

	interactive = interactive || sd_bus_message_get_allow_interactive_authorization(m);

	r = sd_bus_message_new_method_call(bus, &call, "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
					   "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
	if (r >= 0)
		r = sd_bus_message_append(call, "(sa{sv})s", "system-bus-name", 1, "name", "s", sender, action);
	if (r >= 0)
		r = sd_bus_message_append(call, "a{ss}us", 0, interactive ? POLKIT_ALLOW_USER_INTERACTION : 0U, "");
	if (r < 0)
		return r;

	/* Interactive authentication waits for a human; give it time. */
	r = sd_bus_call(bus, call, interactive ? 120 * 1000000ULL : 25 * 1000000ULL, &e, &reply);
	if (r < 0) {
		if (polkit_absent(&e)) {
			log_notice("Denied %s to uid %u (%s): polkit is not available and only root may.",
				   sd_bus_message_get_member(m), (unsigned)uid, sender);
			return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
						 "Access denied: polkit is not running on this bus, so only root may call %s.",
						 sd_bus_message_get_member(m));
		}
		return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "Authorisation check failed: %s",
					 e.message ?: strerror(-r));
	}

	r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
	if (r >= 0)
		r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
	if (r < 0)
		return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "Malformed polkit reply: %s", strerror(-r));
	if (authorized)
		return 1;
	if (challenge && !interactive)
		return sd_bus_error_setf(error, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED,
					 "%s needs authentication (polkit action %s); call it with interactive = true.",
					 sd_bus_message_get_member(m), action);
	log_notice("Denied %s to uid %u (%s) by polkit.", sd_bus_message_get_member(m), (unsigned)uid, sender);
	return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "Access denied by polkit (action %s).", action);
}
