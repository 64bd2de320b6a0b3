/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the IEEE 802.1Qaz commands
 * as net/dcb/dcbnl.c runs them, calling the model's ops, and the kernel's
 * APP table (dcb_app_list) with its helpers dcb_ieee_setapp/delapp.
 *
 * dcbnl_ieee_set() runs ETS, PFC, the DCB buffer (when the driver has
 * dcbnl_setbuffer; a prio2buffer of 8 or more is EINVAL first), the APP
 * table, then the APP trust table (EOPNOTSUPP without dcbnl_setapptrust);
 * the first error stops it, and the error, or a positive return, becomes the
 * reply's status byte (nla_put_u8(skb, DCB_ATTR_IEEE, err)).
 * dcbnl_app_table_setdel() skips entries of other attribute types, answers
 * ERANGE for a short entry and EINVAL for a selector its attribute type does
 * not allow, and stops at the first non-zero return of the driver's
 * ieee_setapp/ieee_delapp (or of dcb_ieee_setapp/delapp without one): the
 * entries after it in the same request are not set. dcbnl_ieee_fill() puts
 * ETS and PFC when the driver's getters answer 0, the buffer with
 * dcbnl_getbuffer, the APP table, the trust table with dcbnl_getapptrust,
 * and DCB_ATTR_DCBX from getdcbx.
 */
#include "dcbdrv.h"

/* ---- the kernel's APP table ---------------------------------------------- */

int app_find(const struct drv *d, uint8_t sel, uint16_t proto, int prio)
{
	for (int i = 0; i < d->n_app; i++)
		if (d->app[i].selector == sel && d->app[i].protocol == proto &&
		    (prio < 0 || d->app[i].priority == prio))
			return i;
	return -1;
}

void app_remove(struct drv *d, int i)
{
	memmove(&d->app[i], &d->app[i + 1], sizeof d->app[0] * (d->n_app - i - 1));
	d->n_app--;
}

/* dcb_ieee_setapp(): an exact duplicate is EEXIST. */
int kapp_add(struct drv *d, const struct dcb_app *a)
{
	if (app_find(d, a->selector, a->protocol, a->priority) >= 0)
		return -EEXIST;
	if (d->n_app == MAXAPP)
		return -ENOMEM;
	d->app[d->n_app++] = (struct app){a->selector, a->priority, a->protocol, 0};
	return 0;
}

/* dcb_ieee_delapp(): the entry with that selector, protocol and priority. */
int kapp_del(struct drv *d, const struct dcb_app *a)
{
	int i = app_find(d, a->selector, a->protocol, a->priority);

	if (i < 0)
		return -ENOENT;
	app_remove(d, i);
	return 0;
}

/* ieee_attrs_app type of an APP entry, as dcbnl_app_attr_type_get(). */
int app_attr_type(uint8_t sel)
{
	if (sel >= IEEE_8021QAZ_APP_SEL_ETHERTYPE && sel <= X_SEL_DSCP)
		return X_APP_IEEE;
	if (sel == X_SEL_PCP)
		return X_APP_DCB;
	return 0;
}

/* dcbnl_app_selector_validate() */
static int app_valid(int type, uint8_t sel)
{
	if (type == X_APP_IEEE)
		return sel >= IEEE_8021QAZ_APP_SEL_ETHERTYPE && sel <= X_SEL_DSCP;
	if (type == X_APP_DCB)
		return sel == X_SEL_PCP;
	return 0;
}

/* ---- IEEE_GET ------------------------------------------------------------- */

