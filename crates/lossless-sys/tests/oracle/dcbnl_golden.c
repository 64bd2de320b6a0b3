/*
 * dcbnl messages built from the kernel's own uapi structs and macros
 * (<linux/netlink.h>, <linux/rtnetlink.h>, <linux/dcbnl.h>), printed as
 * "NAME HEX" lines for tests/dcbnl_oracle.rs to compare with what
 * lossless-sys encodes, and to decode the replies.
 *
 * Requests are laid out as iproute2 and lldpad send them: nlmsghdr with
 * NLM_F_REQUEST, struct dcbmsg, DCB_ATTR_IFNAME, the command's attributes.
 * Replies are laid out as net/dcb/dcbnl.c fills them.
 *
 * The selector trust table and the PCP selector arrived in Linux 6.2. With
 * older headers the test passes their values as -DORACLE_TRUST_TABLE=..,
 * -DORACLE_DCB_APP=.. read from the running kernel's BTF, and
 * -DORACLE_SEL_PCP=255; "trust-source" says which was used.
 */
#include <errno.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#if defined(DCB_APP_SEL_PCP)
#define TRUST_TABLE DCB_ATTR_DCB_APP_TRUST_TABLE
#define ATTR_DCB_APP DCB_ATTR_DCB_APP
#define SEL_PCP DCB_APP_SEL_PCP
#define TRUST_SOURCE "header"
#elif defined(ORACLE_TRUST_TABLE)
#define TRUST_TABLE ORACLE_TRUST_TABLE
#define ATTR_DCB_APP ORACLE_DCB_APP
#define SEL_PCP ORACLE_SEL_PCP
#define TRUST_SOURCE "btf"
#endif

static unsigned char buf[4096];
static struct nlmsghdr *nlh;

static void *tail(void) { return (char *)nlh + NLMSG_ALIGN(nlh->nlmsg_len); }

static void start(int type, int flags, unsigned seq, int cmd)
{
	struct dcbmsg *d;

	memset(buf, 0, sizeof(buf));
	nlh = (struct nlmsghdr *)buf;
	nlh->nlmsg_len = NLMSG_LENGTH(sizeof(struct dcbmsg));
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = 0;
	d = NLMSG_DATA(nlh);
	d->dcb_family = AF_UNSPEC;
	d->cmd = cmd;
}

static void request(int cmd, unsigned seq)
{
	int set = cmd == DCB_CMD_SSTATE || cmd == DCB_CMD_PGTX_SCFG ||
		  cmd == DCB_CMD_PGRX_SCFG || cmd == DCB_CMD_PFC_SCFG ||
		  cmd == DCB_CMD_SET_ALL || cmd == DCB_CMD_PFC_SSTATE ||
		  cmd == DCB_CMD_IEEE_SET || cmd == DCB_CMD_SDCBX ||
		  cmd == DCB_CMD_IEEE_DEL;

	start(set ? RTM_SETDCB : RTM_GETDCB, NLM_F_REQUEST, seq, cmd);
}

static struct nlattr *put(int type, const void *data, int len)
{
	struct nlattr *a = tail();

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	nlh->nlmsg_len = NLMSG_ALIGN(nlh->nlmsg_len) + NLA_ALIGN(a->nla_len);
	return a;
}

static void put_u8(int type, unsigned char v) { put(type, &v, 1); }

static struct nlattr *nest(int type) { return put(type, NULL, 0); }

static void nest_end(struct nlattr *a)
{
	a->nla_len = (char *)tail() - (char *)a;
}

static void ifname(void) { put(DCB_ATTR_IFNAME, "va", 3); }

/* Prints the message; nlmsg_len is the aligned end, as the kernel's is. */
static void emit(const char *name)
{
	unsigned i;

	printf("%s ", name);
	for (i = 0; i < nlh->nlmsg_len; i++)
		printf("%02x", buf[i]);
	printf("\n");
}

static struct ieee_ets ets(int willing)
{
	static const unsigned char bw[8] = {20, 30, 50, 0, 0, 0, 0, 0};
	static const unsigned char tsa[8] = {
		IEEE_8021QAZ_TSA_ETS, IEEE_8021QAZ_TSA_ETS, IEEE_8021QAZ_TSA_ETS,
		IEEE_8021QAZ_TSA_STRICT, IEEE_8021QAZ_TSA_STRICT,
		IEEE_8021QAZ_TSA_STRICT, IEEE_8021QAZ_TSA_STRICT,
		IEEE_8021QAZ_TSA_STRICT};
	static const unsigned char prio_tc[8] = {0, 0, 1, 1, 2, 2, 2, 3};
	struct ieee_ets e;

