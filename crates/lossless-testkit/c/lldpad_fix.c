/*
 * dcbdrv, the emulated DCB driver (see dcbdrv.h): the patch for Debian 12's
 * lldpad, applied by the constructor in shim.c when the process is lldpad.
 */
#include "dcbdrv.h"

/* ---- Debian 12's lldpad: the dcbx_gettlv() memset ----------------------------
 *
 * openlldp up to commit 03cb011 (Aug 2023; Debian 12 ships aa18720, Oct 2022)
 * ends dcbx_gettlv() with
 *
 *     dcbx_free_tlv(tlvs);
 *     memset(tlvs, 0, sizeof(struct dcbx_tlvs));
 *
 * which wipes not only the ten TLV pointers dcbx_free_tlv() freed but the
 * whole per-port CEE record (active flag, ifname, DCBX subtype, manifest,
 * port, list links) every time an LLDPDU is built: CEE DCBX never sends its
 * TLV on any NIC. Upstream's fix NULLs the ten pointers instead. This build
 * inlines the memset as 49 bytes of x86-64 (rep stos over 0x88 bytes at
 * %rbx, with the `mov %rbp,%rsi` that loads dcbx_bld_tlv()'s second argument
 * scheduled inside). lldpad_fix() finds it by the code around it (the call
 * of dcbx_free_tlv, the memset, the call of dcbx_bld_tlv and the test of
 * tlvs->dcbx_st at offset 6 that follows) and, if that appears exactly once
 * in lldpad's executable text, rewrites the 49 bytes as: mov %rbp,%rsi;
 * xor %eax,%eax; mov %rax,0x20..0x68(%rbx) (dcbx1 .. llink); a 4-byte nop.
 * The outcome is the first log line ("lldpad-fix patched" or "lldpad-fix
 * not-found"); the Rust harness refuses to run CEE without the patch.
 */

#define ANY (-1)
static const int fix_pattern[] = {
	/* mov %rax,%rdi; call dcbx_free_tlv */
	0x48, 0x89, 0xc7, 0xe8, ANY, ANY, ANY, ANY,
	/* the inlined memset(tlvs, 0, 0x88), the 49 bytes replaced */
	0x48, 0x8d, 0x7b, 0x08,                   /* lea 0x8(%rbx),%rdi */
	0x48, 0x89, 0xd9,                         /* mov %rbx,%rcx */
	0x31, 0xc0,                               /* xor %eax,%eax */
	0x48, 0x83, 0xe7, 0xf8,                   /* and $-8,%rdi */
	0x48, 0xc7, 0x03, 0x00, 0x00, 0x00, 0x00, /* movq $0,(%rbx) */
	0x48, 0x89, 0xee,                         /* mov %rbp,%rsi */
	0x48, 0xc7, 0x83, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* movq $0,0x80(%rbx) */
	0x48, 0x29, 0xf9,                         /* sub %rdi,%rcx */
	0x81, 0xc1, 0x88, 0x00, 0x00, 0x00,       /* add $0x88,%ecx */
	0xc1, 0xe9, 0x03,                         /* shr $3,%ecx */
	0xf3, 0x48, 0xab,                         /* rep stos %rax,(%rdi) */
	/* mov %r12,%rdi; call dcbx_bld_tlv; cmpb $2,0x6(%rbx) */
	0x4c, 0x89, 0xe7, 0xe8, ANY, ANY, ANY, ANY, 0x80, 0x7b, 0x06, 0x02,
};
#define FIX_AT 8
#define FIX_LEN 49

static int match_at(const unsigned char *p)
{
	for (size_t i = 0; i < sizeof fix_pattern / sizeof fix_pattern[0]; i++)
		if (fix_pattern[i] != ANY && p[i] != fix_pattern[i])
			return 0;
	return 1;
}

void lldpad_fix(void)
{
	char exe[4096], line[4608];
	unsigned char *hit = NULL;
	size_t plen = sizeof fix_pattern / sizeof fix_pattern[0];
	int hits = 0;
	ssize_t n;
	FILE *maps;

	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return;
	exe[n] = 0;
	if (strcmp(strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe, "lldpad") != 0)
		return;
	if (getenv("LOSSLESS_DCBDRV_LLDPAD_FIX") && !env_on("LOSSLESS_DCBDRV_LLDPAD_FIX")) {
		logline("-", "lldpad-fix", "disabled");
		return;
	}
	maps = fopen("/proc/self/maps", "re");
	if (!maps)
		return;
	while (fgets(line, sizeof line, maps)) {
		unsigned long lo, hi;
		char perms[8], path[4096] = "";
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095s", &lo, &hi, perms, path) < 3)
			continue;
		if (perms[2] != 'x' || strcmp(path, exe) != 0)
			continue;
		for (unsigned char *p = (unsigned char *)lo; p + plen <= (unsigned char *)hi; p++)
			if (match_at(p)) {
				hits++;
				hit = p;
			}
	}
	fclose(maps);
	if (hits != 1) {
		logline("-", "lldpad-fix", "not-found matches=%d exe=%s", hits, exe);
		return;
	}
	{
		static const unsigned char fix[FIX_LEN] = {
			0x48, 0x89, 0xee, /* mov %rbp,%rsi */
			0x31, 0xc0,       /* xor %eax,%eax */
			0x48, 0x89, 0x43, 0x20, 0x48, 0x89, 0x43, 0x28, 0x48, 0x89, 0x43, 0x30,
			0x48, 0x89, 0x43, 0x38, 0x48, 0x89, 0x43, 0x40, 0x48, 0x89, 0x43, 0x48,
			0x48, 0x89, 0x43, 0x50, 0x48, 0x89, 0x43, 0x58, 0x48, 0x89, 0x43, 0x60,
			0x48, 0x89, 0x43, 0x68, /* mov %rax,0x20..0x68(%rbx) */
			0x0f, 0x1f, 0x40, 0x00, /* nopl 0x0(%rax) */
		};
		unsigned char *at = hit + FIX_AT;
		long pg = sysconf(_SC_PAGESIZE);
		unsigned char *start = (unsigned char *)((uintptr_t)at & ~(uintptr_t)(pg - 1));
		size_t span = (size_t)(at + FIX_LEN - start);

		if (mprotect(start, span, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
			logline("-", "lldpad-fix", "mprotect-failed errno=%d", errno);
			return;
		}
		memcpy(at, fix, FIX_LEN);
		mprotect(start, span, PROT_READ | PROT_EXEC);
		logline("-", "lldpad-fix", "patched at=%p", (void *)at);
	}
}
