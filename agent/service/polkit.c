/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Authorisation of mutating bus calls, after systemd's bus-polkit.c: root
 * is always allowed, at once, whatever else is waiting; everyone else needs
 * polkit's yes for org.topotune1.manage, asked with the caller as a
 * system-bus-name subject. The question is asked asynchronously, so reads
 * and root's changes keep being served while a human types a password; the
 * method is dispatched again when the answer arrives. Each pending check
 * belongs to its caller: it is dropped when the caller leaves the bus, a
 * connection has one at a time and a user AUTH_PER_UID_MAX. There is no
 * bound for all users together: with one, 16 users' unanswered checks kept
 * every other user out for up to 120 s (issue 29); per caller, what one
 * user holds stays its own, and the total is bounded by the users there
 * are. When polkitd is not on the bus nobody but root gets in, and the
 * error says why.
 */
#include "log.h"
#include "manager.h"
#include "strutil.h"

#define POLKIT_ACTION "org.topotune1.manage"
#define POLKIT_ALLOW_USER_INTERACTION 1U
#define AUTH_PER_UID_MAX 4U

struct AuthQuery {
	Manager *manager;
	AuthQuery *prev, *next;
	sd_bus_message *call;     /* the method call waiting */
	sd_bus_slot *slot;        /* polkit's CheckAuthorization, while unanswered */
	sd_bus_track *track;      /* the caller on the bus */
	uid_t uid;
	bool answered;
	int result;               /* 1 allowed, -EACCES with @error */
	sd_bus_error error;
};

static AuthQuery *auth_query_free(AuthQuery *q)
{
	Manager *m;

	if (!q)
		return NULL;
	m = q->manager;
	if (q->prev)
		q->prev->next = q->next;
	else
		m->auth_queries = q->next;
	if (q->next)
		q->next->prev = q->prev;
	m->n_auth_queries--;
	/* Unreferencing the slot cancels polkit's pending answer. */
	sd_bus_slot_unref(q->slot);
	sd_bus_track_unref(q->track);
	sd_bus_message_unref(q->call);
	sd_bus_error_free(&q->error);
	free(q);
	return NULL;
}

static AuthQuery *auth_query_find(Manager *m, sd_bus_message *call)
{
	for (AuthQuery *q = m->auth_queries; q; q = q->next)
		if (q->call == call)
			return q;
	return NULL;
}

static int sender_uid(sd_bus_message *m, uid_t *ret)
{
	_cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
	int r;

	r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID, &creds);
	if (r < 0)
		return r;
	return sd_bus_creds_get_euid(creds, ret);
}

void manager_auth_cancel(Manager *m)
{
	while (m->auth_queries)
		auth_query_free(m->auth_queries);
}

/* Turn polkit's answer (or its absence) into q->result/q->error. */
static void auth_evaluate(AuthQuery *q, sd_bus_message *reply)
{
	const sd_bus_error *e = sd_bus_message_get_error(reply);
	const char *member = sd_bus_message_get_member(q->call);
	int authorized = 0, challenge = 0, r;

	q->answered = true;
	q->result = -EACCES;
	if (e) {
		if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER)) {
			log_notice("Denied %s to %s: polkit is not available and only root may.", member,
				   sd_bus_message_get_sender(q->call));
			(void)sd_bus_error_setf(&q->error, SD_BUS_ERROR_ACCESS_DENIED,
						"Access denied: polkit is not running on this bus, so only root may call %s.",
						member);
		} else
			(void)sd_bus_error_setf(&q->error, SD_BUS_ERROR_ACCESS_DENIED, "Authorisation check failed: %s",
						strna(e->message));
		return;
	}
	r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
	if (r >= 0)
		r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
	if (r < 0)
		(void)sd_bus_error_setf(&q->error, SD_BUS_ERROR_ACCESS_DENIED, "Malformed polkit reply: %s",
					strerror(-r));
	else if (authorized)
		q->result = 1;
	else if (challenge)
		(void)sd_bus_error_setf(&q->error, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED,
					"%s needs authentication (polkit action %s); call it with interactive = true.",
					member, POLKIT_ACTION);
	else {
		log_notice("Denied %s to %s by polkit.", member, sd_bus_message_get_sender(q->call));
		(void)sd_bus_error_setf(&q->error, SD_BUS_ERROR_ACCESS_DENIED, "Access denied by polkit (action %s).",
					POLKIT_ACTION);
	}
}

