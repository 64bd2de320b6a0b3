// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * The PFC relay's XDP data path (draft-he-rtgwg-wan-pfc-00), the fast path of
 * lossless_relay's sans-IO core, which stays the reference:
 *
 *   xdp_dc  (on the DC-facing interface): a PFC frame from the gateway is
 *           checked (the eight rules, in the core's order), wrapped in the
 *           tunnel header the core built (cfg.hdr60 / cfg.hdr64: outer
 *           Ethernet, IP or MPLS, marking included; only the UDP checksum
 *           depends on the inner frame and is completed here), and
 *           redirected to the WAN interface through the devmap.
 *   xdp_wan (on the WAN-facing interface): our tunnel, for us, exactly as a
 *           far PE of ours sends it, is taken apart, its inner frame checked
 *           (seven rules), its source MAC rewritten, and redirected to the
 *           DC interface.
 *
 * An illegal PFC frame is dropped and counted under its reason. What this
 * program does not fully decide it passes up (XDP_PASS) to the AF_PACKET
 * path, which runs the reference core: other EtherTypes (the host's),
 * anything from the WAN that is not exactly our tunnel for us (the core then
 * counts not_tunnel, malformed_tunnel, not_for_us or segments_left), WAN
 * delay measurement frames, and, with the storm ceiling on, a legal PFC
 * frame that arrives when a held value is due (user space then runs
 * xdp_storm_flush, then this program again on the frame).
 *
 * The storm ceiling (lossless_relay::storm, the reference) keeps its
 * per-priority state in the `storm` map, under a spin lock: xdp_dc admits
 * each legal frame there; xdp_storm_flush, run by user space with
 * BPF_PROG_TEST_RUN when `next_due` comes, sends the held values that are
 * due (a refresh before the far side's pause lapses, a held resume), one
 * frame per run, encapsulated like the rest.
 *
 *   xdp_gateway (on a DC gateway's interface facing its PE): every MAC
 *           Control frame gets lossless_relay::GatewayCheck's rules (the
 *           same functions as xdp_dc's: a legal PFC frame, to
 *           01-80-C2-00-00-01, from the PE's port or system MAC in the
 *           `gateway` map); an illegal one is dropped and counted under its
 *           reason ("the source DC gateway must discard this illegal PFC
 *           frame"), a legal one counted, recorded in `gateway_last` and
 *           passed to the host, and any other frame passed untouched.
 *
 * Counters are per-CPU u64, indexed as lossless_sys::xdp::Counter.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define HDR_MAX 192
#define WAN_FRAME_MAX 255

/* n & mask, done where the verifier sees it (clang would drop a mask it
 * knows is redundant, and the verifier would lose the bound). */
#define BOUND(n, mask) asm volatile("%0 &= " #mask : "+r"(n))

enum kind { KIND_SRV6 = 1, KIND_SRV6_REDUCED = 2, KIND_VXLAN4 = 3, KIND_VXLAN6 = 4, KIND_MPLS = 5 };

/* Reasons in lossless_relay::DropReason order. */
enum reason {
	R_SHORT_FRAME, R_LONG_FRAME, R_NOT_MAC_CONTROL, R_NOT_PFC, R_CLASS_VECTOR_RESERVED,
	R_EMPTY_CLASS_VECTOR, R_BAD_DMAC, R_BAD_SMAC, R_COUNT = 12,
};

/* Counter indexes: egress reasons 0..11, ingress reasons 12..23, then: */
enum counter {
	C_EGRESS_DROP = 0,
	C_INGRESS_DROP = 12,
	C_EGRESS_RECEIVED = 24,
	C_EGRESS_RELAYED,
	C_EGRESS_PASSED,
	C_INGRESS_RECEIVED,
	C_INGRESS_DELIVERED,
	C_INGRESS_PASSED,
	C_REDIRECT_FAILED,
	C_SINK,
	C_EGRESS_SUPPRESSED,
	C_EGRESS_MASKED,
	C_EGRESS_FLUSHED,
	C_GW_DROP,
	C_GW_RECEIVED = C_GW_DROP + R_COUNT,
	C_GW_ACCEPTED,
	C_COUNT,
};

/* Who may send PFC (lossless_relay::AllowedSources): a PE's gateway, or a
 * gateway's PE. */
struct sources {
	__u8 port_mac[6];
	__u8 system_mac[6];
	__u8 has_system_mac;
};

struct relay_cfg {
	__u8 dc_port_mac[6];
	struct sources gw;  /* the DC gateway's MACs */
	__u8 kind;
	__u8 wan_port_mac[6];
	__u8 storm;          /* 1: the storm ceiling, state in the storm map */
	__u8 control_word;   /* MPLS */
	__u8 hdr_len;        /* same for both inner lengths */
	__u8 pad0;
	__u16 udp_csum_off;  /* 0: no UDP checksum to complete */
	__u16 vxlan_port;    /* network order */
	__u32 vni;           /* host order */
	__u32 local_label;
	__u8 local_addr[16]; /* SRv6 SID, or VTEP address (IPv4 in the first 4) */
	__u8 hdr60[HDR_MAX];
	__u8 hdr64[HDR_MAX];
	__u32 pop_labels[4]; /* MPLS labels above ours to pop, besides explicit null */
	__u32 npop;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct relay_cfg);
} config SEC(".maps");

/* xdp_gateway's PE. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sources);
} gateway SEC(".maps");

/* The last frame xdp_gateway accepted on this CPU (user space takes the
 * latest of the CPUs'). */
struct gateway_last {
	__u64 at_ns;        /* 0: none yet */
	__u8 src[6];
	__u8 class_enable;
	__u8 pad;
	__u8 quanta[16];    /* as in the frame: big-endian */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gateway_last);
} gateway_last SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, C_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* 0: the DC interface, 1: the WAN interface. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} ports SEC(".maps");

/* The storm ceiling, as lossless_relay::storm::StormGuard (see there for the
 * rules); times in nanoseconds on bpf_ktime_get_ns (CLOCK_MONOTONIC), or on
 * the `clock` map's value when it is nonzero (the tests). */
#define UNIT 1000000000ULL
#define NEVER 0xffffffffffffffffULL
enum held { HELD_NOTHING, HELD_RESUME, HELD_REFRESH };

struct storm_prio {
	__u64 tokens;       /* UNIT per frame */
	__u64 refilled;
	__u64 ep_last_seen;
	__u64 far_until;
	__u64 far_refresh_at;
	__u64 held_until;
	__u64 episodes, relayed, bypassed, suppressed, flushed, refreshed;
	__u16 held_quanta;
	__u8 in_episode;
	__u8 far_paused;
	__u8 held;
	__u8 pad[3];
};

struct storm_state {
	struct bpf_spin_lock lock;
	__u32 tmpl_len;     /* 0: no frame held back yet */
	__u64 rate;         /* tokens a second */
	__u64 cap;          /* burst x UNIT */
	__u64 gap_ns;
	__u64 speed_bps;
	__u64 refresh_before_ns;
	__u64 next_due;     /* NEVER: nothing held */
	__u8 tmpl[64];      /* the last frame held back */
	struct storm_prio p[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct storm_state);
} storm SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} clock SEC(".maps");