	memset(&e, 0, sizeof(e));
	e.willing = willing;
	e.ets_cap = IEEE_8021QAZ_MAX_TCS;
	e.cbs = 0;
	memcpy(e.tc_tx_bw, bw, 8);
	memcpy(e.tc_tsa, tsa, 8);
	memcpy(e.prio_tc, prio_tc, 8);
	memcpy(e.tc_reco_bw, bw, 8);
	memcpy(e.tc_reco_tsa, tsa, 8);
	memcpy(e.reco_prio_tc, prio_tc, 8);
	return e;
}

static struct ieee_pfc pfc(int en, int delay, unsigned long long counters)
{
	struct ieee_pfc p;
	int i;

	memset(&p, 0, sizeof(p));
	p.pfc_cap = IEEE_8021QAZ_MAX_TCS;
	p.pfc_en = en;
	p.delay = delay;
	for (i = 0; counters && i < IEEE_8021QAZ_MAX_TCS; i++) {
		p.requests[i] = counters + i;
		p.indications[i] = 2 * counters + i;
	}
	return p;
}

static struct dcbnl_buffer buffer(void)
{
	struct dcbnl_buffer b;

	memset(&b, 0, sizeof(b));
	b.prio2buffer[3] = 1;
	b.prio2buffer[4] = 1;
	b.buffer_size[0] = 130944;
	b.buffer_size[1] = 262016;
	b.total_size = 1048576;
	return b;
}

static const struct dcb_app roce = {IEEE_8021QAZ_APP_SEL_DGRAM, 3, 4791};
static const struct dcb_app dscp26 = {IEEE_8021QAZ_APP_SEL_DSCP, 3, 26};

static void cee_requests(void)
{
	struct nlattr *n, *t;
	/* TC i: PGID, UP_MAPPING, STRICT_PRIO, BW_PCT (PG 0-3 -> TC0, 4-6 ->
	 * TC1, 7 -> TC2 link strict; 25%/75%). */
	static const unsigned char tc[8][4] = {
		{0, 0x0f, 0, 100}, {1, 0x70, 0, 100}, {2, 0x80, 2, 0},
		{3, 0, 0, 0}, {4, 0, 0, 0}, {5, 0, 0, 0}, {6, 0, 0, 0}, {7, 0, 0, 0}};
	static const unsigned char pg_bw[8] = {25, 75, 0, 0, 0, 0, 0, 0};
	int i, k;

	request(DCB_CMD_GSTATE, 1); ifname(); emit("gstate");
	request(DCB_CMD_SSTATE, 2); ifname(); put_u8(DCB_ATTR_STATE, 1); emit("sstate");
	request(DCB_CMD_PFC_GCFG, 3); ifname();
	n = nest(DCB_ATTR_PFC_CFG); put(DCB_PFC_UP_ATTR_ALL, NULL, 0); nest_end(n);
	emit("pfc_gcfg");
	request(DCB_CMD_PFC_SCFG, 4); ifname();
	n = nest(DCB_ATTR_PFC_CFG);
	for (i = 0; i < 8; i++)
		put_u8(DCB_PFC_UP_ATTR_0 + i, i == 3 || i == 4);
	nest_end(n);
	emit("pfc_scfg");
	request(DCB_CMD_PFC_GSTATE, 5); ifname(); emit("pfc_gstate");
	request(DCB_CMD_PFC_SSTATE, 6); ifname(); put_u8(DCB_ATTR_PFC_STATE, 1);
	emit("pfc_sstate");
	request(DCB_CMD_PGRX_GCFG, 7); ifname();
	n = nest(DCB_ATTR_PG_CFG);
	t = nest(DCB_PG_ATTR_TC_ALL); put(DCB_TC_ATTR_PARAM_ALL, NULL, 0); nest_end(t);
	put(DCB_PG_ATTR_BW_ID_ALL, NULL, 0);
	nest_end(n);
	emit("pgrx_gcfg");
	request(DCB_CMD_PGTX_SCFG, 8); ifname();
	n = nest(DCB_ATTR_PG_CFG);
	for (i = 0; i < 8; i++) {
		t = nest(DCB_PG_ATTR_TC_0 + i);
		for (k = 0; k < 4; k++)
			put_u8(DCB_TC_ATTR_PARAM_PGID + k, tc[i][k]);
		nest_end(t);
	}
	for (i = 0; i < 8; i++)
		put_u8(DCB_PG_ATTR_BW_ID_0 + i, pg_bw[i]);
	nest_end(n);
	emit("pgtx_scfg");
	request(DCB_CMD_SET_ALL, 9); ifname(); put_u8(DCB_ATTR_SET_ALL, 1); emit("set_all");
}

