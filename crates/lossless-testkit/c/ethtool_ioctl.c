/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the SIOCETHTOOL ioctl for
 * emulated interfaces, as net/ethtool/ioctl.c's dev_ethtool dispatches it to
 * the driver's ethtool ops (ethmodels.c):
 *
 *   ETHTOOL_GDRVINFO (ethtool_get_drvinfo): the model's driver name, the
 *     kernel's release as version (what the kernel puts there before the
 *     driver's get_drvinfo), n_priv_flags and n_stats from get_sset_count; no
 *     bus, firmware version, self tests, EEPROM or register dump emulated;
 *   ETHTOOL_GSSET_INFO (ethtool_get_sset_info): a bit and a count for each
 *     asked-for set the driver counts (ETH_SS_STATS, ETH_SS_PRIV_FLAGS where
 *     it has private flags; no ETH_SS_TEST); the sets the kernel counts itself
 *     (features, link modes, ...) as the kernel answers for the veth;
 *   ETHTOOL_GSTRINGS (ethtool_get_strings), ETHTOOL_GSTATS
 *     (ethtool_get_stats): len and n_stats set to the driver's count whatever
 *     the caller wrote (the caller's buffer must be large enough, as with the
 *     kernel), then the names, or the values (what a test set, else 0);
 *   ETHTOOL_GPAUSEPARAM, ETHTOOL_SPAUSEPARAM (ethtool_get/set_pauseparam:
 *     the driver's set_pauseparam is called whether or not anything changes);
 *   ETHTOOL_GPFLAGS, ETHTOOL_SPFLAGS (ethtool_get_value/ethtool_set_value:
 *     get_priv_flags, and set_priv_flags with the caller's word unchecked).
 *
 * The generic model answers the pause commands only. Everything else goes to
 * the kernel, as do requests for interfaces that are not emulated or do not
 * exist, and sets by a caller without CAP_NET_ADMIN (dev_ethtool answers
 * EPERM before the driver's op).
 */
#include "dcbdrv.h"

#include <linux/ethtool.h>
#include <sys/utsname.h>

static const char *ioctl_name(uint32_t cmd)
{
	switch (cmd) {
	case ETHTOOL_GDRVINFO:
		return "GDRVINFO";
	case ETHTOOL_GSSET_INFO:
		return "GSSET_INFO";
	case ETHTOOL_GSTRINGS:
		return "GSTRINGS";
	case ETHTOOL_GSTATS:
		return "GSTATS";
	case ETHTOOL_GPAUSEPARAM:
		return "GPAUSEPARAM";
	case ETHTOOL_SPAUSEPARAM:
		return "SPAUSEPARAM";
	case ETHTOOL_GPFLAGS:
		return "GPFLAGS";
	default:
		return "SPFLAGS";
	}
}

/* The driver's get_sset_count: -EOPNOTSUPP for a set it does not count. */
static int sset_count(const struct drv *d, uint32_t set, char (*names)[32])
{
	const struct ethmodel *em = ethmodel_of(d);

	if (set == ETH_SS_STATS)
		return eth_stat_names(d, names, ETH_MAXSTATS);
	if (set == ETH_SS_PRIV_FLAGS && em->flags)
		return em->nflags;
	return -EOPNOTSUPP;
}

/* The sets a driver's get_sset_count answers (the others the kernel counts). */
static int driver_set(uint32_t set)
{
	return set == ETH_SS_TEST || set == ETH_SS_STATS || set == ETH_SS_PRIV_FLAGS;
}

static int drvinfo(const struct drv *d, struct ethtool_drvinfo *info, char (*names)[32])
{
	struct utsname u;
	int n;

	memset(info, 0, sizeof *info);
	info->cmd = ETHTOOL_GDRVINFO;
	if (uname(&u) == 0)
		snprintf(info->version, sizeof info->version, "%.31s", u.release);
	snprintf(info->driver, sizeof info->driver, "%s", ethmodel_of(d)->driver);
	if ((n = sset_count(d, ETH_SS_STATS, names)) >= 0)
		info->n_stats = (uint32_t)n;
	if ((n = sset_count(d, ETH_SS_PRIV_FLAGS, names)) >= 0)
		info->n_priv_flags = (uint32_t)n;
	return 0;
}

/* ETHTOOL_GSSET_INFO into the caller's buffer: the kernel's answer for the
 * veth first (the sets the kernel counts), then the driver's sets in their
 * places. */
static int sset_info(int fd, struct ifreq *ifr, const struct drv *d, char (*names)[32])
{
	struct ethtool_sset_info *u = (struct ethtool_sset_info *)ifr->ifr_data;
	uint64_t asked = u->sset_mask, kernel_mask;
	uint32_t kernel_data[64], out[64];
	int k = 0, o = 0;
	uint64_t mask = 0;

	if (!asked)
		return 0;
	if (r_ioctl(fd, SIOCETHTOOL, ifr) < 0)
		return -errno;
	kernel_mask = u->sset_mask;
	for (int j = 0; j < __builtin_popcountll(kernel_mask); j++)
		kernel_data[j] = u->data[j];
	for (int i = 0; i < 64; i++) {
		int rc;
		if (!(asked & (1ull << i)))
			continue;
		if (driver_set((uint32_t)i)) {
			if (kernel_mask & (1ull << i))
				k++; /* the veth's count, replaced */
			rc = sset_count(d, (uint32_t)i, names);
		} else {
			rc = kernel_mask & (1ull << i) ? (int)kernel_data[k++] : -EOPNOTSUPP;
		}
		if (rc >= 0) {
			mask |= 1ull << i;
			out[o++] = (uint32_t)rc;
		}
	}
	u->cmd = ETHTOOL_GSSET_INFO;
	u->reserved = 0;
	u->sset_mask = mask;
	memcpy(u->data, out, (size_t)o * sizeof out[0]);
	return 0;
}

int eth_ioctl(int fd, void *arg, int *ret)
{
	static char names[ETH_MAXSTATS][32]; /* under mu */
	static struct note lg;             /* under mu */
	struct ifreq *ifr = arg;
	struct drv *d;
	uint32_t cmd;
	int err = 0, set, changed = 0;

	if (!ifr || !ifr->ifr_data)
		return 0;
	memcpy(&cmd, ifr->ifr_data, 4);
	switch (cmd) {
	case ETHTOOL_GDRVINFO:
	case ETHTOOL_GSSET_INFO:
	case ETHTOOL_GSTRINGS:
	case ETHTOOL_GSTATS:
	case ETHTOOL_GPAUSEPARAM:
	case ETHTOOL_SPAUSEPARAM:
	case ETHTOOL_GPFLAGS:
	case ETHTOOL_SPFLAGS:
		break;
	default:
		return 0;
	}
	if (!memchr(ifr->ifr_name, 0, sizeof ifr->ifr_name) || !emulated(ifr->ifr_name) ||
	    if_nametoindex(ifr->ifr_name) == 0)
		return 0;
	set = cmd == ETHTOOL_SPAUSEPARAM || cmd == ETHTOOL_SPFLAGS;
	if (set && !can_net_admin())
		return 0;
	if (cmd == ETHTOOL_GSTRINGS) {
		uint32_t ss;
		memcpy(&ss, (char *)ifr->ifr_data + 4, 4);
		if (!driver_set(ss))
			return 0; /* a set the kernel names (features, link modes, ...) */
	}

	pthread_mutex_lock(&mu);
	d = nic_get(ifr->ifr_name);
	if (!d || (!eth_owns(d) && cmd != ETHTOOL_GPAUSEPARAM && cmd != ETHTOOL_SPAUSEPARAM)) {
		if (d)
			nic_put(d, 0);
		pthread_mutex_unlock(&mu);
		return 0;
	}
	lg.s[0] = '\0';
	switch (cmd) {
	case ETHTOOL_GDRVINFO: {
		struct ethtool_drvinfo info;
		drvinfo(d, &info, names);
		memcpy(ifr->ifr_data, &info, sizeof info);
		note(&lg, "driver=%s", info.driver);
		break;
	}
	case ETHTOOL_GSSET_INFO:
		err = sset_info(fd, ifr, d, names);
		break;
	case ETHTOOL_GSTRINGS: {
		struct ethtool_gstrings *g = (struct ethtool_gstrings *)ifr->ifr_data;
		uint32_t ss = g->string_set;
		int n = sset_count(d, ss, names);
		if (n < 0) {
			err = n;
			break;
		}
		g->len = (uint32_t)n;
		for (int i = 0; i < n; i++) {
			const char *s = ss == ETH_SS_STATS ? names[i] : ethmodel_of(d)->flags[i];
			memset(g->data + (size_t)i * ETH_GSTRING_LEN, 0, ETH_GSTRING_LEN);
			memcpy(g->data + (size_t)i * ETH_GSTRING_LEN, s,
			       strnlen(s, ETH_GSTRING_LEN));
		}
		note(&lg, "set=%u len=%d", ss, n);
		break;
	}
	case ETHTOOL_GSTATS: {
		struct ethtool_stats *st = (struct ethtool_stats *)ifr->ifr_data;
		int n = sset_count(d, ETH_SS_STATS, names);
		st->n_stats = (uint32_t)n;
		for (int i = 0; i < n; i++)
			st->data[i] = eth_stat(d, names[i]);
		note(&lg, "n_stats=%d", n);
		break;
	}
	case ETHTOOL_GPAUSEPARAM: {
		struct ethtool_pauseparam pp = {.cmd = ETHTOOL_GPAUSEPARAM};
		struct pausep p;
		eth_get_pause(d, &p);
		pp.autoneg = p.autoneg;
		pp.rx_pause = p.rx;
		pp.tx_pause = p.tx;
		memcpy(ifr->ifr_data, &pp, sizeof pp);
		note(&lg, "autoneg=%u rx=%u tx=%u", p.autoneg, p.rx, p.tx);
		break;
	}
	case ETHTOOL_SPAUSEPARAM: {
		struct ethtool_pauseparam pp;
		struct pausep p;
		memcpy(&pp, ifr->ifr_data, sizeof pp);
		/* the caller's word goes to the driver unnormalized (ethtool_set_pauseparam):
		 * ice and i40e compare it with AUTONEG_ENABLE/DISABLE, so 2 is neither */
		p.autoneg = pp.autoneg > 1 ? 2 : (uint8_t)pp.autoneg;
		p.rx = !!pp.rx_pause;
		p.tx = !!pp.tx_pause;
		err = eth_set_pause(d, &p, &lg);
		changed = 1;
		break;
	}
	case ETHTOOL_GPFLAGS:
	case ETHTOOL_SPFLAGS: {
		struct ethtool_value v;
		if (!ethmodel_of(d)->flags) {
			err = -EOPNOTSUPP;
			break;
		}
		memcpy(&v, ifr->ifr_data, sizeof v);
		if (cmd == ETHTOOL_GPFLAGS) {
			v.data = eth_flags(d);
			memcpy(ifr->ifr_data, &v, sizeof v);
			note(&lg, "flags=0x%x", v.data);
		} else {
			err = eth_set_flags(d, v.data, &lg);
			changed = 1;
		}
		break;
	}
	}
	if (set || err || env_on("LOSSLESS_DCBDRV_LOG_GETS")) {
		char res[32] = "ok";
		if (err)
			snprintf(res, sizeof res, "err=%d", err);
		logline(ifr->ifr_name, ioctl_name(cmd), "%s %s", res, lg.s);
	}
	if (changed) {
		if (!err)
			d->sets++;
		model_sync(d);
	}
	nic_put(d, changed);
	pthread_mutex_unlock(&mu);
	if (err) {
		errno = -err;
		*ret = -1;
	} else {
		*ret = 0;
	}
	return 1;
}
