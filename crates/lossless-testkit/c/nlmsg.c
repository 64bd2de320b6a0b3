/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): netlink attributes, as
 * the kernel's nla_put()/nla_nest_*() build a reply and nla_parse() reads a
 * request. The buffer (struct mb) and the attribute macros are in dcbdrv.h.
 */
#include "dcbdrv.h"

/* ---- netlink messages ---------------------------------------------------- */

size_t put(struct mb *m, int type, const void *data, size_t n)
{
	size_t at = m->len;
	struct nlattr *a = (struct nlattr *)(m->b + at);

	if (at + NLA_HDRLEN + NLA_ALIGN(n) > sizeof m->b)
		return at; /* cannot happen with MAXAPP entries */
	a->nla_type = (uint16_t)type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + n);
	if (n)
		memcpy(m->b + at + NLA_HDRLEN, data, n);
	memset(m->b + at + NLA_HDRLEN + n, 0, NLA_ALIGN(n) - n);
	m->len += NLA_HDRLEN + NLA_ALIGN(n);
	return at;
}

void put_u8(struct mb *m, int type, uint8_t v) { put(m, type, &v, 1); }
void put_u16(struct mb *m, int type, uint16_t v) { put(m, type, &v, 2); }
size_t nest(struct mb *m, int type) { return put(m, type, NULL, 0); }
void nest_end(struct mb *m, size_t at)
{
	((struct nlattr *)(m->b + at))->nla_len = (uint16_t)(m->len - at);
}

/* nla_parse: the last attribute of a type wins; -1 when malformed. */
int parse(const void *p, int len, const struct nlattr **tb, int max)
{
	const struct nlattr *a = p;

	memset(tb, 0, sizeof(*tb) * (max + 1));
	while (len >= (int)NLA_HDRLEN) {
		if (!NLA_OK_(a, len))
			return -1;
		if (TYPE(a) <= max)
			tb[TYPE(a)] = a;
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
	return 0;
}

int u8_of(const struct nlattr *a, uint8_t *v)
{
	if (!a || DLEN(a) < 1)
		return 0;
	*v = DATA(a)[0];
	return 1;
}

/* A struct's worth of an attribute's payload into out: 0, or -ERANGE when
 * the payload is shorter (the minimum length dcbnl.c's policy sets). */
int payload_of(const struct nlattr *a, void *out, size_t size)
{
	if (DLEN(a) < (int)size)
		return -ERANGE;
	memcpy(out, DATA(a), size);
	return 0;
}