static __always_inline void count(__u32 at)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &at);
	if (c)
		*c += 1;
}

static __always_inline int mac_eq(const __u8 *a, const __u8 *b)
{
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3] && a[4] == b[4] &&
	       a[5] == b[5];
}

static const __u8 PFC_DMAC[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};

/*
 * The first seven rules of lossless_relay::pfc::check_pfc on f[0..len]
 * (len <= 64 readable bytes at f): -1 if legal, else the reason.
 */
static __always_inline int check_pfc(const __u8 *f, __u32 len)
{
	__u32 h = 14;
	if (len < 14)
		return R_SHORT_FRAME;
	__u16 et = ((__u16)f[12] << 8) | f[13];
	if (et == 0x8100) {
		if (len < 18)
			return R_SHORT_FRAME;
		et = ((__u16)f[16] << 8) | f[17];
		h = 18;
	}
	if (et != 0x8808)
		return R_NOT_MAC_CONTROL;
	__u32 expected = 60 + (h - 14);
	if (len < expected)
		return R_SHORT_FRAME;
	if (len > expected)
		return R_LONG_FRAME;
	if (((__u16)f[h] << 8 | f[h + 1]) != 0x0101)
		return R_NOT_PFC;
	if (f[h + 2] != 0)
		return R_CLASS_VECTOR_RESERVED;
	if (f[h + 3] == 0)
		return R_EMPTY_CLASS_VECTOR;
	if (!mac_eq(f, PFC_DMAC))
		return R_BAD_DMAC;
	return -1;
}

