/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the state file and its
 * lock, which make one NIC per interface of the processes that preload the
 * library with the same LOSSLESS_DCBDRV_DIR.
 *
 * Every request takes an exclusive flock on DIR/IF.lock, loads DIR/IF.state
 * when the file changed since this process last read or wrote it (device,
 * inode, size and mtime differ), runs, writes the state back after a set
 * (a temporary file renamed over the old one, so a reader never sees half),
 * and unlocks. A state file that disappears (ShimEnv::reset_nic removes it
 * under the lock) is a firmware reset: the next request starts from the
 * power-on state. Without LOSSLESS_DCBDRV_DIR each process keeps its own NIC.
 *
 * The file is `key=value` lines (../README.md); one table below says which
 * member of struct drv each key holds, and for the model's hardware ("hw."
 * and "fw." keys) which models hold it, so that a file holds what its model
 * uses and nothing else.
 */
#include "dcbdrv.h"

#define STATE_FORMAT "format=lossless-dcbdrv-state 3"

enum {
	K_DEC,     /* n unsigned numbers, decimal */
	K_HEX,     /* n unsigned numbers, 0x%02x */
	K_INT,     /* n ints, decimal */
	K_BITS,    /* 8 bytes written as one 64-bit hex number */
	K_DERIVED, /* written, not read: cee_pg*_up2tc */
	K_FWAPPS,  /* struct fwcfg's APP table */
};

struct field {
	const char *key;
	size_t off, size; /* the member's; K_DEC, K_HEX, K_INT: n elements of size / n bytes */
	uint8_t n, kind;
	unsigned models; /* bit per model that holds it; 0: every model */
};

#define B(m) (1u << (m))
#define F(key, member, n, kind, models) \
	{key, offsetof(struct drv, member), sizeof(((struct drv *)0)->member), n, kind, models}

#define ETS_FIELDS(p, base, models)                             \
	F(p "willing", base.willing, 1, K_DEC, models),         \
	F(p "cap", base.ets_cap, 1, K_DEC, models),             \
	F(p "cbs", base.cbs, 1, K_DEC, models),                 \
	F(p "tc_tx_bw", base.tc_tx_bw, 8, K_DEC, models),       \
	F(p "tc_rx_bw", base.tc_rx_bw, 8, K_DEC, models),       \
	F(p "tc_tsa", base.tc_tsa, 8, K_DEC, models),           \
	F(p "prio_tc", base.prio_tc, 8, K_DEC, models),         \
	F(p "tc_reco_bw", base.tc_reco_bw, 8, K_DEC, models),   \
	F(p "tc_reco_tsa", base.tc_reco_tsa, 8, K_DEC, models), \
	F(p "reco_prio_tc", base.reco_prio_tc, 8, K_DEC, models)

#define PFC_FIELDS(p, base, models)                 \
	F(p "cap", base.pfc_cap, 1, K_DEC, models), \
	F(p "en", base.pfc_en, 1, K_HEX, models),   \
	F(p "mbc", base.mbc, 1, K_DEC, models),     \
	F(p "delay", base.delay, 1, K_DEC, models)

#define PG_FIELDS(p, base, models)                       \
	F(p "tc_pgid", base.pgid, 8, K_DEC, models),     \
	F(p "tc_up_map", base.up_map, 8, K_HEX, models), \
	F(p "tc_strict", base.strict, 8, K_DEC, models), \
	F(p "tc_bw_pct", base.bw_pct, 8, K_DEC, models), \
	F(p "pg_bw_pct", base.pg_bw, 8, K_DEC, models)

#define FW_FIELDS(p, base, models)                              \
	ETS_FIELDS(p "ets_", base.ets, models),                 \
	F(p "pfc_cap", base.pfc_cap, 1, K_DEC, models),         \
	F(p "pfc_en", base.pfc_en, 1, K_HEX, models),           \
	F(p "pfc_willing", base.pfc_willing, 1, K_DEC, models), \
	F(p "dscp_mode", base.dscp_mode, 1, K_DEC, models),     \
	F(p "dscp", base.dscp, 64, K_DEC, models),              \
	F(p "dscp_mapped", base.mapped, 8, K_BITS, models),     \
	F(p "apps", base, 0, K_FWAPPS, models)

