// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * The storm ceiling of relay.bpf.c (lossless_relay::storm, the reference):
 * token buckets, the far side's pause, held refreshes and resumes, per
 * priority in the `storm` map. Included by relay.bpf.c after its maps and
 * common helpers; not a unit of its own.
 */

/* Priority i's state, through an index the verifier sees only as 0..7: the
 * loops' iterations then look alike and their states prune. */
static __always_inline struct storm_prio *prio(struct storm_state *s, int i)
{
	__u32 j = i;
	BOUND(j, 7);
	return &s->p[j];
}

static __always_inline __u64 clock_now(void)
{
	__u32 zero = 0;
	__u64 *t = bpf_map_lookup_elem(&clock, &zero);
	if (t && *t)
		return *t;
	return bpf_ktime_get_ns();
}

static __always_inline struct storm_state *storm_state(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&storm, &zero);
}

/* PauseClock::duration: q x 512 bit times, rounded down to the nanosecond. */
static __always_inline __u64 pause_ns(const struct storm_state *s, __u16 q)
{
	return (__u64)q * 512ULL * 1000000000ULL / s->speed_bps;
}

/* PauseClock::quanta_for: the fewest quanta that pause at least d. */
static __always_inline __u16 quanta_for(const struct storm_state *s, __u64 d)
{
	if (d > (1ULL << 40))
		return 0xffff;
	__u64 q = (d * s->speed_bps + 512ULL * 1000000000ULL - 1) / (512ULL * 1000000000ULL);
	return q > 0xffff ? 0xffff : (__u16)q;
}

static __always_inline void refill(struct storm_state *s, struct storm_prio *p, __u64 now)
{
	if (now <= p->refilled)
		return;
	__u64 room = s->cap - p->tokens;
	__u64 el = now - p->refilled;
	if (el > room / s->rate)
		p->tokens = s->cap;
	else
		p->tokens += el * s->rate;
	p->refilled = now;
}

static __always_inline int take(struct storm_prio *p)
{
	if (p->tokens >= UNIT) {
		p->tokens -= UNIT;
		return 1;
	}
	return 0;
}

static __always_inline __u64 token_at(const struct storm_state *s, const struct storm_prio *p)
{
	if (p->tokens >= UNIT)
		return p->refilled;
	return p->refilled + (UNIT - p->tokens + s->rate - 1) / s->rate;
}

/* StormGuard::flush_at; NEVER for nothing held. */
static __always_inline __u64 flush_at(const struct storm_state *s, const struct storm_prio *p)
{
	if (p->held == HELD_NOTHING)
		return NEVER;
	if (p->held == HELD_REFRESH && p->far_paused)
		return p->far_refresh_at;
	__u64 t = token_at(s, p);
	if (p->in_episode) {
		__u64 close = p->ep_last_seen + s->gap_ns;
		if (close < t)
			t = close;
	}
	return t;
}

static __always_inline void close_if_over(const struct storm_state *s, struct storm_prio *p,
					  __u64 now)
{
	if (p->in_episode && now >= p->ep_last_seen + s->gap_ns && p->held != HELD_RESUME)
		p->in_episode = 0;
}

static __always_inline void relayed_pause(const struct storm_state *s, struct storm_prio *p,
					  __u64 now, __u16 q)
{
	__u64 pause = pause_ns(s, q);
	__u64 margin = pause / 2;
	if (s->refresh_before_ns < margin)
		margin = s->refresh_before_ns;
	p->far_paused = 1;
	p->far_until = now + pause;
	p->far_refresh_at = now + (pause - margin);
	p->held = HELD_NOTHING;
	p->relayed++;
	p->bypassed++;
}

static __always_inline void relayed_resume(struct storm_prio *p, int had_token)
{
	p->far_paused = 0;
	p->held = HELD_NOTHING;
	p->relayed++;
	if (!had_token)
		p->bypassed++;
}

/* StormGuard::admit_one: whether the instance is relayed. */
static __always_inline int admit_one(const struct storm_state *s, struct storm_prio *p, __u64 now,
				     __u16 q)
{
	int open = p->in_episode;
	if (open)
		p->ep_last_seen = now;
	if (q > 0 && !open) {
		p->in_episode = 1;
		p->ep_last_seen = now;
		p->episodes++;
		relayed_pause(s, p, now, q);
		return 1;
	}
	if (q > 0) {
		if (p->far_paused && p->far_refresh_at > now) {
			p->held = HELD_REFRESH;
			p->held_until = now + pause_ns(s, q);
			p->held_quanta = q;
			p->suppressed++;
			return 0;
		}
		relayed_pause(s, p, now, q);
		return 1;
	}
	if (p->held == HELD_REFRESH)
		p->held = HELD_NOTHING;
	if (take(p)) {
		relayed_resume(p, 1);
		return 1;
	}
	p->suppressed++;
	if (open)
		p->held = HELD_RESUME;
	return 0;
}

/* StormGuard::send_held: 1 and *q if a value goes out. */
static __always_inline int send_held(const struct storm_state *s, struct storm_prio *p, __u64 at,
				     __u16 *q)
{
	__u8 held = p->held;
	p->held = HELD_NOTHING;
	if (held == HELD_NOTHING)
		return 0;
	if (held == HELD_REFRESH && p->far_paused) {
		if (p->held_until <= p->far_until)
			return 0;
		*q = quanta_for(s, p->held_until - at);
		relayed_pause(s, p, at, *q);
		p->refreshed++;
	} else if (held == HELD_REFRESH) {
		*q = p->held_quanta;
		relayed_pause(s, p, at, *q);
	} else {
		int had = take(p);
		relayed_resume(p, had);
		*q = 0;
	}
	p->flushed++;
	return 1;
}

/* The earliest instant a held value is due (StormGuard::poll_timeout). */
static __always_inline __u64 poll_timeout(struct storm_state *s)
{
	__u64 t = NEVER;
	for (int i = 0; i < 8; i++) {
		__u64 at = flush_at(s, prio(s, i));
		if (at < t)
			t = at;
	}
	return t;
}

/* A legal frame's priorities (StormGuard::admit, after a flush_due that found
 * nothing due and so ended every episode whose gap has passed, as the first
 * loop does): *relay and *suppress. Under the lock. */
static __always_inline void admit(struct storm_state *s, __u64 now, __u8 ce, const __u16 *quanta,
				  __u8 *relay, __u8 *suppress)
{
	for (int i = 0; i < 8; i++)
		close_if_over(s, prio(s, i), now);
	for (int i = 0; i < 8; i++) {
		__u8 bit = 1 << i;
		if (!(ce & bit))
			continue;
		refill(s, prio(s, i), now);
		if (admit_one(s, prio(s, i), now, quanta[i]))
			*relay |= bit;
		else
			*suppress |= bit;
	}
}

/* lossless_relay::pfc::restrict: only `keep` enabled, the others' times 0.
 * h: the MAC Control header's offset (14 or 18). */
static __always_inline void restrict_to(__u8 *f, __u32 h, __u8 keep)
{
	f[(h + 2) & 0x3f] = 0;
	f[(h + 3) & 0x3f] = keep;
	for (int i = 0; i < 8; i++) {
		if (!(keep & (1 << i))) {
			f[(h + 4 + 2 * i) & 0x3f] = 0;
			f[(h + 5 + 2 * i) & 0x3f] = 0;
		}
	}
}
