//! A classic BPF interpreter for the instructions our socket filters use, so
//! their jump offsets are checked without a kernel (the netns tests run them
//! in the kernel too), and the relay's filters against the relay host's
//! predicate ([`crate::batch::Filter::accepts`]).

use crate::cbpf::{
    BPF_JEQ_K, BPF_JSET_K, BPF_LDX_MSH, BPF_LD_B_ABS, BPF_LD_H_ABS, BPF_LD_H_IND, BPF_LD_W_ABS,
    BPF_RET_K, LOAD_IFINDEX,
};

/// Runs `prog` over `frame`: the number of bytes to accept (0: drop). A load
/// beyond the frame drops it, as in the kernel.
pub(crate) fn run(prog: &[libc::sock_filter], frame: &[u8]) -> u32 {
    run_from(prog, frame, 0)
}

/// [`run`] for a frame received on interface `ifindex` (the ancillary load of
/// `SKF_AD_IFINDEX`).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn run_from(prog: &[libc::sock_filter], frame: &[u8], ifindex: u32) -> u32 {
    let (mut pc, mut a, mut x) = (0usize, 0u32, 0u32);
    let half = |k: usize| {
        frame
            .get(k..k + 2)
            .map(|b| u32::from(u16::from_be_bytes([b[0], b[1]])))
    };
    loop {
        let i = prog[pc];
        let k = i.k as usize;
        match i.code {
            BPF_LD_H_ABS => match half(k) {
                Some(v) => a = v,
                None => return 0,
            },
            BPF_LD_H_IND => match half(x as usize + k) {
                Some(v) => a = v,
                None => return 0,
            },
            BPF_LD_W_ABS if i.k == LOAD_IFINDEX => a = ifindex,
            BPF_LD_B_ABS => match frame.get(k) {
                Some(&b) => a = b.into(),
                None => return 0,
            },
            BPF_LDX_MSH => match frame.get(k) {
                Some(&b) => x = 4 * u32::from(b & 0xf),
                None => return 0,
            },
            BPF_JEQ_K => {
                pc += usize::from(if a == i.k { i.jt } else { i.jf });
            }
            BPF_JSET_K => {
                pc += usize::from(if a & i.k != 0 { i.jt } else { i.jf });
            }
            BPF_RET_K => return i.k,
            c => panic!("unexpected opcode {c:#x}"),
        }
        pc += 1;
    }
}