#define MLX5 B(M_MLX5)
#define ICE B(M_ICE)
#define I40E B(M_I40E)
#define BNXT B(M_BNXT)
#define HNS3 B(M_HNS3)
#define IXGBE B(M_IXGBE)

/* In file order, after the format, ifname, pid and model lines and before the
 * APP and trust lines (written by hand below). */
static const struct field fields[] = {
	F("fw_agent", fw_agent, 1, K_DEC, 0),
	F("gen", gen, 1, K_DEC, 0),
	F("sets", sets, 1, K_DEC, 0),
	F("set_all", set_all, 1, K_DEC, 0),
	F("link_resets", link_resets, 1, K_DEC, 0),
	F("dcb_state", dcb_state, 1, K_DEC, 0),
	F("dcbx", dcbx, 1, K_HEX, 0),
	F("numtcs_pg", numtcs_pg, 1, K_DEC, 0),
	F("numtcs_pfc", numtcs_pfc, 1, K_DEC, 0),
	F("cee_pfc_state", pfc_state, 1, K_DEC, 0),
	F("cee_pfc_up", pfc_up, 8, K_DEC, 0),
	PG_FIELDS("cee_pgtx_", pg[0], 0),
	F("cee_pgtx_up2tc", pg[0], 8, K_DERIVED, 0),
	PG_FIELDS("cee_pgrx_", pg[1], 0),
	F("cee_pgrx_up2tc", pg[1], 8, K_DERIVED, 0),
	F("cee_changed", changed, 1, K_INT, 0),
	ETS_FIELDS("ieee_ets_", ets, 0),
	PFC_FIELDS("ieee_pfc_", pfc, 0),
	/* the model's hardware */
	ETS_FIELDS("hw.ets_", hw.ets, MLX5 | BNXT | HNS3 | IXGBE),
	PFC_FIELDS("hw.pfc_", hw.pfc, MLX5 | BNXT | HNS3 | IXGBE),
	F("hw.has_ets", hw.has_ets, 1, K_DEC, BNXT | IXGBE),
	F("hw.has_pfc", hw.has_pfc, 1, K_DEC, BNXT | IXGBE),
	F("hw.num_tc", hw.num_tc, 1, K_DEC, BNXT | HNS3 | IXGBE),
	F("hw.trust_dscp", hw.trust, 1, K_DEC, MLX5 | HNS3),
	F("hw.dscp_cnt", hw.dscp_cnt, 1, K_DEC, MLX5 | HNS3),
	F("hw.fcoe_up", hw.fcoe_up, 1, K_DEC, IXGBE),
	F("hw.dcb_on", hw.dcb_on, 1, K_DEC, ICE | I40E),
	F("hw.fw_mode", hw.fw_mode, 1, K_DEC, MLX5),
	F("hw.tc_group", hw.tc_group, 8, K_DEC, MLX5),
	F("hw.tc_bw", hw.bw, 8, K_DEC, MLX5),
	F("hw.tc_qidx", hw.qidx, 8, K_DEC, BNXT),
	F("hw.pfc_map", hw.pfc_map, 1, K_HEX, HNS3),
	F("hw.dscp_prio", hw.dscp, 64, K_DEC, MLX5 | HNS3),
	FW_FIELDS("fw.local.", hw.local, ICE | I40E),
	FW_FIELDS("fw.want.", hw.want, ICE | I40E),
	PG_FIELDS("hw.cee_pgtx_", hw.cee_pg[0], IXGBE),
	PG_FIELDS("hw.cee_pgrx_", hw.cee_pg[1], IXGBE),
	F("hw.cee_pfc_up", hw.cee_pfc, 8, K_DEC, MLX5 | IXGBE),
	F("hw.cee_pfc_state", hw.cee_pfc_state, 1, K_DEC, MLX5 | IXGBE),
	/* ethtool (ethmodels.c); the statistics a test set follow the buffer keys */
	F("eth.pause_autoneg", eth.autoneg, 1, K_DEC, 0),
	F("eth.pause_rx", eth.rx, 1, K_DEC, 0),
	F("eth.pause_tx", eth.tx, 1, K_DEC, 0),
	F("eth.priv_flags", eth.priv, 1, K_HEX, 0),
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

/* After the trust line: buffer=0|1, then, with a DCB buffer, its keys. */
static const struct field buffer_fields[] = {
	F("buffer", has_buffer, 1, K_INT, 0),
	F("buffer_prio2buffer", buf.prio2buffer, 8, K_DEC, 0),
	F("buffer_size", buf.buffer_size, 8, K_DEC, 0),
	F("buffer_total", buf.total_size, 1, K_DEC, 0),
};
#define NBUFFER_FIELDS ((int)(sizeof buffer_fields / sizeof buffer_fields[0]))

/* Element i of a member of w-byte elements (1, 2 or 4), and setting it. */
static unsigned long long elem_get(const unsigned char *p, size_t w, int i)
{
	uint16_t v16;
	uint32_t v32;

	if (w == 2) {
		memcpy(&v16, p + 2 * i, 2);
		return v16;
	}
	if (w == 4) {
		memcpy(&v32, p + 4 * i, 4);
		return v32;
	}
	return p[i];
}

static void elem_set(unsigned char *p, size_t w, int i, unsigned long long v)
{
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	if (w == 2)
		memcpy(p + 2 * i, &v16, 2);
	else if (w == 4)
		memcpy(p + 4 * i, &v32, 4);
	else
		p[i] = (uint8_t)v;
}

/* The state file as this process last read or wrote it. */
static void seen(struct drv *d, const struct stat *st)
{
	d->seen_dev = st->st_dev;
	d->seen_ino = st->st_ino;
	d->seen_size = st->st_size;
	d->seen_mtime = st->st_mtim;
	d->known = 1;
}

/* ---- writing ------------------------------------------------------------- */

static void write_field(FILE *f, const struct drv *d, const struct field *fl)
{
	const unsigned char *p = (const unsigned char *)d + fl->off;

	if (fl->models && !(fl->models & B(d->model)))
		return;
	fprintf(f, "%s=", fl->key);
	switch (fl->kind) {
	case K_DEC:
	case K_HEX:
	case K_INT:
		for (int i = 0; i < fl->n; i++) {
			unsigned long long v = elem_get(p, fl->size / fl->n, i);
			if (fl->kind == K_HEX)
				fprintf(f, "%s0x%02llx", i ? "," : "", v);
			else if (fl->kind == K_INT)
				fprintf(f, "%s%d", i ? "," : "", (int)v);
			else
				fprintf(f, "%s%llu", i ? "," : "", v);
		}
		break;
	case K_BITS: {
		unsigned long long v = 0;
		for (int i = 7; i >= 0; i--)
			v = v << 8 | p[i];
		fprintf(f, "0x%016llx", v);
		break;
	}
	case K_DERIVED: { /* per priority: the TC whose map holds it (255: none) */
		const struct pg *pg = (const struct pg *)p;
		for (int up = 0; up < 8; up++) {
			int tc = UNDEF;
			for (int t = 0; t < 8 && tc == UNDEF; t++)
				if (pg->up_map[t] & (1u << up))
					tc = t;
			fprintf(f, "%s%d", up ? "," : "", tc);
		}
		break;
	}
	case K_FWAPPS: {
		const struct fwcfg *c = (const struct fwcfg *)p;
		for (int i = 0; i < c->napp && i < FWAPPS; i++)
			fprintf(f, "%s%u,%u,%u", i ? ";" : "", c->app[i].sel, c->app[i].prio,
				c->app[i].proto);
		break;
	}
	}
	fputc('\n', f);
}

static void write_state(struct drv *d)
{
	const char *dir = getenv("LOSSLESS_DCBDRV_DIR");
	char path[4096], tmp[4200];
	struct stat st;
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof path, "%s/%s.state", dir, d->ifname);
	snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return;
	d->gen++;
	fprintf(f, "%s\n", STATE_FORMAT);
	fprintf(f, "ifname=%s\npid=%d\nmodel=%s\n", d->ifname, (int)getpid(),
		models[d->model]->name);
	for (int i = 0; i < NFIELDS; i++)
		write_field(f, d, &fields[i]);
	/* the kernel's APP table, in the order added */
	for (int i = 0; i < d->n_app; i++)
		if (d->app[i].cee)
			fprintf(f, "cee_app=%u,0x%04x,0x%02x\n", d->app[i].selector,
				d->app[i].protocol, d->app[i].priority);
		else
			fprintf(f, "ieee_app=%u,%u,%u\n", d->app[i].selector, d->app[i].priority,
				d->app[i].protocol);
	fprintf(f, "app_trust=");
	for (int i = 0; i < d->n_trust; i++)
		fprintf(f, "%s%u", i ? "," : "", d->trust[i]);
	fputc('\n', f);
	for (int i = 0; i < (d->has_buffer ? NBUFFER_FIELDS : 1); i++)
		write_field(f, d, &buffer_fields[i]);
	for (int i = 0; i < d->eth.nstat; i++)
		fprintf(f, "eth.stat.%.32s=%llu\n", d->eth.stat[i].name,
			(unsigned long long)d->eth.stat[i].value);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return;
	}
	if (stat(path, &st) == 0)
		seen(d, &st);
}

