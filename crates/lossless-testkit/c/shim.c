/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the shim between a process
 * and its NETLINK_ROUTE sockets. The real libc calls; per-socket queues of
 * the replies the driver built; the request path (is this a dcbnl request
 * for an emulated interface? answer it); the wrapped libc calls, the only
 * symbols the library exports; and the constructor run when it is loaded.
 */
#include "dcbdrv.h"

/* Guards the reply queues and the driver state (nic_get() and what it returns). */
pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- the real libc calls ---------------------------------------------- */

static ssize_t (*r_sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
static ssize_t (*r_send)(int, const void *, size_t, int);
static ssize_t (*r_sendmsg)(int, const struct msghdr *, int);
static ssize_t (*r_recv)(int, void *, size_t, int);
static ssize_t (*r_recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
static ssize_t (*r_recvmsg)(int, struct msghdr *, int);
static ssize_t (*r_read)(int, void *, size_t);
int (*r_close)(int);
int (*r_ioctl)(int, unsigned long, ...);

static void *real(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (!p) {
		fprintf(stderr, "dcbdrv: no %s in libc\n", name);
		abort();
	}
	return p;
}

static void resolve(void)
{
	if (r_close)
		return;
	r_sendto = real("sendto");
	r_send = real("send");
	r_sendmsg = real("sendmsg");
	r_recv = real("recv");
	r_recvfrom = real("recvfrom");
	r_recvmsg = real("recvmsg");
	r_read = real("read");
	r_ioctl = real("ioctl");
	r_close = real("close");
}

/* ---- reply queues -------------------------------------------------------- */

struct dgram {
	struct dgram *next;
	size_t len;
	unsigned char data[];
};

struct fdq {
	int fd;
	struct dgram *head, *tail;
	struct fdq *next;
};

static struct fdq *queues;
static volatile int pending; /* datagrams queued on any fd: fast path */

void enqueue(int fd, const void *data, size_t len)
{
	struct fdq *q;
	struct dgram *g = malloc(sizeof *g + len);

	if (!g)
		return;
	g->next = NULL;
	g->len = len;
	memcpy(g->data, data, len);
	for (q = queues; q && q->fd != fd; q = q->next)
		;
	if (!q) {
		q = calloc(1, sizeof *q);
		if (!q) {
			free(g);
			return;
		}
		q->fd = fd;
		q->next = queues;
		queues = q;
	}
	if (q->tail)
		q->tail->next = g;
	else
		q->head = g;
	q->tail = g;
	__atomic_add_fetch(&pending, 1, __ATOMIC_SEQ_CST);
}

static void drop_queue(int fd)
{
	for (struct fdq **pq = &queues; *pq; pq = &(*pq)->next) {
		struct fdq *q = *pq;
		if (q->fd != fd)
			continue;
		while (q->head) {
			struct dgram *g = q->head;
			q->head = g->next;
			free(g);
			__atomic_sub_fetch(&pending, 1, __ATOMIC_SEQ_CST);
		}
		*pq = q->next;
		free(q);
		return;
	}
}

/* Takes (or peeks) the next queued datagram of fd into iov: returns its
 * length, or -1 when nothing is queued for fd. */
static ssize_t take(int fd, const struct iovec *iov, size_t iovlen, int flags, int *truncated)
{
	struct fdq *q;
	struct dgram *g;
	size_t off = 0;

	if (!__atomic_load_n(&pending, __ATOMIC_SEQ_CST))
		return -1;
	pthread_mutex_lock(&mu);
	for (q = queues; q && q->fd != fd; q = q->next)
		;
	if (!q || !q->head) {
		pthread_mutex_unlock(&mu);
		return -1;
	}
	g = q->head;
	for (size_t i = 0; i < iovlen && off < g->len; i++) {
		size_t n = g->len - off < iov[i].iov_len ? g->len - off : iov[i].iov_len;
		memcpy(iov[i].iov_base, g->data + off, n);
		off += n;
	}
	*truncated = off < g->len;
	ssize_t len = (ssize_t)g->len;
	if (!(flags & MSG_PEEK)) {
		q->head = g->next;
		if (!q->head)
			q->tail = NULL;
		free(g);
		__atomic_sub_fetch(&pending, 1, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&mu);
	return (flags & MSG_TRUNC) ? len : (ssize_t)off;
}

/* ---- the request path ---------------------------------------------------- */

static int sock_is_rtnl(int fd)
{
	int v;
	socklen_t l = sizeof v;

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &l) < 0 || v != AF_NETLINK)
		return 0;
	l = sizeof v;
	return getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &l) == 0 && v == NETLINK_ROUTE;
}

