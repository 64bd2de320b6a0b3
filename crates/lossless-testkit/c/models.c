/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the table of driver models
 * (LOSSLESS_DCBDRV_MODEL chooses one), the generic driver, and what the
 * models share: the link reset some drivers do when they reconfigure, the
 * number of traffic classes a priority table uses, the firmware APP table.
 *
 * A model is a struct model (dcbdrv.h): the dcbnl ops its driver has (a
 * command whose op is missing answers EOPNOTSUPP, as net/dcb/dcbnl.c does),
 * its GCAP answers, its power-on state, and hooks for the ops whose answers
 * differ from the generic driver's. Each drv_*.c file opens with a comment
 * block citing, for every rule it models, the kernel file and function.
 *
 * The generic driver is the permissive one this library always emulated: it
 * has every CEE and IEEE op, APP trust, and DCB buffer ops when
 * LOSSLESS_DCBDRV_BUFFER says so; it accepts every APP selector, every ETS
 * (but a prio_tc of 8 or more) and every trust table.
 */
#include "dcbdrv.h"

static uint8_t generic_cap_dcbx(const struct drv *d)
{
	(void)d;
	return DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_CEE | DCB_CAP_DCBX_VER_IEEE;
}

const struct model model_generic = {
	.name = "generic",
	.ops = OP_CEE_ALL | OP_APPTRUST,
	.caps = {[DCB_CAP_ATTR_PG] = 1, [DCB_CAP_ATTR_PFC] = 1, [DCB_CAP_ATTR_UP2TC] = 1,
		 [DCB_CAP_ATTR_PG_TCS] = 0x80, [DCB_CAP_ATTR_PFC_TCS] = 0x80,
		 [DCB_CAP_ATTR_GSP] = 1},
	.cap_dcbx = generic_cap_dcbx,
};

const struct model *const models[M_COUNT] = {
	[M_GENERIC] = &model_generic, [M_MLX5] = &model_mlx5, [M_ICE] = &model_ice,
	[M_I40E] = &model_i40e,       [M_BNXT] = &model_bnxt, [M_HNS3] = &model_hns3,
	[M_IXGBE] = &model_ixgbe,
};

const struct model *model_of(const struct drv *d)
{
	return models[d->model >= 0 && d->model < M_COUNT ? d->model : M_GENERIC];
}

int model_by_name(const char *name)
{
	for (int i = 0; i < M_COUNT; i++)
		if (strcmp(models[i]->name, name) == 0)
			return i;
	return -1;
}

/* d->ets and d->pfc as the model's ieee_getets/ieee_getpfc report them now,
 * for the state file (the generic driver's are its state). */
void model_sync(struct drv *d)
{
	const struct model *m = model_of(d);
	struct ieee_ets e;
	struct ieee_pfc p;

	memset(&e, 0, sizeof e);
	if (m->getets && m->getets(d, &e) == 0)
		d->ets = e;
	memset(&p, 0, sizeof p);
	if (m->getpfc && m->getpfc(d, &p) == 0) {
		memset(p.requests, 0, sizeof p.requests);
		memset(p.indications, 0, sizeof p.indications);
		d->pfc = p;
	}
}

/* What a driver does when it closes and reopens the netdev (ice's
 * ice_dcbnl_devreset: dev_close then dev_open, so a port that was down comes
 * up: open_always) or stops and restarts it while it runs (the others): the
 * emulated veth is set down and up with SIOCSIFFLAGS, a link flap every
 * process on the namespace sees. */
void link_reset(struct drv *d, int open_always, struct note *n)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), up;

	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", d->ifname);
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		note(n, "link.reset=failed_errno_%d", errno);
		if (s >= 0)
			r_close(s);
		return;
	}
	up = (ifr.ifr_flags & IFF_UP) != 0;
	if (!up && !open_always) {
		note(n, "link.reset=none_port_down");
		r_close(s);
		return;
	}
	if (up) {
		ifr.ifr_flags &= ~IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) {
			note(n, "link.reset=failed_errno_%d", errno);
			r_close(s);
			return;
		}
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) {
		note(n, "link.reset=failed_errno_%d", errno);
		r_close(s);
		return;
	}
	r_close(s);
	d->link_resets++;
	note(n, "link.reset=%s", up ? "down_up" : "up");
}

/* The traffic classes a priority table uses, counted from TC0 while they are
 * contiguous; 1 for a table with a gap (and at least 1): ice_dcb_get_num_tc()
 * in ice_dcb_lib.c, i40e_dcb_get_num_tc() likewise. A TC of 8 or more falls
 * out of their u8 bitmap. */
int num_tc_contig(const uint8_t *prio_tc)
{
	uint8_t used = 0;
	int n = 0, gap = 0;

	for (int i = 0; i < 8; i++)
		if (prio_tc[i] < 8)
			used |= (uint8_t)(1u << prio_tc[i]);
	for (int i = 0; i < 8; i++) {
		if (used & (1u << i)) {
			if (gap)
				return 1;
			n++;
		} else {
			gap = 1;
		}
	}
	return n ? n : 1;
}

/* The index of an entry of a firmware APP table from `from` on, or -1. */
int fwapp_find(const struct fwcfg *c, uint8_t sel, uint16_t proto, uint8_t prio, int from)
{
	for (int i = from; i < c->napp && i < FWAPPS; i++)
		if (c->app[i].sel == sel && c->app[i].proto == proto && c->app[i].prio == prio)
			return i;
	return -1;
}
