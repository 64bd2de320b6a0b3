/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the log and the state file
 * a test reads, and the emulated interfaces: which they are and the driver
 * state each starts with (DCB on, DCB buffer, APP entries from the
 * environment; PFC counters from DIR/IF.pfc_counters).
 */
#include "dcbdrv.h"

/* ---- log and state file ------------------------------------------------ */

int env_on(const char *k)
{
	const char *v = getenv(k);
	return v && *v && strcmp(v, "0") != 0;
}

void logline(const char *ifname, const char *cmd, const char *fmt, ...)
{
	const char *dir = getenv("LOSSLESS_DCBDRV_DIR");
	char path[4096], line[8192];
	struct timeval tv;
	va_list ap;
	int n, fd;

	if (!dir)
		return;
	gettimeofday(&tv, NULL);
	n = snprintf(line, sizeof line, "%ld.%03ld %d %s %s ", (long)tv.tv_sec,
		     (long)tv.tv_usec / 1000, (int)getpid(), ifname, cmd);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof line - n - 2, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof line - 2)
		n = sizeof line - 2;
	while (n > 0 && line[n - 1] == ' ')
		n--;
	line[n++] = '\n';
	snprintf(path, sizeof path, "%s/dcbdrv.log", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, n) < 0) {
		/* nothing to do: the log is best effort */
	}
	r_close(fd);
}

static void list8(FILE *f, const char *key, const uint8_t *v, int hex)
{
	fprintf(f, "%s=", key);
	for (int i = 0; i < 8; i++)
		fprintf(f, hex ? "%s0x%02x" : "%s%u", i ? "," : "", v[i]);
	fputc('\n', f);
}

void write_state(const struct drv *d)
{
	const char *dir = getenv("LOSSLESS_DCBDRV_DIR");
	char path[4096], tmp[4200];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof path, "%s/%s.state", dir, d->ifname);
	snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "format=lossless-dcbdrv-state 1\n");
	fprintf(f, "ifname=%s\npid=%d\nsets=%u\nset_all=%u\n", d->ifname, (int)getpid(),
		d->sets, d->set_all);
	fprintf(f, "dcb_state=%u\ndcbx=0x%02x\nnumtcs_pg=%u\nnumtcs_pfc=%u\n", d->dcb_state,
		d->dcbx, d->numtcs_pg, d->numtcs_pfc);
	fprintf(f, "cee_pfc_state=%u\n", d->pfc_state);
	list8(f, "cee_pfc_up", d->pfc_up, 0);
	for (int dir_ = 0; dir_ < 2; dir_++) {
		const struct pg *p = &d->pg[dir_];
		const char *n = dir_ ? "cee_pgrx" : "cee_pgtx";
		char key[64];
		uint8_t up2tc[8];

		snprintf(key, sizeof key, "%s_tc_pgid", n);
		list8(f, key, p->pgid, 0);
		snprintf(key, sizeof key, "%s_tc_up_map", n);
		list8(f, key, p->up_map, 1);
		snprintf(key, sizeof key, "%s_tc_strict", n);
		list8(f, key, p->strict, 0);
		snprintf(key, sizeof key, "%s_tc_bw_pct", n);
		list8(f, key, p->bw_pct, 0);
		snprintf(key, sizeof key, "%s_pg_bw_pct", n);
		list8(f, key, p->pg_bw, 0);
		for (int up = 0; up < 8; up++) {
			up2tc[up] = UNDEF;
			for (int tc = 0; tc < 8; tc++)
				if (p->up_map[tc] & (1u << up)) {
					up2tc[up] = tc;
					break;
				}
		}
		snprintf(key, sizeof key, "%s_up2tc", n);
		list8(f, key, up2tc, 0);
	}
	for (int i = 0; i < d->n_app; i++)
		if (d->app[i].cee)
			fprintf(f, "cee_app=%u,0x%04x,0x%02x\n", d->app[i].selector,
				d->app[i].protocol, d->app[i].priority);
	fprintf(f, "ieee_ets_willing=%u\nieee_ets_cap=%u\nieee_ets_cbs=%u\n", d->ets.willing,
		d->ets.ets_cap, d->ets.cbs);
	list8(f, "ieee_ets_tc_tx_bw", d->ets.tc_tx_bw, 0);
	list8(f, "ieee_ets_tc_rx_bw", d->ets.tc_rx_bw, 0);
	list8(f, "ieee_ets_tc_tsa", d->ets.tc_tsa, 0);
	list8(f, "ieee_ets_prio_tc", d->ets.prio_tc, 0);
	list8(f, "ieee_ets_tc_reco_bw", d->ets.tc_reco_bw, 0);
	list8(f, "ieee_ets_tc_reco_tsa", d->ets.tc_reco_tsa, 0);
	list8(f, "ieee_ets_reco_prio_tc", d->ets.reco_prio_tc, 0);
	fprintf(f, "ieee_pfc_cap=%u\nieee_pfc_en=0x%02x\nieee_pfc_mbc=%u\nieee_pfc_delay=%u\n",
		d->pfc.pfc_cap, d->pfc.pfc_en, d->pfc.mbc, d->pfc.delay);
	for (int i = 0; i < d->n_app; i++)
		if (!d->app[i].cee)
			fprintf(f, "ieee_app=%u,%u,%u\n", d->app[i].selector, d->app[i].priority,
				d->app[i].protocol);
	fprintf(f, "app_trust=");
	for (int i = 0; i < d->n_trust; i++)
		fprintf(f, "%s%u", i ? "," : "", d->trust[i]);
	fprintf(f, "\nbuffer=%d\n", d->has_buffer);
	if (d->has_buffer) {
		list8(f, "buffer_prio2buffer", d->buf.prio2buffer, 0);
		fprintf(f, "buffer_size=");
		for (int i = 0; i < 8; i++)
			fprintf(f, "%s%u", i ? "," : "", d->buf.buffer_size[i]);
		fprintf(f, "\nbuffer_total=%u\n", d->buf.total_size);
	}
	if (fclose(f) == 0)
		rename(tmp, path);
	else
		unlink(tmp);
}