static void queue_error(int fd, const struct nlmsghdr *req, int err, uint32_t portid)
{
	unsigned char buf[NLMSG_HDRLEN + sizeof(struct nlmsgerr) + 16384];
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct nlmsgerr *e = NLMSG_DATA(h);
	int cap = 0;
	socklen_t l = sizeof cap;
	size_t echo = err ? req->nlmsg_len : NLMSG_HDRLEN;

	getsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &cap, &l);
	if (cap || echo > 16384 + NLMSG_HDRLEN)
		echo = NLMSG_HDRLEN;
	memset(buf, 0, NLMSG_HDRLEN + sizeof *e);
	h->nlmsg_type = NLMSG_ERROR;
	h->nlmsg_flags = echo == NLMSG_HDRLEN ? NLM_F_CAPPED : 0;
	h->nlmsg_seq = req->nlmsg_seq;
	h->nlmsg_pid = portid;
	e->error = err;
	memcpy(&e->msg, req, echo);
	h->nlmsg_len = NLMSG_HDRLEN + sizeof *e - sizeof e->msg + echo;
	enqueue(fd, buf, h->nlmsg_len);
}

/*
 * Answers `buf` when it is one dcbnl request for an emulated interface sent
 * to the kernel on a NETLINK_ROUTE socket: returns 1 (handled), else 0.
 */
static int intercept(int fd, const void *buf, size_t len, const struct sockaddr *to)
{
	const struct nlmsghdr *req = buf;
	const struct dcbmsg *dm;
	const struct nlattr *tb[DCB_ATTR_MAX + 1];
	const char *ifname;
	struct sockaddr_nl self;
	socklen_t sl = sizeof self;
	static struct mb r; /* under mu */
	static struct note lg; /* under mu */
	int err, status, cmd;
	struct drv *d;

	if (eth_intercept(fd, buf, len, to)) /* ethtool's generic netlink (ethtool.c) */
		return 1;
	if (!buf || len < NLMSG_HDRLEN + sizeof *dm || req->nlmsg_len > len ||
	    NLMSG_ALIGN(req->nlmsg_len) < len ||
	    req->nlmsg_len < NLMSG_HDRLEN + sizeof *dm ||
	    (req->nlmsg_type != RTM_GETDCB && req->nlmsg_type != RTM_SETDCB) ||
	    !(req->nlmsg_flags & NLM_F_REQUEST))
		return 0;
	if (to && (to->sa_family != AF_NETLINK || ((const struct sockaddr_nl *)to)->nl_pid != 0))
		return 0;
	if (!sock_is_rtnl(fd))
		return 0;
	dm = NLMSG_DATA(req);
	cmd = dm->cmd;
	if (cmd <= DCB_CMD_UNDEFINED || cmd >= ncmd)
		return 0;
	if (parse((const char *)dm + NLMSG_ALIGN(sizeof *dm),
		  (int)req->nlmsg_len - (int)NLMSG_HDRLEN - (int)NLMSG_ALIGN(sizeof *dm), tb,
		  DCB_ATTR_MAX) < 0)
		return 0; /* the kernel's parse error */
	if (!tb[DCB_ATTR_IFNAME] || DLEN(tb[DCB_ATTR_IFNAME]) < 1 ||
	    DLEN(tb[DCB_ATTR_IFNAME]) > IFNAMSIZ ||
	    !memchr(DATA(tb[DCB_ATTR_IFNAME]), 0, DLEN(tb[DCB_ATTR_IFNAME])))
		return 0;
	ifname = (const char *)DATA(tb[DCB_ATTR_IFNAME]);
	if (!emulated(ifname) || if_nametoindex(ifname) == 0)
		return 0; /* a real device, or none: the kernel answers */
	if (getsockname(fd, (struct sockaddr *)&self, &sl) < 0)
		self.nl_pid = 0;

	pthread_mutex_lock(&mu);
	lg.s[0] = '\0';
	d = nic_get(ifname);
	if (!d) {
		pthread_mutex_unlock(&mu);
		return 0;
	}
	memset(&r, 0, NLMSG_HDRLEN + NLMSG_ALIGN(sizeof *dm));
	r.len = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof *dm);
	if (cmd == DCB_CMD_IEEE_GET)
		put(&r, DCB_ATTR_IFNAME, ifname, strlen(ifname) + 1);
	err = run(d, cmd, tb, &r, &status, &lg);
	if (err) {
		queue_error(fd, req, err, self.nl_pid);
	} else {
		struct nlmsghdr *h = (struct nlmsghdr *)r.b;
		struct dcbmsg *rd = NLMSG_DATA(h);
		h->nlmsg_len = (uint32_t)r.len;
		h->nlmsg_type = (uint16_t)reply_type(cmd);
		h->nlmsg_flags = req->nlmsg_flags;
		h->nlmsg_seq = req->nlmsg_seq;
		h->nlmsg_pid = self.nl_pid;
		rd->dcb_family = AF_UNSPEC;
		rd->cmd = (uint8_t)cmd;
		rd->dcb_pad = 0;
		enqueue(fd, r.b, r.len);
		if (req->nlmsg_flags & NLM_F_ACK)
			queue_error(fd, req, 0, self.nl_pid);
	}
	/* The log line goes out before the state file: a reader that sees the new state
	 * also sees the command that made it. */
	if (err || reply_type(cmd) == RTM_SETDCB || env_on("LOSSLESS_DCBDRV_LOG_GETS")) {
		char res[32];
		if (err)
			snprintf(res, sizeof res, "err=%d", err);
		else if (status > 0 || status < -1)
			snprintf(res, sizeof res, "status=%d", status);
		else
			snprintf(res, sizeof res, "ok");
		logline(ifname, cmd_names[cmd], "%s %s", res, lg.s);
	}
	if (reply_type(cmd) == RTM_SETDCB && !err) {
		d->sets++;
		if (cmd == DCB_CMD_SET_ALL)
			d->set_all++;
		else if (d->model == M_GENERIC)
			d->changed = 1;
		model_sync(d);
	}
	nic_put(d, reply_type(cmd) == RTM_SETDCB && !err);
	pthread_mutex_unlock(&mu);
	return 1;
}