void ieee_fill(struct drv *d, struct mb *r)
{
	const struct model *m = model_of(d);
	size_t ieee, apps;
	struct ieee_ets ets;
	struct ieee_pfc pfc;
	int ok;

	ieee = nest(r, DCB_ATTR_IEEE);
	memset(&ets, 0, sizeof ets);
	ok = m->getets ? m->getets(d, &ets) == 0 : (ets = d->ets, 1);
	if (ok)
		put(r, X_IEEE_ETS, &ets, sizeof ets);
	memset(&pfc, 0, sizeof pfc);
	ok = m->getpfc ? m->getpfc(d, &pfc) == 0 : (pfc = d->pfc, 1);
	if (ok) {
		read_counters(d, &pfc);
		put(r, X_IEEE_PFC, &pfc, sizeof pfc);
	}
	if (d->has_buffer)
		put(r, X_DCB_BUFFER, &d->buf, sizeof d->buf);
	apps = nest(r, X_IEEE_APP_TABLE);
	for (int i = 0; i < d->n_app; i++) {
		struct dcb_app a = {.selector = d->app[i].selector,
				    .priority = d->app[i].priority,
				    .protocol = d->app[i].protocol};
		put(r, app_attr_type(a.selector), &a, sizeof a);
	}
	nest_end(r, apps);
	if (m->ops & OP_APPTRUST) {
		apps = nest(r, X_DCB_APP_TRUST_TABLE);
		for (int i = 0; i < d->n_trust; i++)
			put_u8(r, app_attr_type(d->trust[i]), d->trust[i]);
		nest_end(r, apps);
	}
	nest_end(r, ieee);
	put_u8(r, DCB_ATTR_DCBX, d->dcbx);
}

/* ---- IEEE_SET / IEEE_DEL ---------------------------------------------------- */

static int set_ets(struct drv *d, const struct nlattr *a, struct note *n)
{
	const struct model *m = model_of(d);
	struct ieee_ets e;

	if (payload_of(a, &e, sizeof e))
		return -ERANGE;
	note(n, "ets.willing=%u", e.willing);
	note8(n, "ets.tc_tsa", e.tc_tsa);
	note8(n, "ets.tc_tx_bw", e.tc_tx_bw);
	note8(n, "ets.prio_tc", e.prio_tc);
	note8(n, "ets.tc_reco_tsa", e.tc_reco_tsa);
	note8(n, "ets.tc_reco_bw", e.tc_reco_bw);
	note8(n, "ets.reco_prio_tc", e.reco_prio_tc);
	if (m->setets)
		return m->setets(d, &e, n);
	for (int i = 0; i < 8; i++)
		if (e.prio_tc[i] >= 8) {
			note(n, "ets.refused=prio_%d_tc_%u_over_7", i, e.prio_tc[i]);
			return -EINVAL;
		}
	d->ets = e;
	d->ets.ets_cap = 8; /* the driver's capability, not settable */
	return 0;
}

static int set_pfc(struct drv *d, const struct nlattr *a, struct note *n)
{
	const struct model *m = model_of(d);
	struct ieee_pfc p;

	if (payload_of(a, &p, sizeof p))
		return -ERANGE;
	note(n, "pfc.en=0x%02x pfc.mbc=%u pfc.delay=%u", p.pfc_en, p.mbc, p.delay);
	if (m->setpfc)
		return m->setpfc(d, &p, n);
	d->pfc.pfc_en = p.pfc_en;
	d->pfc.mbc = p.mbc;
	d->pfc.delay = p.delay;
	return 0;
}

static int set_buffer(struct drv *d, const struct nlattr *a, struct note *n)
{
	const struct model *m = model_of(d);
	struct xbuffer b;
	uint64_t sum = 0;

	if (payload_of(a, &b, sizeof b))
		return -ERANGE;
	note8(n, "buffer.prio2buffer", b.prio2buffer);
	note(n, "buffer.size=%u,%u,%u,%u,%u,%u,%u,%u", b.buffer_size[0], b.buffer_size[1],
	     b.buffer_size[2], b.buffer_size[3], b.buffer_size[4], b.buffer_size[5],
	     b.buffer_size[6], b.buffer_size[7]);
	for (int i = 0; i < 8; i++) /* dcbnl_ieee_set(): DCBX_MAX_BUFFERS */
		if (b.prio2buffer[i] >= 8) {
			note(n, "buffer.refused=prio_%d_buffer_%u_over_7", i, b.prio2buffer[i]);
			return -EINVAL;
		}
	if (m->setbuffer)
		return m->setbuffer(d, &b, n);
	for (int i = 0; i < 8; i++)
		sum += b.buffer_size[i];
	if (d->buf.total_size && sum > d->buf.total_size) {
		note(n, "buffer.refused=sum_%llu_over_total_%u", (unsigned long long)sum,
		     d->buf.total_size);
		return -EINVAL;
	}
	memcpy(d->buf.prio2buffer, b.prio2buffer, 8);
	memcpy(d->buf.buffer_size, b.buffer_size, sizeof b.buffer_size);
	return 0;
}