/* The source rule (AllowedSources::check after check_pfc): -1 if f's source
 * MAC is one of `s`, else R_BAD_SMAC. */
static __always_inline int check_source(const __u8 *f, const struct sources *s)
{
	if (mac_eq(f + 6, s->port_mac) || (s->has_system_mac && mac_eq(f + 6, s->system_mac)))
		return -1;
	return R_BAD_SMAC;
}

/*
 * Reads the packet's first octets into f[64] if it is a MAC Control frame
 * (0x8808, maybe behind one 802.1Q tag): 0 if it is not one (the host's, or
 * under 14 octets); 1 if it is, f holding as much of it as check_pfc reads;
 * -1 if it is one but could not be read (too short: R_SHORT_FRAME).
 */
static __always_inline int read_mac_control(struct xdp_md *ctx, __u8 *f, __u32 len)
{
	if (len < 14 || bpf_xdp_load_bytes(ctx, 0, f, 14) < 0)
		return 0;
	__u16 et = ((__u16)f[12] << 8) | f[13];
	if (et == 0x8100) {
		if (len < 18 || bpf_xdp_load_bytes(ctx, 0, f, 18) < 0)
			return 0;
		et = ((__u16)f[16] << 8) | f[17];
	}
	if (et != 0x8808)
		return 0;
	long ld;
	if (len >= 64)
		ld = bpf_xdp_load_bytes(ctx, 0, f, 64);
	else if (len >= 60)
		ld = bpf_xdp_load_bytes(ctx, 0, f, 60);
	else if (len >= 18)
		ld = bpf_xdp_load_bytes(ctx, 0, f, 18);
	else
		ld = bpf_xdp_load_bytes(ctx, 0, f, 14);
	return ld < 0 ? -1 : 1;
}

/* A MAC Control frame's verdict (read_mac_control's k, f, len) under the
 * allowed sources `s`: -1 if legal, else the reason. */
static __always_inline int check_from(int k, const __u8 *f, __u32 len, const struct sources *s)
{
	if (k < 0)
		return R_SHORT_FRAME;
	int r = check_pfc(f, len);
	if (r < 0)
		r = check_source(f, s);
	return r;
}

/* What xdp_dc and xdp_gateway do first with a frame: read it if it is MAC
 * Control and judge it under `s`, counting it at `received` and a drop at
 * `drop_base` + its reason. 0: not MAC Control (the host's: pass it); -1:
 * illegal (drop it); 1: legal, f holding it. */
static __always_inline int judged(struct xdp_md *ctx, __u8 *f, __u32 len,
				  const struct sources *s, __u32 received, __u32 drop_base)
{
	int k = read_mac_control(ctx, f, len);
	if (k == 0)
		return 0;
	count(received);
	int r = check_from(k, f, len, s);
	if (r >= 0) {
		count(drop_base + (r & 0xf));
		return -1;
	}
	return 1;
}

static __always_inline struct relay_cfg *cfg(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&config, &zero);
}

static __always_inline __u16 fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

#include "storm.bpf.h"

static __always_inline int storm_admit(struct xdp_md *ctx, __u8 *f, __u32 len);
static __always_inline int encap_to_wan(struct xdp_md *ctx, struct relay_cfg *c, const __u8 *f,
					__u32 len);

