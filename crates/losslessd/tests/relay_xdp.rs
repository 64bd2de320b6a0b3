#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! The XDP program against the sans-IO core, its reference: the same frames
//! (legal, each illegal kind, each tunnel, tunnel frames the program must
//! leave to the core) go through `Relay` and through the program with
//! `BPF_PROG_TEST_RUN`; the verdicts and the bytes must be the same.
//!
//! The program's verdicts map to the core's: `XDP_REDIRECT` is `Relayed`
//! (to the WAN) or `Delivered` (to the DC) and its output must be the core's
//! frame byte for byte; `XDP_DROP` is `Dropped(reason)` and the program must
//! count that reason; `XDP_PASS` hands the frame to the AF_PACKET path, that
//! is to the core itself, so it is allowed only where the core refuses a WAN
//! frame for a tunnel reason (or, on the DC side, for a frame that is not MAC
//! Control, which the AF_PACKET filter never hands over).

use lossless_relay::example::{self, Kind, DC2_GW, DC2_GW_SYSTEM, KINDS, PE1_DC};
use lossless_relay::tunnel::Encapsulator;
use lossless_relay::{DropReason, Instant, Port, Relay, Verdict};
use lossless_sys::xdp::{self, counter, Side, XdpRelay, XDP_DROP, XDP_PASS, XDP_REDIRECT};
use lossless_wire::MacAddr;
use losslessd::relay::xdp::xdp_config;

fn can_run() -> bool {
    use lossless_testkit::{require, Oracle};
    if !require("relay_xdp", &[Oracle::Netns, Oracle::Bpf]) {
        return false;
    }
    // The toolchain is here: a program that did not build is a failure.
    if let Err(why) = xdp::object() {
        panic!("the relay's XDP program was not built: {why} (install clang and libbpf-dev)");
    }
    true
}

fn load(n: u8, kind: Kind) -> XdpRelay {
    let cfg = xdp_config(&example::pe(n, kind)).unwrap();
    let mut x = XdpRelay::load(&cfg).unwrap_or_else(|e| panic!("loading the program: {e}"));
    // Redirects resolve to the loopback in a test run (nothing is sent).
    x.set_ports(1, 1).unwrap();
    x
}

fn pfc(src: MacAddr, vector: u16, times: [u16; 8]) -> Vec<u8> {
    example::pfc(src, vector, times)
}

/// A legal frame, a tagged one, one from the system MAC, and every illegal
/// kind the rules name.
fn dc_frames() -> Vec<(&'static str, Vec<u8>)> {
    let legal = pfc(DC2_GW, 0x18, [1, 2, 3, 0xffff, 0x1234, 6, 7, 8]);
    let mut tagged = legal[..12].to_vec();
    tagged.extend_from_slice(&[0x81, 0x00, 0xe0, 0x00]);
    tagged.extend_from_slice(&legal[12..]);
    let mut bad_dmac = legal.clone();
    bad_dmac[5] = 0x0e;
    let bad_smac = pfc(MacAddr([2, 0, 0, 0, 0x66, 6]), 0x18, [0; 8]);
    let mut pause = legal.clone();
    pause[15] = 0x01;
    pause[14] = 0x00;
    let mut reserved = legal.clone();
    reserved[16] = 0x01;
    let empty = pfc(DC2_GW, 0, [0; 8]);
    let mut long = legal.clone();
    long.push(0);
    let mut lldp = legal.clone();
    lldp[12..14].copy_from_slice(&[0x88, 0xcc]);
    vec![
        ("legal", legal.clone()),
        ("legal, tagged", tagged),
        (
            "legal, from the system MAC",
            pfc(DC2_GW_SYSTEM, 0x01, [9; 8]),
        ),
        ("wrong DMAC", bad_dmac),
        ("wrong SMAC", bad_smac),
        ("short", legal[..59].to_vec()),
        ("long", long),
        ("802.3x PAUSE", pause),
        ("class vector high byte", reserved),
        ("empty class vector", empty),
        ("not MAC Control (LLDP)", lldp),
    ]
}

fn sent(core: &mut Relay) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(t) = core.poll_transmit() {
        out.push(t.frame.to_vec());
    }
    out
}

fn delta(before: &[u64; counter::COUNT], after: &[u64; counter::COUNT]) -> Vec<(usize, u64)> {
    (0..counter::COUNT)
        .filter(|&i| after[i] != before[i])
        .map(|i| (i, after[i] - before[i]))
        .collect()
}

fn reason_index(r: DropReason) -> usize {
    DropReason::ALL.iter().position(|x| *x == r).unwrap()
}