/* ---- reading ------------------------------------------------------------- */

/* Up to n numbers, comma-separated (0x.. hex); returns how many. */
static int nums(const char *s, unsigned long long *out, int n)
{
	int i = 0;

	while (i < n && *s) {
		char *end;
		out[i++] = strtoull(s, &end, 0);
		if (end == s || (*end != ',' && *end != '\0'))
			return -1;
		s = *end == ',' ? end + 1 : end;
	}
	return i;
}

static int read_field(struct drv *d, const struct field *fl, const char *v)
{
	unsigned char *p = (unsigned char *)d + fl->off;
	unsigned long long x[64];

	if (fl->kind == K_DERIVED)
		return 0;
	if (fl->kind == K_FWAPPS) {
		struct fwcfg *c = (struct fwcfg *)p;
		c->napp = 0;
		while (*v && c->napp < FWAPPS) {
			unsigned sel, prio, proto;
			if (sscanf(v, "%u,%u,%u", &sel, &prio, &proto) != 3)
				return -1;
			c->app[c->napp++] = (struct fwapp){(uint16_t)proto, (uint8_t)sel,
							   (uint8_t)prio};
			v = strchr(v, ';');
			if (!v)
				break;
			v++;
		}
		return 0;
	}
	if (fl->kind == K_BITS) {
		if (nums(v, x, 1) != 1)
			return -1;
		for (int i = 0; i < 8; i++)
			p[i] = (uint8_t)(x[0] >> (8 * i));
		return 0;
	}
	if (nums(v, x, fl->n) != fl->n)
		return -1;
	for (int i = 0; i < fl->n; i++)
		elem_set(p, fl->size / fl->n, i, x[i]);
	return 0;
}