SEC("xdp")
int xdp_dc(struct xdp_md *ctx)
{
	struct relay_cfg *c = cfg();
	if (!c)
		return XDP_PASS;
	__u8 f[64] = {};
	__u32 len = ctx->data_end - ctx->data;
	/* Only MAC Control is ours; the host keeps the rest. */
	int v = judged(ctx, f, len, &c->gw, C_EGRESS_RECEIVED, C_EGRESS_DROP);
	if (v == 0)
		return XDP_PASS;
	if (v < 0)
		return XDP_DROP;
	if (c->storm) {
		int act = storm_admit(ctx, f, len);
		if (act >= 0)
			return act;
	}
	count(C_EGRESS_RELAYED);
	return encap_to_wan(ctx, c, f, len);
}

/*
 * The storm ceiling on a legal frame f[0..len] (also in the packet): -1 to
 * relay it (f and the packet restricted to the priorities that may go), else
 * the action. A frame that arrives when a held value is due goes up
 * (XDP_PASS): the flush comes first, and only user space can send it.
 */
static __always_inline int storm_admit(struct xdp_md *ctx, __u8 *f, __u32 len)
{
	struct storm_state *s = storm_state();
	if (!s)
		return XDP_PASS;
	__u64 now = clock_now();
	__u32 h = len == 64 ? 18 : 14;
	__u8 ce = f[(h + 3) & 0x3f];
	__u16 quanta[8];
	for (int i = 0; i < 8; i++)
		quanta[i] = ((__u16)f[(h + 4 + 2 * i) & 0x3f] << 8) | f[(h + 5 + 2 * i) & 0x3f];
	__u8 relay = 0, suppress = 0;
	int deferred = 0;
	bpf_spin_lock(&s->lock);
	if (s->next_due <= now) {
		deferred = 1;
	} else {
		admit(s, now, ce, quanta, &relay, &suppress);
		if (suppress) {
			for (int i = 0; i < 64; i++)
				s->tmpl[i] = f[i];
			s->tmpl_len = len;
		}
		s->next_due = poll_timeout(s);
	}
	bpf_spin_unlock(&s->lock);
	if (deferred) {
		count(C_EGRESS_PASSED);
		return XDP_PASS;
	}
	if (relay == 0) {
		count(C_EGRESS_SUPPRESSED);
		return XDP_DROP;
	}
	if (relay != ce) {
		restrict_to(f, h, relay);
		if (bpf_xdp_store_bytes(ctx, h + 2, f + h + 2, 18) < 0)
			return XDP_DROP;
		count(C_EGRESS_MASKED);
	}
	return -1;
}

/*
 * Puts the tunnel header the core built in front of the legal frame
 * f[0..len] (the packet's bytes) and redirects it to the WAN interface.
 */
static __always_inline int encap_to_wan(struct xdp_md *ctx, struct relay_cfg *c, const __u8 *f,
					__u32 len)
{
	/* The UDP checksum of a VXLAN header: the template's (over a zero inner
	 * frame) plus the inner frame's sum. */
	__u16 csum = 0;
	if (c->udp_csum_off) {
		__s64 s = bpf_csum_diff(0, 0, (__be32 *)f, len == 64 ? 64 : 60, 0);
		if (s < 0)
			return XDP_PASS;
		__u16 off = c->udp_csum_off;
		if (off > HDR_MAX - 2)
			return XDP_PASS;
		const __u8 *t = len == 64 ? c->hdr64 : c->hdr60;
		__u16 old = ((__u16)t[off & 0xff] << 8) | t[(off + 1) & 0xff];
		__u32 sum = (__u16)~bpf_htons(old);
		sum += fold((__u32)s);
		csum = ~fold(sum);
		if (csum == 0)
			csum = 0xffff;
	}
	__u32 hl = c->hdr_len;
	if (hl < 14 || hl > HDR_MAX)
		return XDP_PASS;
	if (bpf_xdp_adjust_head(ctx, -(int)hl) < 0)
		return XDP_PASS;
	long w;
	if (len == 64)
		w = bpf_xdp_store_bytes(ctx, 0, c->hdr64, hl);
	else
		w = bpf_xdp_store_bytes(ctx, 0, c->hdr60, hl);
	if (w < 0)
		return XDP_DROP;
	if (c->udp_csum_off)
		bpf_xdp_store_bytes(ctx, c->udp_csum_off & 0xff, &csum, 2);
	long act = bpf_redirect_map(&ports, 1, 0);
	if (act != XDP_REDIRECT)
		count(C_REDIRECT_FAILED);
	return act;
}

