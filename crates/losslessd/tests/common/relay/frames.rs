//! The PFC frames of the relay tests: legal ones from DC2-GW (every pause time
//! set, a non-zero pad), the illegal ones PE2 must refuse with the reason it
//! counts and the tshark field that shows the fault, and the frame PE1 must
//! deliver.

use lossless_relay::example::{DC2_GW, DC2_GW_SYSTEM, PE1_DC, PE2_DC};
use lossless_relay::{DropCounts, DropReason};
use lossless_wire::MacAddr;

/// A PFC frame as draft-he-rtgwg-wan-pfc-00's figure 1 draws it: 60 octets without FCS.
/// Every pause time is set (the relay must carry disabled ones too) and the
/// pad is not zero, so "byte for byte" covers all 60 octets.
pub fn pfc(dst: MacAddr, src: MacAddr, opcode: u16, vector: u16, times: [u16; 8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(60);
    f.extend_from_slice(&dst.0);
    f.extend_from_slice(&src.0);
    f.extend_from_slice(&0x8808u16.to_be_bytes());
    f.extend_from_slice(&opcode.to_be_bytes());
    f.extend_from_slice(&vector.to_be_bytes());
    for t in times {
        f.extend_from_slice(&t.to_be_bytes());
    }
    f.extend((0..26u8).map(|i| 0xa0 ^ i));
    f
}

pub const TIMES_A: [u16; 8] = [
    0x0101, 0xffff, 0x1234, 0x8000, 0x0001, 0x4242, 0x0000, 0xbeef,
];
pub const TIMES_B: [u16; 8] = [7, 0, 65535, 3, 0, 100, 2, 1];
/// Priorities 0, 3, 5 and 7.
pub const VECTOR_A: u16 = 0x00a9;
/// Priority 3 only.
pub const VECTOR_B: u16 = 0x0008;

/// Legal, from DC2-GW's port MAC.
pub fn legal_a() -> Vec<u8> {
    pfc(MacAddr::MAC_CONTROL, DC2_GW, 0x0101, VECTOR_A, TIMES_A)
}

/// Legal, from DC2-GW's system MAC ("some vendors also use device system MAC
/// address").
pub fn legal_b() -> Vec<u8> {
    pfc(
        MacAddr::MAC_CONTROL,
        DC2_GW_SYSTEM,
        0x0101,
        VECTOR_B,
        TIMES_B,
    )
}

/// A PFC frame from DC2-GW for priority 3 alone (as `lossless_relay::example`
/// builds it: zero pad), `quanta` its pause time; 0 resumes. The storm tests'
/// pause and resume.
pub fn priority3(quanta: u16) -> Vec<u8> {
    let mut times = [0; 8];
    times[3] = quanta;
    lossless_relay::example::pfc(DC2_GW, 0x08, times)
}

/// A frame PE2 must refuse, the reason it must count, and the tshark field
/// that shows what is wrong with it.
pub struct Illegal {
    pub frame: Vec<u8>,
    pub reason: DropReason,
    pub field: &'static str,
    pub value: String,
}

pub fn illegal() -> Vec<Illegal> {
    let stranger = MacAddr([2, 0, 0, 0, 0xd2, 0x99]);
    let mut short = legal_a();
    short.truncate(34); // every field, no pad
    let bad = |frame, reason, field, value: &str| Illegal {
        frame,
        reason,
        field,
        value: value.to_string(),
    };
    vec![
        bad(
            pfc(PE2_DC, DC2_GW, 0x0101, VECTOR_A, TIMES_A),
            DropReason::BadDmac,
            "eth.dst",
            &PE2_DC.to_string(),
        ),
        bad(
            pfc(MacAddr::MAC_CONTROL, stranger, 0x0101, VECTOR_A, TIMES_A),
            DropReason::BadSmac,
            "eth.src",
            &stranger.to_string(),
        ),
        bad(short, DropReason::ShortFrame, "frame.len", "34"),
        // 802.3x PAUSE: pause_time 0xffff where PFC's vector would be.
        bad(
            pfc(MacAddr::MAC_CONTROL, DC2_GW, 0x0001, 0xffff, [0; 8]),
            DropReason::NotPfc,
            "macc.opcode",
            "0x0001",
        ),
        bad(
            pfc(MacAddr::MAC_CONTROL, DC2_GW, 0x0101, 0x0108, TIMES_A),
            DropReason::ClassVectorReserved,
            "macc.cbfc.enbv",
            "0x0108",
        ),
    ]
}

/// `frame` as PE1 must deliver it: its source MAC replaced by PE1's DC MAC.
pub fn rewritten(frame: &[u8]) -> Vec<u8> {
    let mut f = frame.to_vec();
    f[6..12].copy_from_slice(&PE1_DC.0);
    f
}

pub fn counts(reasons: &[DropReason]) -> DropCounts {
    let mut c = DropCounts::default();
    for r in reasons {
        c.add(*r);
    }
    c
}
