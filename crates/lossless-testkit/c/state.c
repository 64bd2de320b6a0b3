/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the log a test reads, the
 * details of a log line, and the emulated interfaces: which they are and the
 * power-on state of their NIC (model, firmware agent, DCB on, DCB buffer, APP
 * entries from the environment; PFC counters from DIR/IF.pfc_counters).
 */
#include "dcbdrv.h"

/* ---- environment and log ----------------------------------------------- */

int env_on(const char *k)
{
	const char *v = getenv(k);
	return v && *v && strcmp(v, "0") != 0;
}

/* 1 when the comma-separated list names ifname. */
static int list_names(const char *list, const char *ifname)
{
	size_t n = strlen(ifname);

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

/* 1 when the variable is "1", or a comma-separated list naming ifname. */
int env_lists(const char *k, const char *ifname)
{
	const char *v = getenv(k);

	if (!v || !*v || strcmp(v, "0") == 0)
		return 0;
	return strcmp(v, "1") == 0 || list_names(v, ifname);
}

/* Appends "key=value" words to a log line's details. */
void note(struct note *n, const char *fmt, ...)
{
	size_t len = strlen(n->s);
	va_list ap;

	if (len + 2 >= sizeof n->s)
		return;
	if (len)
		n->s[len++] = ' ';
	va_start(ap, fmt);
	vsnprintf(n->s + len, sizeof n->s - len, fmt, ap);
	va_end(ap);
}

void note8(struct note *n, const char *key, const uint8_t *v)
{
	note(n, "%s=%u,%u,%u,%u,%u,%u,%u,%u", key, v[0], v[1], v[2], v[3], v[4], v[5], v[6],
	     v[7]);
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

/* ---- interfaces --------------------------------------------------------- */

int emulated(const char *ifname)
{
	const char *list = getenv("LOSSLESS_DCBDRV_IFACES");

	if (!list)
		return strcmp(ifname, "lo") != 0;
	return list_names(list, ifname);
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

/* The DCB buffer from LOSSLESS_DCBDRV_BUFFER; with `always` (a driver that has
 * the buffer ops whatever the environment says) the defaults without it. */
static void init_buffer(struct drv *d, int always)
{
	const char *v = getenv("LOSSLESS_DCBDRV_BUFFER");
	uint32_t tmp[8] = {0};

	if (!v || !*v || strcmp(v, "0") == 0) {
		if (!always)
			return;
		v = "1";
	}
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

/* The power-on state of d's NIC: the generic driver's, then the model's. The
 * per-process fields (statefile.c's view of the shared file) are kept. */
void drv_power_on(struct drv *d)
{
	static int warned;
	struct drv keep = *d;
	const char *name = getenv("LOSSLESS_DCBDRV_MODEL");

	memset(d, 0, sizeof *d);
	memcpy(d->ifname, keep.ifname, sizeof d->ifname);
	d->lockfd = keep.lockfd;
	d->known = keep.known;
	d->seen_dev = keep.seen_dev;
	d->seen_ino = keep.seen_ino;
	d->seen_size = keep.seen_size;
	d->seen_mtime = keep.seen_mtime;

	d->model = name && *name ? model_by_name(name) : M_GENERIC;
	if (d->model < 0) {
		if (!warned++)
			logline("-", "model", "unknown=%s using=generic", name);
		d->model = M_GENERIC;
	}
	d->fw_agent = (uint8_t)env_lists("LOSSLESS_DCBDRV_FW_AGENT", d->ifname);
	d->dcb_state = (uint8_t)env_on("LOSSLESS_DCBDRV_DCB_ON");
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
	init_buffer(d, d->model == M_MLX5);
	init_apps(d);
	if (models[d->model]->init)
		models[d->model]->init(d);
	eth_power_on(d);
	model_sync(d);
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