/*
 * Run by user space (BPF_PROG_TEST_RUN on 64 octets) when the storm state's
 * next_due comes: one round of StormGuard::flush_due and Relay's flush, the
 * held values due at the earliest instant by now, sent in one frame built
 * from the last frame held back, with the tunnel header: XDP_REDIRECT (the
 * frame to send on the WAN). XDP_PASS: a round that sent nothing (run it
 * again); XDP_DROP: nothing is due (stop).
 */
SEC("xdp")
int xdp_storm_flush(struct xdp_md *ctx)
{
	struct relay_cfg *c = cfg();
	struct storm_state *s = storm_state();
	if (!c || !s)
		return XDP_ABORTED;
	__u64 now = clock_now();
	__u8 f[64] = {};
	__u32 len = 0;
	__u8 ce = 0;
	int due = 0;
	bpf_spin_lock(&s->lock);
	/* poll_timeout(s), kept up to date by every change (and cheaper for
	 * the verifier than computing it again here). */
	__u64 first = s->next_due;
	if (first > now) {
		for (int i = 0; i < 8; i++)
			close_if_over(s, prio(s, i), now);
	} else {
		due = 1;
		len = s->tmpl_len == 64 ? 64 : 60;
		for (int i = 0; i < 64; i++)
			f[i] = s->tmpl[i];
		__u32 h = len == 64 ? 18 : 14;
		for (int i = 0; i < 8; i++) {
			if (flush_at(s, prio(s, i)) != first)
				continue;
			refill(s, prio(s, i), first);
			__u16 q = 0;
			if (send_held(s, prio(s, i), first, &q)) {
				ce |= 1 << i;
				f[(h + 4 + 2 * i) & 0x3f] = q >> 8;
				f[(h + 5 + 2 * i) & 0x3f] = q & 0xff;
			}
		}
		if (s->tmpl_len == 0)
			ce = 0;
		if (ce)
			restrict_to(f, h, ce);
	}
	s->next_due = poll_timeout(s);
	bpf_spin_unlock(&s->lock);
	if (!due)
		return XDP_DROP;
	if (!ce)
		return XDP_PASS;
	__u32 have = ctx->data_end - ctx->data;
	if (have != 64)
		return XDP_ABORTED;
	if (len == 60 && bpf_xdp_adjust_tail(ctx, -4) < 0)
		return XDP_ABORTED;
	if (bpf_xdp_store_bytes(ctx, 0, f, len == 64 ? 64 : 60) < 0)
		return XDP_ABORTED;
	count(C_EGRESS_FLUSHED);
	return encap_to_wan(ctx, c, f, len);
}

/* Whether `len` bytes of w at `off` equal `want`. */
static __always_inline int bytes_eq(const __u8 *w, __u32 off, const __u8 *want, __u32 n)
{
	for (__u32 i = 0; i < n; i++)
		if (w[(off + i) & 0xff] != want[i])
			return 0;
	return 1;
}

/*
 * The offset of the inner frame if w[0..len] is exactly our tunnel, for us;
 * 0 otherwise (the core decides).
 */
