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

use lossless_relay::example::{self, pfc, Kind, DC2_GW, DC2_GW_SYSTEM, KINDS, PE1_DC};
use lossless_relay::tunnel::Encapsulator;
use lossless_relay::{DropReason, GatewayCheck, GatewayConfig, Instant, Port, Relay, Verdict};
use lossless_sys::xdp::{self, counter, Side, XdpRelay, XDP_DROP, XDP_PASS, XDP_REDIRECT};
use lossless_wire::MacAddr;
use losslessd::relay::xdp::{priority_status, storm_state, xdp_config};
use losslessd::relay::xdp_gateway;

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

/// A legal frame, a tagged one, one from the system MAC, and every illegal
/// kind the rules name.
fn dc_frames() -> Vec<(&'static str, Vec<u8>)> {
    frames_from(DC2_GW, DC2_GW_SYSTEM)
}

/// [`dc_frames`] from a sender with these port and system MACs.
fn frames_from(port: MacAddr, system: MacAddr) -> Vec<(&'static str, Vec<u8>)> {
    let legal = pfc(port, 0x18, [1, 2, 3, 0xffff, 0x1234, 6, 7, 8]);
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
    let empty = pfc(port, 0, [0; 8]);
    let mut long = legal.clone();
    long.push(0);
    let mut lldp = legal.clone();
    lldp[12..14].copy_from_slice(&[0x88, 0xcc]);
    vec![
        ("legal", legal.clone()),
        ("legal, tagged", tagged),
        ("legal, from the system MAC", pfc(system, 0x01, [9; 8])),
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

/// A small deterministic generator (xorshift), so that a failing sequence
/// is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<T: Copy>(&mut self, of: &[T]) -> T {
        of[(self.next() % of.len() as u64) as usize]
    }
}

fn at(ns: u64) -> Instant {
    Instant::from_duration(std::time::Duration::from_nanos(ns))
}

/// A storm: PFC frames from DC2 GW at random paces (3 us to 150 ms apart),
/// vectors and pause times, tagged or not, from the port or the system MAC.
fn storm_frames(rng: &mut Rng, start_ns: u64, n: usize) -> Vec<(u64, Vec<u8>)> {
    let mut t = start_ns;
    let mut out = Vec::new();
    for _ in 0..n {
        t += rng.pick(&[
            3_000, 10_000, 10_000, 10_000, 40_000, 150_000, 400_000, 2_000_000,
        ]);
        if rng.next().is_multiple_of(200) {
            t += 150_000_000; // silence: episodes end
        }
        let vector = rng.pick(&[0x08, 0x08, 0x08, 0x10, 0x18, 0x18, 0x01, 0x81, 0xff]);
        let mut times = [0u16; 8];
        for q in times.iter_mut() {
            *q = rng.pick(&[0, 0xffff, 0xffff, 0xffff, 20_000, 1_000, 5]);
        }
        let src = if rng.next().is_multiple_of(4) {
            DC2_GW_SYSTEM
        } else {
            DC2_GW
        };
        let mut f = pfc(src, vector, times);
        if rng.next().is_multiple_of(3) {
            let mut tagged = f[..12].to_vec();
            tagged.extend_from_slice(&[0x81, 0x00, 0xe0, 0x64]);
            tagged.extend_from_slice(&f[12..]);
            f = tagged;
        }
        out.push((t, f));
    }
    out
}

/// The program's storm state against the core's guard, all of it that
/// either side decides: per priority whether an episode is open, the held
/// value, the far side's pause, whole tokens and every counter (as `relay
/// show` gives them: `priority_status` is the daemon's own mapping), and the
/// next deadline.
fn same_state(x: &XdpRelay, core: &Relay, what: &str) {
    let st = x.storm_state().unwrap();
    let g = core.storm().unwrap();
    assert_eq!(
        priority_status(&st, 0),
        g.status(),
        "{what}: the per-priority state"
    );
    let ns = |t: Instant| t.since_epoch().as_nanos() as u64;
    assert_eq!(
        st.next_due,
        g.poll_timeout().map_or(xdp::NEVER, ns),
        "{what}: the next deadline"
    );
}