#[test]
fn the_xdp_program_gives_the_cores_verdicts_and_bytes() {
    if !can_run() {
        return;
    }
    for kind in KINDS {
        let mut core2 = Relay::new(example::pe(2, kind), Instant::ZERO).unwrap();
        let mut core1 = Relay::new(example::pe(1, kind), Instant::ZERO).unwrap();
        let mut x2 = load(2, kind);
        let mut x1 = load(1, kind);
        let mut tunnelled = Vec::new();

        // The DC side: PE2's egress.
        for (what, f) in dc_frames() {
            let v = core2.handle_frame(Instant::ZERO, Port::Dc, &f);
            let core_out = sent(&mut core2);
            let before = x2.counters().unwrap();
            let (act, out) = x2.test_run(Side::Dc, &f).unwrap();
            let d = delta(&before, &x2.counters().unwrap());
            match v {
                Verdict::Relayed { held: 0 } => {
                    assert_eq!(act, XDP_REDIRECT, "{kind:?} {what}");
                    assert_eq!(core_out.len(), 1);
                    assert_eq!(out, core_out[0], "{kind:?} {what}: the tunnel frame");
                    assert_eq!(
                        d,
                        vec![(counter::EGRESS_RECEIVED, 1), (counter::EGRESS_RELAYED, 1)],
                        "{kind:?} {what}"
                    );
                    tunnelled.push((what, out));
                }
                Verdict::Dropped(DropReason::NotMacControl) => {
                    assert_eq!(act, XDP_PASS, "{kind:?} {what}: the host's frame");
                    assert_eq!(d, vec![], "{kind:?} {what}");
                }
                Verdict::Dropped(r) => {
                    assert_eq!(act, XDP_DROP, "{kind:?} {what}");
                    assert_eq!(
                        d,
                        vec![
                            (counter::EGRESS_DROP + reason_index(r), 1),
                            (counter::EGRESS_RECEIVED, 1)
                        ],
                        "{kind:?} {what}: counted as {r}"
                    );
                }
                other => panic!("{kind:?} {what}: core said {other:?}"),
            }
        }
        assert_eq!(tunnelled.len(), 3, "{kind:?}: the three legal frames");

        // The WAN side: PE1's ingress, on what PE2 sent and on tunnel frames
        // with an illegal inner frame, built by the core's encapsulator.
        let enc = Encapsulator::new(
            &example::pe(2, kind).tunnel,
            &example::pe(2, kind).wan,
            &example::pe(2, kind).marking,
        )
        .unwrap();
        let wrap = |inner: &[u8]| {
            let hl = enc.header_len();
            let mut b = vec![0u8; hl + inner.len()];
            enc.frame(inner).emit(&mut b);
            b
        };
        let mut wan: Vec<(String, Vec<u8>)> = tunnelled
            .iter()
            .map(|(w, f)| (w.to_string(), f.clone()))
            .collect();
        for (what, f) in dc_frames().into_iter().skip(3) {
            wan.push((format!("tunnel carrying {what}"), wrap(&f)));
        }
        // Frames the program leaves to the core: not for us, not a tunnel,
        // malformed.
        let mut not_for_us = tunnelled[0].1.clone();
        not_for_us[0] ^= 0x02;
        wan.push(("another PE's".into(), not_for_us));
        let mut broken = tunnelled[0].1.clone();
        let last = broken.len() - 61;
        broken[last] ^= 0xff;
        wan.push(("a corrupted header byte".into(), broken));
        wan.push(("cut short".into(), tunnelled[0].1[..40].to_vec()));

        for (what, f) in wan {
            let v = core1.handle_frame(Instant::ZERO, Port::Wan, &f);
            let core_out = sent(&mut core1);
            let before = x1.counters().unwrap();
            let (act, out) = x1.test_run(Side::Wan, &f).unwrap();
            let d = delta(&before, &x1.counters().unwrap());
            match v {
                Verdict::Delivered => {
                    assert_eq!(act, XDP_REDIRECT, "{kind:?} {what}");
                    assert_eq!(out, core_out[0], "{kind:?} {what}: delivered bytes");
                    assert_eq!(&out[6..12], &PE1_DC.0);
                    assert_eq!(
                        d,
                        vec![
                            (counter::INGRESS_RECEIVED, 1),
                            (counter::INGRESS_DELIVERED, 1)
                        ],
                        "{kind:?} {what}"
                    );
                }
                Verdict::Dropped(
                    r @ (DropReason::NotTunnel
                    | DropReason::MalformedTunnel
                    | DropReason::NotForUs
                    | DropReason::SegmentsLeft),
                ) => {
                    // The core's call: the program passes it up.
                    assert_eq!(act, XDP_PASS, "{kind:?} {what}: {r} is the core's to count");
                    assert_eq!(d, vec![(counter::INGRESS_PASSED, 1)], "{kind:?} {what}");
                }
                Verdict::Dropped(r) => {
                    assert_eq!(act, XDP_DROP, "{kind:?} {what}: core {r}");
                    assert_eq!(
                        d,
                        vec![
                            (counter::INGRESS_DROP + reason_index(r), 1),
                            (counter::INGRESS_RECEIVED, 1)
                        ],
                        "{kind:?} {what}: counted as {r}"
                    );
                }
                other => panic!("{kind:?} {what}: core said {other:?}"),
            }
        }
    }
}