static __always_inline __u32 our_tunnel(const struct relay_cfg *c, const __u8 *w, __u32 len)
{
	if (!bytes_eq(w, 0, c->wan_port_mac, 6))
		return 0;
	__u16 et = ((__u16)w[12] << 8) | w[13];
	switch (c->kind) {
	case KIND_SRV6:
	case KIND_SRV6_REDUCED: {
		if (et != 0x86dd || (w[14] >> 4) != 6 || !bytes_eq(w, 38, c->local_addr, 16))
			return 0;
		__u32 plen = ((__u32)w[18] << 8) | w[19];
		__u32 at = 54;
		if (w[20] == 43) {
			/* SRH: next header 143, type 4, Segments Left 0. */
			if (len < 62 || w[54] != 143 || w[56] != 4 || w[57] != 0)
				return 0;
			at = 54 + 8 + 8 * (__u32)w[55];
		} else if (w[20] != 143) {
			return 0;
		}
		if (at > HDR_MAX || 40 + plen != len - 14 || at >= len)
			return 0;
		return at;
	}
	case KIND_VXLAN4: {
		if (et != 0x0800 || w[14] != 0x45 || w[23] != 17 || (w[20] & 0x3f) || w[21])
			return 0;
		if (!bytes_eq(w, 30, c->local_addr, 4))
			return 0;
		if (((__u32)w[16] << 8 | w[17]) != len - 14)
			return 0;
		__u32 s = 0;
		for (int i = 14; i < 34; i += 2)
			s += ((__u32)w[i] << 8) | w[i + 1];
		if (fold(s) != 0xffff)
			return 0;
		if (((__u16)w[37] << 8 | w[36]) != c->vxlan_port)
			return 0;
		if (((__u32)w[38] << 8 | w[39]) != len - 34)
			return 0;
		if (w[42] != 0x08 || (((__u32)w[46] << 16) | ((__u32)w[47] << 8) | w[48]) != c->vni)
			return 0;
		if (w[40] | w[41]) {
			/* Verify: pseudo header + UDP datagram sums to 0xffff. */
			__u32 t = 17 + (len - 34);
			for (int i = 26; i < 34; i += 2)
				t += ((__u32)w[i] << 8) | w[i + 1];
			for (__u32 i = 34; i + 1 < WAN_FRAME_MAX; i += 2) {
				if (i + 1 >= len)
					break;
				t += ((__u32)w[i] << 8) | w[i + 1];
			}
			if (fold(t) != 0xffff)
				return 0;
		}
		return 50;
	}
	case KIND_VXLAN6: {
		if (et != 0x86dd || (w[14] >> 4) != 6 || w[20] != 17)
			return 0;
		if (!bytes_eq(w, 38, c->local_addr, 16))
			return 0;
		__u32 plen = ((__u32)w[18] << 8) | w[19];
		if (plen != len - 54)
			return 0;
		if (((__u16)w[57] << 8 | w[56]) != c->vxlan_port)
			return 0;
		if (((__u32)w[58] << 8 | w[59]) != plen || !(w[60] | w[61]))
			return 0;
		if (w[62] != 0x08 || (((__u32)w[66] << 16) | ((__u32)w[67] << 8) | w[68]) != c->vni)
			return 0;
		__u32 t = 17 + plen;
		for (int i = 22; i < 54; i += 2)
			t += ((__u32)w[i] << 8) | w[i + 1];
		for (__u32 i = 54; i + 1 < WAN_FRAME_MAX; i += 2) {
			if (i + 1 >= len)
				break;
			t += ((__u32)w[i] << 8) | w[i + 1];
		}
		if (fold(t) != 0xffff)
			return 0;
		return 70;
	}
	case KIND_MPLS: {
		if (et != 0x8847)
			return 0;
		__u32 at = 14;
		/* Explicit null (0, 2) or pop_labels above our label, at most three entries. */
		for (int i = 0; i < 4; i++) {
			if (at + 4 > len)
				return 0;
			__u32 e = ((__u32)w[at & 0xff] << 24) | ((__u32)w[(at + 1) & 0xff] << 16) |
				  ((__u32)w[(at + 2) & 0xff] << 8) | w[(at + 3) & 0xff];
			__u32 label = e >> 12;
			at += 4;
			if (e & 0x100) {
				if (label != c->local_label)
					return 0;
				if (c->control_word) {
					/* RFC 4448 4.6: first nibble 0; flags and
					 * sequence number may be anything. */
					if (at + 4 > len || (w[at & 0xff] >> 4))
						return 0;
					at += 4;
				}
				return at;
			}
			int pop = label == 0 || label == 2;
			for (int k = 0; k < 4; k++)
				if ((__u32)k < c->npop && c->pop_labels[k] == label)
					pop = 1;
			if (!pop)
				return 0;
		}
		return 0;
	}
	}
	return 0;
}