/// The storm ceiling in the program's map against the core's `StormGuard`:
/// the same frames at the same times (the test sets the program's clock,
/// which `BPF_PROG_TEST_RUN` cannot otherwise control, and hands the core
/// the same instants) must give the same verdicts, the same tunnel frames,
/// the same held values sent at the same deadlines (`xdp_storm_flush`, run
/// as the daemon runs it: when the state's `next_due` comes, and first when
/// the program passes a frame up because a held value is due), and the same
/// per-priority state and counters.
#[test]
fn the_storm_ceiling_in_xdp_gives_the_cores_verdicts_bytes_and_state() {
    if !can_run() {
        return;
    }
    const START: u64 = 1_000_000_000;
    for kind in KINDS {
        let mut cfg = example::pe(2, kind);
        cfg.storm.max_per_second = Some(1_000);
        cfg.storm.burst = Some(2);
        cfg.storm.link_speed = "100G".into();
        cfg.storm.refresh_before = "50us".into();
        let mut core = Relay::new(cfg.clone(), at(START)).unwrap();
        let mut x = XdpRelay::load(&xdp_config(&cfg).unwrap()).unwrap();
        x.set_ports(1, 1).unwrap();
        x.storm_init(&storm_state(core.storm().unwrap(), START))
            .unwrap();
        same_state(&x, &core, &format!("{kind:?} at the start"));
        let before = x.counters().unwrap();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ kind as u64);
        let (mut deferred, mut timers) = (0, 0);
        for (i, (t, f)) in storm_frames(&mut rng, START, 3_000).into_iter().enumerate() {
            let what = format!("{kind:?} frame {i} at {} ns", t - START);
            x.set_clock(t).unwrap();
            // Sometimes the daemon's timer fires first.
            if rng.next().is_multiple_of(2) && core.poll_timeout().is_some_and(|d| d <= at(t)) {
                core.handle_timeout(at(t));
                let flushed = x.storm_flush().unwrap();
                assert_eq!(flushed, sent(&mut core), "{what}: the timer's frames");
                same_state(&x, &core, &format!("{what}, after the timer"));
                timers += flushed.len();
            }
            let v = core.handle_frame(at(t), Port::Dc, &f);
            let core_out = sent(&mut core);
            let (mut act, mut out) = x.test_run(Side::Dc, &f).unwrap();
            let mut xdp_out = Vec::new();
            if act == XDP_PASS {
                // A held value was due: what the daemon does with the frame.
                deferred += 1;
                xdp_out = x.storm_flush().unwrap();
                (act, out) = x.test_run(Side::Dc, &f).unwrap();
                assert_ne!(act, XDP_PASS, "{what}: passed up twice");
            }
            match v {
                Verdict::Relayed { .. } => {
                    assert_eq!(act, XDP_REDIRECT, "{what}");
                    xdp_out.push(out);
                }
                Verdict::Suppressed => assert_eq!(act, XDP_DROP, "{what}"),
                other => panic!("{what}: core said {other:?}"),
            }
            assert_eq!(xdp_out, core_out, "{what}: the tunnel frames");
            same_state(&x, &core, &what);
        }
        // Everything held comes out once the storm is over.
        let end = START + 3_600_000_000_000;
        x.set_clock(end).unwrap();
        core.handle_timeout(at(end));
        assert_eq!(
            x.storm_flush().unwrap(),
            sent(&mut core),
            "{kind:?}: at the end"
        );

        same_state(&x, &core, &format!("{kind:?} at the end"));
        let guard = core.storm().unwrap();
        let d = delta(&before, &x.counters().unwrap());
        let n = |i: usize| d.iter().find(|(k, _)| *k == i).map_or(0, |(_, n)| *n);
        let e = core.egress_counters();
        assert_eq!(n(counter::EGRESS_RELAYED), e.relayed, "{kind:?}");
        assert_eq!(n(counter::EGRESS_SUPPRESSED), e.suppressed, "{kind:?}");
        assert_eq!(n(counter::EGRESS_MASKED), e.masked, "{kind:?}");
        assert_eq!(n(counter::EGRESS_FLUSHED), e.flushed, "{kind:?}");
        assert_eq!(
            n(counter::EGRESS_RECEIVED) - n(counter::EGRESS_PASSED),
            e.received,
            "{kind:?}"
        );
        // The sequence went through every rule.
        let refreshed: u64 = (0..8).map(|p| guard.counters(p).refreshed).sum();
        let episodes: u64 = (0..8).map(|p| guard.counters(p).episodes).sum();
        assert!(e.suppressed > 100 && e.masked > 10, "{kind:?}: {e:?}");
        assert!(
            refreshed > 10 && e.flushed > 10,
            "{kind:?}: {refreshed} refreshes"
        );
        assert!(episodes > 8, "{kind:?}: {episodes} episodes");
        assert!(deferred > 0 && timers > 0, "{kind:?}: {deferred} {timers}");
        eprintln!(
            "{kind:?}: {} relayed ({} masked), {} suppressed, {} flushed ({refreshed} refreshes), \
             {episodes} episodes, {deferred} frames passed up behind a due flush",
            e.relayed, e.masked, e.suppressed, e.flushed
        );
    }
}