static void ieee_requests(void)
{
	struct nlattr *n, *t;
	struct ieee_ets e = ets(1);
	struct ieee_pfc p = pfc(0x18, 0x1234, 0);
	struct dcbnl_buffer b = buffer();

	request(DCB_CMD_IEEE_GET, 10); ifname(); emit("ieee_get");
	request(DCB_CMD_IEEE_SET, 11); ifname();
	n = nest(DCB_ATTR_IEEE); put(DCB_ATTR_IEEE_ETS, &e, sizeof(e)); nest_end(n);
	emit("ieee_set_ets");
	request(DCB_CMD_IEEE_SET, 12); ifname();
	n = nest(DCB_ATTR_IEEE); put(DCB_ATTR_IEEE_PFC, &p, sizeof(p)); nest_end(n);
	emit("ieee_set_pfc");
	request(DCB_CMD_IEEE_SET, 13); ifname();
	n = nest(DCB_ATTR_IEEE); put(DCB_ATTR_DCB_BUFFER, &b, sizeof(b)); nest_end(n);
	emit("ieee_set_buffer");
	request(DCB_CMD_IEEE_SET, 14); ifname();
	n = nest(DCB_ATTR_IEEE);
	t = nest(DCB_ATTR_IEEE_APP_TABLE);
	put(DCB_ATTR_IEEE_APP, &roce, sizeof(roce));
	put(DCB_ATTR_IEEE_APP, &dscp26, sizeof(dscp26));
	nest_end(t);
	nest_end(n);
	emit("ieee_set_apps");
	request(DCB_CMD_IEEE_DEL, 15); ifname();
	n = nest(DCB_ATTR_IEEE);
	t = nest(DCB_ATTR_IEEE_APP_TABLE);
	put(DCB_ATTR_IEEE_APP, &dscp26, sizeof(dscp26));
	nest_end(t);
	nest_end(n);
	emit("ieee_del_app");
	request(DCB_CMD_GDCBX, 16); ifname(); emit("gdcbx");
	request(DCB_CMD_SDCBX, 17); ifname();
	put_u8(DCB_ATTR_DCBX, DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE);
	emit("sdcbx");
	/* ETS, PFC and the buffer in one request. */
	request(DCB_CMD_IEEE_SET, 18); ifname();
	n = nest(DCB_ATTR_IEEE);
	put(DCB_ATTR_IEEE_ETS, &e, sizeof(e));
	put(DCB_ATTR_IEEE_PFC, &p, sizeof(p));
	put(DCB_ATTR_DCB_BUFFER, &b, sizeof(b));
	t = nest(DCB_ATTR_IEEE_APP_TABLE);
	put(DCB_ATTR_IEEE_APP, &roce, sizeof(roce));
	nest_end(t);
	nest_end(n);
	emit("ieee_set_all_objects");
}

#ifdef TRUST_TABLE
static void trust_requests(void)
{
	struct nlattr *n, *t;
	struct dcb_app pcp3 = {SEL_PCP, 3, 3};

	printf("trust-source %s\n", TRUST_SOURCE);
	request(DCB_CMD_IEEE_SET, 19); ifname();
	n = nest(DCB_ATTR_IEEE);
	t = nest(TRUST_TABLE);
	put_u8(DCB_ATTR_IEEE_APP, IEEE_8021QAZ_APP_SEL_DSCP);
	put_u8(ATTR_DCB_APP, SEL_PCP);
	nest_end(t);
	nest_end(n);
	emit("ieee_set_trust");
	request(DCB_CMD_IEEE_SET, 20); ifname();
	n = nest(DCB_ATTR_IEEE);
	t = nest(DCB_ATTR_IEEE_APP_TABLE);
	put(ATTR_DCB_APP, &pcp3, sizeof(pcp3));
	nest_end(t);
	nest_end(n);
	emit("ieee_set_app_pcp");
}
#endif