static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	AuthQuery *q = userdata, *left;
	Manager *m = q->manager;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *call = sd_bus_message_ref(q->call);

	q->slot = sd_bus_slot_unref(q->slot);
	auth_evaluate(q, reply);
	/* The handler finds its query answered, takes the result and frees it. */
	(void)manager_redispatch(m, call);
	left = auth_query_find(m, call);
	if (left)
		auth_query_free(left);
	return 1;
}

/* The caller left the bus: nobody waits for the answer, and nothing is done on it. */
static int on_caller_gone(sd_bus_track *track, void *userdata)
{
	AuthQuery *q = userdata;

	log_info("Dropped the authorisation check of %s from %s (uid %u): the caller left the bus.",
		 strna(sd_bus_message_get_member(q->call)), strna(sd_bus_message_get_sender(q->call)), (unsigned)q->uid);
	auth_query_free(q);
	return 0;
}

/* Watch the caller (its query goes when it leaves the bus) and ask polkit. */
static int auth_query_send(AuthQuery *q, sd_bus_message *msg, const char *sender, bool interactive)
{
	sd_bus *bus = sd_bus_message_get_bus(msg);
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
	int r;

	r = sd_bus_track_new(bus, &q->track, on_caller_gone, q);
	if (r < 0)
		return r;
	r = sd_bus_track_add_sender(q->track, msg);
	if (r < 0)
		return r;
	r = sd_bus_message_new_method_call(bus, &call, "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
					   "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
	if (r < 0)
		return r;
	r = sd_bus_message_append(call, "(sa{sv})s", "system-bus-name", 1, "name", "s", sender, POLKIT_ACTION);
	if (r < 0)
		return r;
	r = sd_bus_message_append(call, "a{ss}us", 0, interactive ? POLKIT_ALLOW_USER_INTERACTION : 0U, "");
	if (r < 0)
		return r;
	/* Interactive authentication waits for a human; give it time. */
	return sd_bus_call_async(bus, &q->slot, call, on_polkit_reply, q, interactive ? 120 * 1000000ULL : 25 * 1000000ULL);
}

int bus_verify_polkit_async(Manager *m, sd_bus_message *msg, bool interactive, sd_bus_error *error)
{
	const char *sender = sd_bus_message_get_sender(msg);
	unsigned same_uid = 0;
	AuthQuery *q;
	uid_t uid;
	int r;

	q = auth_query_find(m, msg);
	if (q && q->answered) {
		/* Dispatched again: polkit has answered. */
		r = q->result;
		if (r < 0)
			(void)sd_bus_error_copy(error, &q->error);
		auth_query_free(q);
		return r;
	}

	r = sender_uid(msg, &uid);
	if (r < 0)
		return sd_bus_error_set_errnof(error, r, "Cannot tell who is calling: %s", strerror(-r));
	/* Root first: nothing another user started can hold root up. */
	if (uid == 0)
		return 1;
	if (!sender)
		return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Caller has no bus name.");

	for (AuthQuery *i = m->auth_queries; i; i = i->next) {
		if (streq_ptr(sd_bus_message_get_sender(i->call), sender))
			return sd_bus_error_setf(error, BUS_ERROR_BUSY,
						 "Your %s is still waiting for authorisation; answer it or try again.",
						 strna(sd_bus_message_get_member(i->call)));
		same_uid += i->uid == uid;
	}
	if (same_uid >= AUTH_PER_UID_MAX)
		return sd_bus_error_setf(error, BUS_ERROR_BUSY,
					 "%u changes of uid %u are waiting for authorisation already; try again.",
					 same_uid, (unsigned)uid);

	q = calloc(1, sizeof(AuthQuery));
	if (!q)
		return -ENOMEM;
	*q = (AuthQuery) { .manager = m, .uid = uid, .next = m->auth_queries, .error = SD_BUS_ERROR_NULL };
	if (m->auth_queries)
		m->auth_queries->prev = q;
	m->auth_queries = q;
	m->n_auth_queries++;
	q->call = sd_bus_message_ref(msg);

	interactive = interactive || sd_bus_message_get_allow_interactive_authorization(msg);
	r = auth_query_send(q, msg, sender, interactive);
	if (r < 0) {
		auth_query_free(q);
		return sd_bus_error_set_errnof(error, r, "Cannot ask polkit: %s", strerror(-r));
	}
	return 0;
}