/// A frame for the gateway's check: a PFC frame from `port`, `system` or a
/// stranger, then none to three of the faults the rules name (a tag, another
/// EtherType behind it or not, another opcode, a class-vector high byte, a
/// vector, another DMAC, a length cut or padded); or random octets.
fn random_frame(rng: &mut Rng, port: MacAddr, system: MacAddr) -> Vec<u8> {
    let len = 14 + (rng.next() % 100) as usize;
    if rng.next().is_multiple_of(8) {
        let mut f: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        if rng.next().is_multiple_of(2) {
            f[12..14].copy_from_slice(&[0x88, 0x08]);
        }
        return f;
    }
    let src = rng.pick(&[port, port, system, MacAddr([2, 0, 0, 0, 0x66, 6]), PE1_DC]);
    let any = rng.next() as u16 & 0xff;
    let vector = rng.pick(&[0x01, 0x18, 0xff, 0x80, any]);
    let times = std::array::from_fn(|_| rng.next() as u16);
    let mut f = pfc(src, vector, times);
    for _ in 0..rng.next() % 4 {
        // h: the MAC Control header's offset.
        let h = if f.len() >= 18 && f[12..14] == [0x81, 0x00] {
            18
        } else {
            14
        };
        match rng.next() % 9 {
            0 if h == 14 => {
                let tci = (rng.next() as u16).to_be_bytes();
                f.splice(12..12, [0x81, 0x00, tci[0], tci[1]]);
            }
            1 => {
                f[h - 2..h].copy_from_slice(&rng.pick(&[[0x08, 0x00], [0x88, 0xcc], [0x88, 0x09]]))
            }
            2 if f.len() > h + 1 => f[h + 1] = rng.pick(&[0x01, 0x02, 0x00]),
            3 if f.len() > h + 2 => f[h + 2] = rng.pick(&[0x00, 0x01, 0x80]),
            4 if f.len() > h + 3 => f[h + 3] = rng.pick(&[0x00, 0x08]),
            5 => f[rng.pick(&[0usize, 5])] ^= 1 << (rng.next() % 8),
            6 => f.truncate(14.max(f.len().saturating_sub(1 + (rng.next() % 50) as usize))),
            7 => f.extend((0..1 + rng.next() % 40).map(|_| rng.next() as u8)),
            _ => {}
        }
    }
    f
}

/// Whether `f` is MAC Control by its EtherType, behind one 802.1Q tag or not,
/// as the program (and the AF_PACKET path's socket filter) takes it: a tag
/// cut before its EtherType is not, where `check_pfc` says `short_frame`
/// (such a frame is under Ethernet's 60 octets: no NIC passes it on).
fn mac_control(f: &[u8]) -> bool {
    match f.get(12..14) {
        Some([0x81, 0x00]) => f.get(16..18) == Some(&[0x88, 0x08]),
        t => t == Some(&[0x88, 0x08]),
    }
}