static void replies(void)
{
	struct nlattr *n, *t;
	struct ieee_ets e = ets(1), peer = ets(0);
	struct ieee_pfc p = pfc(0x08, 2000, 100), peer_pfc = pfc(0x18, 0, 7);
	struct dcbnl_buffer b = buffer();
	struct ieee_maxrate rate;
	struct nlmsgerr *err;
	int i;

	memset(&rate, 0, sizeof(rate));
	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++)
		rate.tc_maxrate[i] = 1000000000ULL * i;

	/* dcbnl_ieee_fill() for a driver with every op. */
	start(RTM_GETDCB, 0, 21, DCB_CMD_IEEE_GET);
	ifname();
	n = nest(DCB_ATTR_IEEE);
	put(DCB_ATTR_IEEE_ETS, &e, sizeof(e));
	put(DCB_ATTR_IEEE_MAXRATE, &rate, sizeof(rate));
	put(DCB_ATTR_IEEE_PFC, &p, sizeof(p));
	put(DCB_ATTR_DCB_BUFFER, &b, sizeof(b));
	t = nest(DCB_ATTR_IEEE_APP_TABLE);
	put(DCB_ATTR_IEEE_APP, &roce, sizeof(roce));
	put(DCB_ATTR_IEEE_APP, &dscp26, sizeof(dscp26));
	nest_end(t);
#ifdef TRUST_TABLE
	t = nest(TRUST_TABLE);
	put_u8(DCB_ATTR_IEEE_APP, IEEE_8021QAZ_APP_SEL_DSCP);
	put_u8(ATTR_DCB_APP, SEL_PCP);
	nest_end(t);
#endif
	put(DCB_ATTR_IEEE_PEER_ETS, &peer, sizeof(peer));
	put(DCB_ATTR_IEEE_PEER_PFC, &peer_pfc, sizeof(peer_pfc));
	t = nest(DCB_ATTR_IEEE_PEER_APP);
	put(DCB_ATTR_IEEE_APP, &roce, sizeof(roce));
	nest_end(t);
	nest_end(n);
	put_u8(DCB_ATTR_DCBX, DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE);
	emit("reply_ieee_get");

	start(RTM_GETDCB, 0, 22, DCB_CMD_GDCBX);
	put_u8(DCB_ATTR_DCBX, DCB_CAP_DCBX_LLD_MANAGED | DCB_CAP_DCBX_VER_CEE);
	emit("reply_gdcbx");
	/* dcbnl_ieee_set()/del(): the driver's errno as the status byte. */
	start(RTM_SETDCB, 0, 23, DCB_CMD_IEEE_SET);
	put_u8(DCB_ATTR_IEEE, (unsigned char)-EINVAL);
	emit("reply_ieee_set_einval");
	start(RTM_SETDCB, 0, 24, DCB_CMD_IEEE_DEL);
	put_u8(DCB_ATTR_IEEE, (unsigned char)-ENOENT);
	emit("reply_ieee_del_enoent");
	/* netlink_ack(): struct nlmsgerr with the request's header. */
	memset(buf, 0, sizeof(buf));
	nlh = (struct nlmsghdr *)buf;
	nlh->nlmsg_len = NLMSG_LENGTH(sizeof(struct nlmsgerr));
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_seq = 25;
	err = NLMSG_DATA(nlh);
	err->error = -EOPNOTSUPP;
	err->msg.nlmsg_len = NLMSG_LENGTH(sizeof(struct dcbmsg)) + 8;
	err->msg.nlmsg_type = RTM_SETDCB;
	err->msg.nlmsg_flags = NLM_F_REQUEST;
	err->msg.nlmsg_seq = 25;
	emit("reply_error_eopnotsupp");
}

int main(void)
{
	cee_requests();
	ieee_requests();
#ifdef TRUST_TABLE
	trust_requests();
#else
	printf("trust-source none\n");
#endif
	replies();
	return 0;
}