/* One line of the file; -1 when it does not parse. */
static int read_line(struct drv *d, const char *k, const char *v)
{
	unsigned a, b, c;

	if (strcmp(k, "model") == 0) {
		int m = model_by_name(v);
		if (m < 0)
			return -1;
		d->model = m;
	} else if (strcmp(k, "ieee_app") == 0 || strcmp(k, "cee_app") == 0) {
		int cee = k[0] == 'c';
		if (sscanf(v, cee ? "%u,%x,%x" : "%u,%u,%u", &a, &b, &c) != 3 || d->n_app == MAXAPP)
			return -1;
		d->app[d->n_app++] = cee ? (struct app){(uint8_t)a, (uint8_t)c, (uint16_t)b, 1}
					 : (struct app){(uint8_t)a, (uint8_t)b, (uint16_t)c, 0};
	} else if (strncmp(k, "eth.stat.", 9) == 0) {
		/* a statistic's value, as ShimEnv::set_stat writes it too */
		char *end;
		unsigned long long x = strtoull(v, &end, 10);
		if (!k[9] || strlen(k + 9) >= sizeof d->eth.stat[0].name || end == v || *end ||
		    d->eth.nstat == ETHSTATS)
			return -1;
		snprintf(d->eth.stat[d->eth.nstat].name, sizeof d->eth.stat[0].name, "%s", k + 9);
		d->eth.stat[d->eth.nstat++].value = x;
	} else if (strcmp(k, "app_trust") == 0) {
		const char *s = v;
		d->n_trust = 0;
		while (*s && d->n_trust < 256) {
			char *end;
			unsigned long t = strtoul(s, &end, 0);
			if (end == s)
				return -1;
			d->trust[d->n_trust++] = (uint8_t)t;
			s = *end == ',' ? end + 1 : end;
		}
	} else {
		for (int i = 0; i < NFIELDS; i++)
			if (strcmp(k, fields[i].key) == 0)
				return read_field(d, &fields[i], v);
		for (int i = 0; i < NBUFFER_FIELDS; i++)
			if (strcmp(k, buffer_fields[i].key) == 0)
				return read_field(d, &buffer_fields[i], v);
		/* format, ifname, pid and keys of other versions: ignored */
	}
	return 0;
}

