/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Authorisation of mutating bus calls, after systemd's bus-polkit.c: root
 * is always allowed; everyone else needs polkit's yes for
 * org.topotune1.manage, asked with the caller as a system-bus-name subject.
 * The question is asked asynchronously, so reads keep being served while a
 * human types a password; the method is dispatched again when the answer
 * arrives. One mutation waits for authorisation at a time: others get
 * org.topotune1.Error.Busy. When polkitd is not on the bus nobody but root
 * gets in, and the error says why.
 */
#include "log.h"
#include "manager.h"
#include "strutil.h"

#define POLKIT_ACTION "org.topotune1.manage"
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

static void auth_done(Manager *m)
{
	m->auth_slot = sd_bus_slot_unref(m->auth_slot);
	m->auth_call = sd_bus_message_unref(m->auth_call);
	sd_bus_error_free(&m->auth_error);
	m->auth_result = 0;
}

void manager_auth_cancel(Manager *m)
{
	auth_done(m);
}

/* Turn polkit's answer (or its absence) into auth_result/auth_error. */
static void auth_evaluate(Manager *m, sd_bus_message *reply)
{
	const sd_bus_error *e = sd_bus_message_get_error(reply);
	const char *member = sd_bus_message_get_member(m->auth_call);
	int authorized = 0, challenge = 0, r;

	if (e) {
		if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER)) {
			log_notice("Denied %s to %s: polkit is not available and only root may.", member,
				   sd_bus_message_get_sender(m->auth_call));
			(void)sd_bus_error_setf(&m->auth_error, SD_BUS_ERROR_ACCESS_DENIED,
						"Access denied: polkit is not running on this bus, so only root may call %s.",
						member);
		} else
			(void)sd_bus_error_setf(&m->auth_error, SD_BUS_ERROR_ACCESS_DENIED, "Authorisation check failed: %s",
						strna(e->message));
		m->auth_result = -EACCES;
		return;
	}
	r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
	if (r >= 0)
		r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
	if (r < 0) {
		(void)sd_bus_error_setf(&m->auth_error, SD_BUS_ERROR_ACCESS_DENIED, "Malformed polkit reply: %s",
					strerror(-r));
		m->auth_result = -EACCES;
	} else if (authorized)
		m->auth_result = 1;
	else if (challenge) {
		(void)sd_bus_error_setf(&m->auth_error, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED,
					"%s needs authentication (polkit action %s); call it with interactive = true.",
					member, POLKIT_ACTION);
		m->auth_result = -EACCES;
	} else {
		log_notice("Denied %s to %s by polkit.", member, sd_bus_message_get_sender(m->auth_call));
		(void)sd_bus_error_setf(&m->auth_error, SD_BUS_ERROR_ACCESS_DENIED, "Access denied by polkit (action %s).",
					POLKIT_ACTION);
		m->auth_result = -EACCES;
	}
}

static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	Manager *m = userdata;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;

	auth_evaluate(m, reply);
	call = sd_bus_message_ref(m->auth_call);
	/* The handler sees auth_call == its message and takes the result. */
	(void)manager_redispatch(m, call);
	if (m->auth_call == call)
		auth_done(m);
	return 1;
}

int bus_verify_polkit_async(Manager *m, sd_bus_message *msg, bool interactive, sd_bus_error *error)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
	const char *sender = sd_bus_message_get_sender(msg);
	uid_t uid;
	int r;

	if (m->auth_call == msg) {
		/* Dispatched again: polkit has answered. */
		r = m->auth_result;
		if (r < 0)
			(void)sd_bus_error_copy(error, &m->auth_error);
		auth_done(m);
		return r;
	}
	if (m->auth_call)
		return sd_bus_error_setf(error, BUS_ERROR_BUSY,
					 "Another change (%s from %s) is waiting for authorisation; try again.",
					 sd_bus_message_get_member(m->auth_call), sd_bus_message_get_sender(m->auth_call));

	r = sender_uid(msg, &uid);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "Cannot tell who is calling: %s", strerror(-r));
	if (uid == 0)
		return 1;
	if (!sender)
		return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Caller has no bus name.");

	interactive = interactive || sd_bus_message_get_allow_interactive_authorization(msg);
	r = sd_bus_message_new_method_call(sd_bus_message_get_bus(msg), &call, "org.freedesktop.PolicyKit1",
					   "/org/freedesktop/PolicyKit1/Authority", "org.freedesktop.PolicyKit1.Authority",
					   "CheckAuthorization");
	if (r >= 0)
		r = sd_bus_message_append(call, "(sa{sv})s", "system-bus-name", 1, "name", "s", sender, POLKIT_ACTION);
	if (r >= 0)
		r = sd_bus_message_append(call, "a{ss}us", 0, interactive ? POLKIT_ALLOW_USER_INTERACTION : 0U, "");
	if (r >= 0)
		/* Interactive authentication waits for a human; give it time. */
		r = sd_bus_call_async(sd_bus_message_get_bus(msg), &m->auth_slot, call, on_polkit_reply, m,
				      interactive ? 120 * 1000000ULL : 25 * 1000000ULL);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "Cannot ask polkit: %s", strerror(-r));
	m->auth_call = sd_bus_message_ref(msg);
	return 0;
}