/* ---- interfaces --------------------------------------------------------- */

static struct drv drvs[MAXDRV];
static int ndrv;

int emulated(const char *ifname)
{
	const char *list = getenv("LOSSLESS_DCBDRV_IFACES");
	size_t n = strlen(ifname);

	if (!list)
		return strcmp(ifname, "lo") != 0;
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && memcmp(p, ifname, n) == 0)
			return 1;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

static void parse_list_u32(const char *s, uint32_t *out, int n)
{
	for (int i = 0; i < n && s && *s; i++) {
		out[i] = (uint32_t)strtoul(s, (char **)&s, 0);
		if (*s == ',')
			s++;
		else
			break;
	}
}

static void init_buffer(struct drv *d)
{
	const char *v = getenv("LOSSLESS_DCBDRV_BUFFER");
	uint32_t tmp[8] = {0};

	if (!v || !*v || strcmp(v, "0") == 0)
		return;
	d->has_buffer = 1;
	/* defaults: one 256 KiB buffer holds every priority, 1 MiB in all */
	d->buf.buffer_size[0] = 262144;
	d->buf.total_size = 1048576;
	for (const char *p = v; p && *p; p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL) {
		if (strncmp(p, "total=", 6) == 0)
			d->buf.total_size = (uint32_t)strtoul(p + 6, NULL, 0);
		else if (strncmp(p, "size=", 5) == 0)
			parse_list_u32(p + 5, d->buf.buffer_size, 8);
		else if (strncmp(p, "prio2buffer=", 12) == 0) {
			parse_list_u32(p + 12, tmp, 8);
			for (int i = 0; i < 8; i++)
				d->buf.prio2buffer[i] = (uint8_t)tmp[i];
		}
	}
}

/* APP entries the NIC holds before this process starts, as another tool (lldptool,
 * `dcb app add`) would have left them: LOSSLESS_DCBDRV_APPS="SEL,PRIO,PROTO;..." */
static void init_apps(struct drv *d)
{
	const char *p = getenv("LOSSLESS_DCBDRV_APPS");

	while (p && *p && d->n_app < MAXAPP) {
		char *end;
		unsigned long sel = strtoul(p, &end, 0), prio, proto;

		if (*end != ',')
			return;
		prio = strtoul(end + 1, &end, 0);
		if (*end != ',')
			return;
		proto = strtoul(end + 1, &end, 0);
		d->app[d->n_app++] = (struct app){.selector = (uint8_t)sel,
						  .priority = (uint8_t)prio,
						  .protocol = (uint16_t)proto};
		p = *end == ';' ? end + 1 : NULL;
	}
}

struct drv *drv_get(const char *ifname)
{
	struct drv *d;

	for (int i = 0; i < ndrv; i++)
		if (strcmp(drvs[i].ifname, ifname) == 0)
			return &drvs[i];
	if (ndrv == MAXDRV)
		return NULL;
	d = &drvs[ndrv++];
	memset(d, 0, sizeof *d);
	snprintf(d->ifname, sizeof d->ifname, "%s", ifname);
	d->dcb_state = env_on("LOSSLESS_DCBDRV_DCB_ON");
	d->dcbx = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_CEE | DCB_CAP_DCBX_VER_IEEE;
	d->numtcs_pg = d->numtcs_pfc = 8;
	for (int dir = 0; dir < 2; dir++)
		for (int i = 0; i < 8; i++) {
			d->pg[dir].pgid[i] = i;
			d->pg[dir].up_map[i] = 1u << i;
			d->pg[dir].bw_pct[i] = 100;
			d->pg[dir].pg_bw[i] = i < 4 ? 13 : 12;
		}
	d->ets.ets_cap = 8;
	d->ets.tc_tsa[0] = IEEE_8021QAZ_TSA_ETS;
	d->ets.tc_tx_bw[0] = d->ets.tc_rx_bw[0] = 100;
	for (int i = 1; i < 8; i++)
		d->ets.tc_tsa[i] = IEEE_8021QAZ_TSA_ETS;
	d->pfc.pfc_cap = 8;
	init_buffer(d);
	init_apps(d);
	return d;
}

/* The PFC frame counters a driver would report: read on every IEEE_GET from
 * DIR/IF.pfc_counters ("requests=a,b,..,h" and "indications=a,..,h" lines),
 * zero without the file. Lets a test play traffic statistics. */
void read_counters(const struct drv *d, struct ieee_pfc *p)
{
	const char *dir = getenv("LOSSLESS_DCBDRV_DIR");
	char path[4096], line[512];
	FILE *f;

	memset(p->requests, 0, sizeof p->requests);
	memset(p->indications, 0, sizeof p->indications);
	if (!dir)
		return;
	snprintf(path, sizeof path, "%s/%s.pfc_counters", dir, d->ifname);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		__u64 *out = NULL;
		char *s;
		if (strncmp(line, "requests=", 9) == 0)
			out = p->requests, s = line + 9;
		else if (strncmp(line, "indications=", 12) == 0)
			out = p->indications, s = line + 12;
		else
			continue;
		for (int i = 0; i < 8 && *s; i++) {
			out[i] = strtoull(s, &s, 0);
			if (*s != ',')
				break;
			s++;
		}
	}
	fclose(f);
}