/// The gateway's program (`xdp_gateway`) against `GatewayCheck`, its
/// reference: legal frames from the PE's port and system MAC, every illegal
/// kind, and 20,000 random frames (MAC Control or not) get the same verdict
/// (`XDP_PASS` untouched for a legal frame, `XDP_DROP` for an illegal one
/// counted under the core's reason; a frame that is not MAC Control passes
/// untouched and uncounted), the same last accepted frame, and in the end
/// the same counters as the daemon maps them (`xdp_gateway::counters`).
#[test]
fn the_gateway_program_gives_gateway_checks_verdicts_and_counters() {
    if !can_run() {
        return;
    }
    let system = MacAddr([2, 0, 0, 0, 0xe1, 0xff]);
    let cfg = GatewayConfig {
        interface: None,
        pe_port_mac: PE1_DC,
        pe_system_mac: Some(system),
        buffer: None,
        datapath: lossless_relay::Datapath::default(),
    };
    // `all` sees every frame; `ours` only those the program counts (MAC
    // Control).
    let mut all = GatewayCheck::new(&cfg).unwrap();
    let mut ours = GatewayCheck::new(&cfg).unwrap();
    let mut x = XdpRelay::load_gateway(&xdp_gateway::sources(&cfg)).unwrap();
    let mut frames: Vec<(String, Vec<u8>)> = frames_from(PE1_DC, system)
        .into_iter()
        .map(|(w, f)| (w.to_string(), f))
        .collect();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for i in 0..20_000 {
        frames.push((
            format!("random frame {i}"),
            random_frame(&mut rng, PE1_DC, system),
        ));
    }
    let before = x.counters().unwrap();
    let mut passed_up = 0;
    for (i, (what, f)) in frames.iter().enumerate() {
        let t = 1_000_000 + i as u64;
        x.set_clock(t).unwrap();
        let v = all.check(f);
        let was = x.counters().unwrap();
        let (act, out) = x.test_run(Side::Gateway, f).unwrap();
        let d = delta(&was, &x.counters().unwrap());
        if !mac_control(f) {
            assert_eq!((act, &out, d), (XDP_PASS, f, vec![]), "{what}: {f:02x?}");
            assert!(
                matches!(v, Err(DropReason::NotMacControl | DropReason::ShortFrame)),
                "{what}: {v:?}"
            );
            continue;
        }
        match v {
            Ok(pfc) => {
                assert_eq!(act, XDP_PASS, "{what}: {f:02x?}");
                assert_eq!(&out, f, "{what}: passed untouched");
                assert_eq!(
                    d,
                    vec![
                        (counter::GATEWAY_RECEIVED, 1),
                        (counter::GATEWAY_ACCEPTED, 1)
                    ],
                    "{what}"
                );
                let l = x.gateway_last().unwrap().unwrap();
                assert_eq!(
                    (l.at_ns, MacAddr(l.src), l.class_enable, l.quanta),
                    (t, pfc.src, pfc.class_enable, pfc.quanta),
                    "{what}: the last accepted frame"
                );
                passed_up += 1;
            }
            Err(r) => {
                assert_eq!(act, XDP_DROP, "{what}: core {r}: {f:02x?}");
                assert_eq!(
                    d,
                    vec![
                        (counter::GATEWAY_DROP + reason_index(r), 1),
                        (counter::GATEWAY_RECEIVED, 1)
                    ],
                    "{what}: counted as {r}"
                );
            }
        }
        let _ = ours.check(f);
    }
    let mut after = x.counters().unwrap();
    for (a, b) in after.iter_mut().zip(before) {
        *a -= b;
    }
    let c = ours.counters();
    assert_eq!(xdp_gateway::counters(&after), *c);
    // The frames went through every rule.
    for r in DropReason::ALL.iter().take(8) {
        if *r != DropReason::NotMacControl {
            assert!(
                c.dropped.iter().any(|(k, n)| k == *r && n > 20),
                "{r}: {c:?}"
            );
        }
    }
    assert!(passed_up > 500, "{passed_up} legal frames: {c:?}");
    eprintln!(
        "{} frames: {} MAC Control, {} accepted, {} dropped ({:?}), {} not MAC Control",
        frames.len(),
        c.received,
        c.accepted,
        c.dropped.total(),
        c.dropped,
        all.counters().received - c.received
    );
}

