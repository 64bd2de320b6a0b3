//! Classic BPF: the instruction codes the socket filters use (`packet`'s, `batch`'s,
//! `shared_packet`'s) and the interpreter that checks them (`bpf_interp`), defined once
//! so that none of them reaches into another for them.

pub(crate) const BPF_LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
pub(crate) const BPF_LD_H_ABS: u16 = 0x28; // BPF_LD | BPF_H | BPF_ABS
pub(crate) const BPF_LD_B_ABS: u16 = 0x30; // BPF_LD | BPF_B | BPF_ABS
pub(crate) const BPF_LD_H_IND: u16 = 0x48; // BPF_LD | BPF_H | BPF_IND: a = [x + k]
pub(crate) const BPF_LDX_MSH: u16 = 0xb1; // BPF_LDX | BPF_B | BPF_MSH: x = 4 * ([k] & 0xf)
pub(crate) const BPF_JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
pub(crate) const BPF_JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
pub(crate) const BPF_RET_K: u16 = 0x06; // BPF_RET | BPF_K
/// `SKF_AD_OFF + SKF_AD_IFINDEX`: the ancillary load of the receiving interface.
pub(crate) const LOAD_IFINDEX: u32 = (-0x1000i32 + 8) as u32;