/* dcbnl_app_table_setdel() */
static int setdel_apps(struct drv *d, int del, const struct nlattr *table, struct note *n)
{
	const struct model *m = model_of(d);
	const struct nlattr *a;
	int rem, err = 0, left = 0;

	FOR_NESTED(a, table, rem) {
		struct dcb_app app;
		if (TYPE(a) != X_APP_IEEE && TYPE(a) != X_APP_DCB)
			continue;
		if (err) { /* stopped: what the request held after it */
			left++;
			continue;
		}
		if (payload_of(a, &app, sizeof app))
			return -ERANGE;
		if (!app_valid(TYPE(a), app.selector)) {
			note(n, "app.refused=sel_%u_not_attr_type_%u", app.selector, TYPE(a));
			return -EINVAL;
		}
		if (del)
			err = m->delapp ? m->delapp(d, &app, n) : kapp_del(d, &app);
		else
			err = m->setapp ? m->setapp(d, &app, n) : kapp_add(d, &app);
		note(n, "app%s=%u,%u,%u", del ? "-" : "+", app.selector, app.priority, app.protocol);
		if (err)
			note(n, "app.result=%d", err);
	}
	if (left)
		note(n, "app.not_reached=%d", left);
	return err;
}

static int set_trust(struct drv *d, const struct nlattr *table, struct note *n)
{
	const struct nlattr *a;
	uint8_t sel[256];
	char t[1024] = "";
	size_t tl = 0;
	int rem, k = 0;

	if (!(model_of(d)->ops & OP_APPTRUST)) {
		note(n, "trust.refused=no_dcbnl_setapptrust");
		return -EOPNOTSUPP;
	}
	FOR_NESTED(a, table, rem) {
		if (!app_attr_type(DATA(a)[0]) || DLEN(a) != 1 || k >= 256 ||
		    TYPE(a) != app_attr_type(DATA(a)[0]))
			return -EINVAL;
		for (int i = 0; i < k; i++)
			if (sel[i] == DATA(a)[0])
				return -EINVAL;
		sel[k++] = DATA(a)[0];
	}
	memcpy(d->trust, sel, k);
	d->n_trust = k;
	for (int i = 0; i < k && tl + 5 < sizeof t; i++)
		tl += (size_t)snprintf(t + tl, sizeof t - tl, "%s%u", i ? "," : "", sel[i]);
	note(n, "trust=%s", t);
	return 0;
}

/* dcbnl_ieee_set / dcbnl_ieee_del; returns the status the reply carries. */
int ieee_setdel(struct drv *d, int del, const struct nlattr *req, struct note *n)
{
	const struct nlattr *tb[X_IEEE_MAX + 1];
	int err;

	if (parse(DATA(req), DLEN(req), tb, X_IEEE_MAX) < 0)
		return -EINVAL;
	if (!del && tb[X_IEEE_ETS] && (err = set_ets(d, tb[X_IEEE_ETS], n)) != 0)
		return err;
	if (!del && tb[X_IEEE_PFC] && (err = set_pfc(d, tb[X_IEEE_PFC], n)) != 0)
		return err;
	if (!del && tb[X_DCB_BUFFER]) {
		if (!d->has_buffer)
			note(n, "buffer.ignored=no_buffer_ops");
		else if ((err = set_buffer(d, tb[X_DCB_BUFFER], n)) != 0)
			return err;
	}
	if (tb[X_IEEE_APP_TABLE] && (err = setdel_apps(d, del, tb[X_IEEE_APP_TABLE], n)) != 0)
		return err;
	if (!del && tb[X_DCB_APP_TRUST_TABLE] &&
	    (err = set_trust(d, tb[X_DCB_APP_TRUST_TABLE], n)) != 0)
		return err;
	return 0;
}