/// One frame through `prog` on `side` against the host's predicate `filter`:
/// a frame the predicate does not hand to the host passes untouched and is
/// counted at most as `passed` (`lossless_relay::host::Filter` is what the
/// packet sockets' filters implement, so the fast path never takes a frame
/// the AF_PACKET path would have left to the host); whatever the program
/// decides itself (drop, redirect) is a frame the predicate hands over.
fn agrees(
    prog: &mut XdpRelay,
    side: Side,
    filter: lossless_relay::host::Filter,
    f: &[u8],
) -> Result<(), proptest::test_runner::TestCaseError> {
    use proptest::prop_assert;
    if f.len() < 14 {
        // No Ethernet header: the kernel's test run refuses it, and no NIC
        // hands one over.
        return Ok(());
    }
    let before = prog.counters().unwrap();
    let (act, out) = prog.test_run(side, f).unwrap();
    let d = delta(&before, &prog.counters().unwrap());
    if !filter.takes(f) {
        prop_assert!(
            act == XDP_PASS && out == f,
            "{side:?}: {act} on a frame the host is not handed: {f:02x?}"
        );
        // xdp_wan counts what it leaves to the AF_PACKET path before it
        // knows whether the socket's filter takes it.
        let passed = [counter::INGRESS_PASSED];
        prop_assert!(
            d.iter().all(|(c, _)| passed.contains(c)),
            "{side:?}: counted {d:?} for a frame the host is not handed: {f:02x?}"
        );
    } else if act != XDP_PASS {
        prop_assert!(act == XDP_DROP || act == XDP_REDIRECT, "{side:?}: {act}");
    }
    Ok(())
}

/// The XDP programs (`xdp_dc`, `xdp_wan`, `xdp_gateway`) against the relay
/// host's filter predicate, which the lab runs and the packet sockets'
/// classic BPF programs implement (lossless-relay's `tests/filter.rs`), on
/// generated frames (`example::probe_frame`: tags, EtherTypes, IP headers,
/// UDP ports, cuts) and on our tunnel's frames with one octet changed.
#[test]
fn the_xdp_programs_take_only_what_the_hosts_predicate_hands_over() {
    if !can_run() {
        return;
    }
    use std::cell::RefCell;

    use lossless_relay::example::probe_frame;
    use lossless_relay::host::Filter;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    let gw_cfg = GatewayConfig {
        interface: None,
        pe_port_mac: PE1_DC,
        pe_system_mac: None,
        buffer: None,
        datapath: lossless_relay::Datapath::default(),
    };
    // The runner's closure is `Fn`: the programs are borrowed in it.
    let gw = RefCell::new(XdpRelay::load_gateway(&xdp_gateway::sources(&gw_cfg)).unwrap());
    for kind in KINDS {
        let cfg = example::pe(2, kind);
        let wan = Filter::wan(&cfg.tunnel);
        let udp = match wan {
            Filter::Udp { port } => port,
            _ => 4789,
        };
        let mut core2 = Relay::new(cfg, Instant::ZERO).unwrap();
        core2.handle_frame(Instant::ZERO, Port::Dc, &pfc(DC2_GW, 0x08, [0xffff; 8]));
        let tunnelled = sent(&mut core2).remove(0);
        // PE2 egress on the DC side, PE1 ingress on the WAN side.
        let x2 = RefCell::new(load(2, kind));
        let x1 = RefCell::new(load(1, kind));
        let mut runner = TestRunner::new(Config {
            cases: 512,
            failure_persistence: None,
            ..Config::default()
        });
        let frames = (
            proptest::collection::vec(any::<u8>(), 0..48),
            any::<bool>(),
            any::<(usize, u8)>(),
        );
        runner
            .run(&frames, |(seed, from_gw, (at, x))| {
                let src = if from_gw { DC2_GW } else { PE1_DC };
                let f = probe_frame(&seed, src, udp);
                agrees(&mut x2.borrow_mut(), Side::Dc, Filter::MacControl, &f)?;
                agrees(&mut x1.borrow_mut(), Side::Wan, wan, &f)?;
                agrees(&mut gw.borrow_mut(), Side::Gateway, Filter::MacControl, &f)?;
                let mut t = tunnelled.clone();
                let i = at % t.len();
                t[i] ^= x;
                agrees(&mut x1.borrow_mut(), Side::Wan, wan, &t)?;
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
    }
}