SEC("xdp")
int xdp_wan(struct xdp_md *ctx)
{
	struct relay_cfg *c = cfg();
	if (!c)
		return XDP_PASS;
	__u32 len = ctx->data_end - ctx->data;
	if (len < 34 || len > WAN_FRAME_MAX)
		return XDP_PASS;
	__u8 w[WAN_FRAME_MAX + 1] = {};
	/* len in 34..=255, as a size the verifier can bound: 1..=256. */
	__u32 n = len - 1;
	BOUND(n, 0xff);
	if (bpf_xdp_load_bytes(ctx, 0, w, n + 1) < 0)
		return XDP_PASS;
	__u32 at = our_tunnel(c, w, len);
	if (at == 0 || at >= len) {
		count(C_INGRESS_PASSED);
		return XDP_PASS;
	}
	__u32 inner = len - at;
	/* A WAN delay measurement frame (0x88B5) is the core's. */
	if (inner >= 14 && w[(at + 12) & 0xff] == 0x88 && w[(at + 13) & 0xff] == 0xb5) {
		count(C_INGRESS_PASSED);
		return XDP_PASS;
	}
	count(C_INGRESS_RECEIVED);
	__u8 f[64] = {};
	for (int i = 0; i < 64; i++)
		if ((__u32)i < inner)
			f[i] = w[(at + i) & 0xff];
	int r = check_pfc(f, inner);
	if (r >= 0) {
		count(C_INGRESS_DROP + (r & 0xf));
		return XDP_DROP;
	}
	if (at > HDR_MAX || bpf_xdp_adjust_head(ctx, (int)at) < 0)
		return XDP_PASS;
	if (bpf_xdp_store_bytes(ctx, 6, c->dc_port_mac, 6) < 0)
		return XDP_DROP;
	count(C_INGRESS_DELIVERED);
	long act = bpf_redirect_map(&ports, 0, 0);
	if (act != XDP_REDIRECT)
		count(C_REDIRECT_FAILED);
	return act;
}

SEC("xdp")
int xdp_gateway(struct xdp_md *ctx)
{
	__u32 zero = 0;
	const struct sources *s = bpf_map_lookup_elem(&gateway, &zero);
	if (!s)
		return XDP_PASS;
	__u8 f[64] = {};
	__u32 len = ctx->data_end - ctx->data;
	int v = judged(ctx, f, len, s, C_GW_RECEIVED, C_GW_DROP);
	if (v == 0)
		return XDP_PASS;
	if (v < 0)
		return XDP_DROP;
	count(C_GW_ACCEPTED);
	struct gateway_last *last = bpf_map_lookup_elem(&gateway_last, &zero);
	if (last) {
		/* Legal: 60 octets, or 64 with the tag. */
		__u32 h = len == 64 ? 18 : 14;
		last->at_ns = clock_now();
		for (int i = 0; i < 6; i++)
			last->src[i] = f[6 + i];
		last->class_enable = f[(h + 3) & 0x3f];
		for (int i = 0; i < 16; i++)
			last->quanta[i] = f[(h + 4 + i) & 0x3f];
	}
	return XDP_PASS;
}

/* Passes everything: attached to a veth that only receives redirected
 * frames, it makes the veth accept them (a veth takes XDP frames only when
 * its receiving end runs XDP or has GRO on). */
SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

/* The bench's generator: run on live frames (BPF_PROG_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES, as xdp-trafficgen does), it sends each out of
 * ports[1]. */
SEC("xdp")
int xdp_gen(struct xdp_md *ctx)
{
	return bpf_redirect_map(&ports, 1, 0);
}

/* The bench's sink: counts and drops. */
SEC("xdp")
int xdp_sink(struct xdp_md *ctx)
{
	count(C_SINK);
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