/* ---- the wrapped libc calls ---------------------------------------------- */

DCBDRV_EXPORT
ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
	       socklen_t tolen)
{
	resolve();
	if (intercept(fd, buf, len, to))
		return (ssize_t)len;
	return r_sendto(fd, buf, len, flags, to, tolen);
}

DCBDRV_EXPORT
ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	resolve();
	if (intercept(fd, buf, len, NULL))
		return (ssize_t)len;
	return r_send(fd, buf, len, flags);
}

DCBDRV_EXPORT
ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	unsigned char buf[16384];
	size_t len = 0;

	resolve();
	for (size_t i = 0; msg && i < msg->msg_iovlen; i++) {
		if (len + msg->msg_iov[i].iov_len > sizeof buf)
			return r_sendmsg(fd, msg, flags);
		memcpy(buf + len, msg->msg_iov[i].iov_base, msg->msg_iov[i].iov_len);
		len += msg->msg_iov[i].iov_len;
	}
	if (msg && intercept(fd, buf, len, msg->msg_name))
		return (ssize_t)len;
	return r_sendmsg(fd, msg, flags);
}

static void kernel_addr(struct sockaddr *sa, socklen_t *salen)
{
	struct sockaddr_nl k = {.nl_family = AF_NETLINK};
	socklen_t n;

	if (!sa || !salen)
		return;
	n = *salen < sizeof k ? *salen : sizeof k;
	memcpy(sa, &k, n);
	*salen = sizeof k;
}

DCBDRV_EXPORT
ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	int trunc = 0;
	ssize_t n;

	resolve();
	n = msg ? take(fd, msg->msg_iov, msg->msg_iovlen, flags, &trunc) : -1;
	if (n < 0)
		return r_recvmsg(fd, msg, flags);
	kernel_addr(msg->msg_name, &msg->msg_namelen);
	msg->msg_controllen = 0;
	msg->msg_flags = trunc ? MSG_TRUNC : 0;
	return n;
}

DCBDRV_EXPORT
ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
		 socklen_t *fromlen)
{
	struct iovec iov = {buf, len};
	int trunc;
	ssize_t n;

	resolve();
	n = take(fd, &iov, 1, flags, &trunc);
	if (n < 0)
		return r_recvfrom(fd, buf, len, flags, from, fromlen);
	kernel_addr(from, fromlen);
	return n;
}

DCBDRV_EXPORT
ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	struct iovec iov = {buf, len};
	int trunc;
	ssize_t n;

	resolve();
	n = take(fd, &iov, 1, flags, &trunc);
	return n < 0 ? r_recv(fd, buf, len, flags) : n;
}

DCBDRV_EXPORT
ssize_t read(int fd, void *buf, size_t len)
{
	struct iovec iov = {buf, len};
	int trunc;
	ssize_t n;

	resolve();
	n = take(fd, &iov, 1, 0, &trunc);
	if (n < 0 && sysfs_read(fd, buf, len, &n, 0, 0))
		return n;
	return n < 0 ? r_read(fd, buf, len) : n;
}

/* SIOCETHTOOL for emulated interfaces (ethtool_ioctl.c); every other request as is. */
DCBDRV_EXPORT
int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int ret;

	resolve();
	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == SIOCETHTOOL && eth_ioctl(fd, arg, &ret))
		return ret;
	return r_ioctl(fd, req, arg);
}

DCBDRV_EXPORT
int close(int fd)
{
	resolve();
	sysfs_forget(fd);
	if (__atomic_load_n(&pending, __ATOMIC_SEQ_CST)) {
		pthread_mutex_lock(&mu);
		drop_queue(fd);
		pthread_mutex_unlock(&mu);
	}
	return r_close(fd);
}

/* ---- loading -------------------------------------------------------------- */

__attribute__((constructor)) static void dcbdrv_init(void)
{
	resolve();
	lldpad_fix();
}