/* Replaces d's NIC with the one in the file; 0, or -1 (d left as it was). */
static int load_state(struct drv *d, const char *path)
{
	static char text[65536];
	struct drv *next = malloc(sizeof *next);
	size_t len;
	char *line, *save = NULL;
	FILE *f = fopen(path, "re");
	int ok = 0;

	if (!f || !next) {
		if (f)
			fclose(f);
		free(next);
		return -1;
	}
	len = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[len] = '\0';
	*next = *d;
	drv_power_on(next);
	next->n_app = next->n_trust = next->has_buffer = 0;
	next->hw.local.napp = next->hw.want.napp = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');
		if (!ok) {
			if (strcmp(line, STATE_FORMAT) != 0)
				break;
			ok = 1;
			continue;
		}
		if (!eq || (*eq = '\0', read_line(next, line, eq + 1) < 0)) {
			if (eq)
				*eq = '=';
			logline(d->ifname, "state-file", "unreadable line=%.200s", line);
			ok = 0;
			break;
		}
	}
	if (ok) {
		model_sync(next);
		*d = *next;
	}
	free(next);
	return ok ? 0 : -1;
}

/* ---- the shared NIC ------------------------------------------------------ */

static struct drv drvs[MAXDRV];
static int ndrv;

struct drv *nic_get(const char *ifname)
{
	const char *dir = getenv("LOSSLESS_DCBDRV_DIR");
	char path[4096];
	struct drv *d = NULL;
	struct stat st;
	int fresh = 0;

	for (int i = 0; i < ndrv && !d; i++)
		if (strcmp(drvs[i].ifname, ifname) == 0)
			d = &drvs[i];
	if (!d) {
		if (ndrv == MAXDRV)
			return NULL;
		d = &drvs[ndrv++];
		memset(d, 0, sizeof *d);
		snprintf(d->ifname, sizeof d->ifname, "%s", ifname);
		d->lockfd = -1;
		fresh = 1;
	}
	if (!dir) {
		if (fresh)
			drv_power_on(d);
		return d;
	}
	snprintf(path, sizeof path, "%s/%s.lock", dir, ifname);
	d->lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (d->lockfd >= 0)
		while (flock(d->lockfd, LOCK_EX) < 0 && errno == EINTR)
			;
	snprintf(path, sizeof path, "%s/%s.state", dir, ifname);
	if (stat(path, &st) == 0) {
		if (fresh || !d->known || st.st_dev != d->seen_dev || st.st_ino != d->seen_ino ||
		    st.st_size != d->seen_size || st.st_mtim.tv_sec != d->seen_mtime.tv_sec ||
		    st.st_mtim.tv_nsec != d->seen_mtime.tv_nsec) {
			if (load_state(d, path) < 0 && fresh)
				drv_power_on(d);
			seen(d, &st);
		}
	} else if (fresh || d->known) {
		/* never written, or removed: a firmware reset */
		d->known = 0;
		drv_power_on(d);
	}
	return d;
}

void nic_put(struct drv *d, int write)
{
	if (write)
		write_state(d);
	if (d->lockfd >= 0) {
		flock(d->lockfd, LOCK_UN);
		r_close(d->lockfd);
		d->lockfd = -1;
	}
}
