#![allow(clippy::unwrap_used)]
//! The DCBX peer's identity is no pass through the receive budget (issue 29, item 1),
//! and the PFC frames the host receives stand in for a driver without PFC counters
//! (item 11): two node cores negotiate by hand, then one is flooded with frames
//! carrying the other's MSAP and MAC.

use std::path::Path;

use lossless_dcbx::{Duration, Instant};
use lossless_node::config::DaemonConfig;
use lossless_node::hardware::{HardwareError, HardwareErrorKind};
use lossless_node::link::Link;
use lossless_node::node::{Identity, Node, Now, Output};
use lossless_node::protocol::{Request, Response};
use lossless_node::state::PersistedState;
use serde_json::Value;

const NAMES: [&str; 2] = ["va", "vb"];
const MAC_B: [u8; 6] = [2, 0, 0, 0, 0, 0x0b];

fn link(i: usize) -> Link {
    Link {
        ifindex: 10 + i as u32,
        name: NAMES[i].to_string(),
        mac: Some([2, 0, 0, 0, 0, 0x0a + i as u8]),
        admin_up: true,
        oper_up: true,
        carrier: true,
        alias: None,
    }
}

fn at(ms: u64) -> Now {
    Now {
        mono: Instant::ZERO + Duration::from_millis(ms),
        unix: ms as f64 / 1e3,
    }
}

/// A PFC frame from B's MAC pausing priority 3 (XOFF, the longest pause).
fn xoff_from_b() -> Vec<u8> {
    let mut f = vec![0x01, 0x80, 0xc2, 0, 0, 0x01];
    f.extend(MAC_B);
    f.extend([0x88, 0x08, 0x01, 0x01, 0x00, 0b1000]);
    for p in 0..8 {
        f.extend(if p == 3 { [0xff, 0xff] } else { [0, 0] });
    }
    f.resize(60, 0);
    f
}

struct Pair {
    d: [Node; 2],
    /// B's last LLDPDU, as A received it.
    lldpdu_b: Option<Vec<u8>>,
    /// What A output that the exchange does not carry out.
    a_out: Vec<Output>,
}

impl Pair {
    /// Both ports up and negotiated; A with this `[ports."va"]` section's extra lines.
    fn negotiated(a_port: &str) -> Pair {
        let node = |i: usize, extra: &str| {
            let text = format!("[ports.\"{}\"]\n{extra}", NAMES[i]);
            let config = DaemonConfig::parse(&text, Path::new("peer_budget.toml")).unwrap();
            Node::new(
                config,
                Identity::default(),
                PersistedState::default(),
                at(0),
            )
        };
        let mut p = Pair {
            d: [node(0, a_port), node(1, "")],
            lldpdu_b: None,
            a_out: Vec::new(),
        };
        p.d[0].handle_links(at(0), vec![link(0)]);
        p.d[1].handle_links(at(0), vec![link(1)]);
        for ms in 0..50 {
            p.exchange(at(ms));
        }
        assert_eq!(p.show(at(50))["peer_present"], true, "negotiated");
        p
    }

    /// Carries the frames each node sends to the other, and answers A's PFC readings
    /// as a driver without counters does (veth).
    fn exchange(&mut self, now: Now) {
        for d in &mut self.d {
            d.handle_timeout(now);
        }
        for _ in 0..10 {
            let mut moved = false;
            for (from, to) in [(0, 1), (1, 0)] {
                while let Some(out) = self.d[from].poll_output() {
                    match out {
                        Output::Send { frame, .. } => {
                            moved = true;
                            if from == 1 {
                                self.lldpdu_b = Some(frame.clone());
                            }
                            self.d[to].handle_frame(now, 10 + to as u32, &frame);
                        }
                        Output::ReadPfc { ifindex, .. } => {
                            let e = HardwareError::new(
                                HardwareErrorKind::NotSupported,
                                "Operation not supported",
                            );
                            self.d[from].handle_pfc_counters(now, ifindex, Err(e));
                        }
                        o if from == 0 => self.a_out.push(o),
                        _ => {}
                    }
                }
            }
            if !moved {
                break;
            }
        }
    }

    fn request(&mut self, now: Now, req: Request) -> Response {
        self.d[0].handle_request(now, 7, req);
        while let Some(out) = self.d[0].poll_output() {
            if let Output::Reply { id: 7, response } = out {
                return response;
            }
            self.a_out.push(out);
        }
        panic!("no reply")
    }

    fn show(&mut self, now: Now) -> Value {
        let r = self.request(now, Request::DcbxShow { port: None });
        r.result.unwrap()["ports"][0].clone()
    }

    fn io(&mut self, now: Now) -> Value {
        let r = self.request(now, Request::Counters { port: None });
        r.result.unwrap()["ports"][0]["io"].clone()
    }

    /// `frame` on A's port `n` times at `now`: the times A asked for a socket of
    /// the port's own.
    fn flood(&mut self, now: Now, frame: &[u8], n: usize) -> usize {
        let mut asked = 0;
        for _ in 0..n {
            self.d[0].handle_frame(now, 10, frame);
            while let Some(out) = self.d[0].poll_output() {
                asked += usize::from(matches!(out, Output::ReceiveAlone { ifindex: 10 }));
            }
        }
        asked
    }
}

/// Copies of the peer's own LLDPDU (its MSAP) are budgeted like anyone's, in a bucket
/// of their own: past it they are dropped unread, counted as the peer's, and the port
/// asks for a socket of its own; the peer's next LLDPDU a second later is read.
#[test]
fn a_flood_with_the_peer_s_msap_is_budgeted_and_isolates_the_port() {
    let mut p = Pair::negotiated("");
    let t = at(100);
    let copy = p.lldpdu_b.clone().expect("B sent an LLDPDU");
    let before = p.io(t);
    let asked = p.flood(t, &copy, 10_000);
    let io = p.io(t);
    assert_eq!(asked, 1, "asked once for a socket of its own: {io}");
    assert_eq!(io["own_socket"], true, "{io}");
    let over = io["rx_over_budget"].as_u64().unwrap();
    let processed = io["rx_frames"].as_u64().unwrap() - before["rx_frames"].as_u64().unwrap();
    assert_eq!(processed + over, 10_000, "{io}");
    assert!(
        processed <= 200,
        "the peer's LLDPDUs: its burst of 200 at most, {processed} processed"
    );
    assert_eq!(
        io["rx_peer_over_budget"], over,
        "all from the peer's identity: {io}"
    );
    // A second later the bucket has refilled: the peer's LLDPDU is read, still the peer.
    let t2 = at(1100);
    p.flood(t2, &copy, 1);
    assert_eq!(p.io(t2)["rx_frames"], io["rx_frames"].as_u64().unwrap() + 1);
    assert_eq!(p.show(t2)["peer_present"], true);
}

/// PFC frames from the peer's MAC: every one is counted per priority (`pfc show`'s
/// `host`), whatever the budget; the agent is given no more than the peer's allowance
/// for MAC Control (ten times the others'), and past it the port asks for a socket
/// of its own.
#[test]
fn a_pfc_flood_from_the_peer_s_mac_is_counted_but_bounded() {
    let mut p = Pair::negotiated("");
    let t = at(100);
    let asked = p.flood(t, &xoff_from_b(), 20_000);
    let io = p.io(t);
    assert_eq!(asked, 1, "{io}");
    let (macctl, over) = (
        io["mac_control_rx"].as_u64().unwrap(),
        io["rx_over_budget"].as_u64().unwrap(),
    );
    assert_eq!(macctl, 2_000, "the peer's MAC Control burst: {io}");
    assert_eq!(macctl + over, 20_000, "{io}");
    assert_eq!(io["rx_peer_over_budget"], over, "{io}");
    let r = p.request(t, Request::PfcShow { port: None });
    let host = r.result.unwrap()["ports"][0]["host"].clone();
    assert_eq!(host["pfc_frames"], 20_000, "every one counted: {host}");
    assert_eq!(host["xoff"][3], 20_000, "{host}");
    assert_eq!(host["xoff"][2], 0, "{host}");
    assert_eq!(host["quanta"][3], 20_000u64 * 0xffff, "{host}");
}

/// A driver without PFC counters (veth): with the watchdog on, the PFC frames the
/// host receives are its counters (`source` `host`); a storm the peer sends is seen
/// and the health says what the watchdog still cannot see (the pauses this NIC
/// sends) instead of calling it blind.
#[test]
fn the_host_s_pfc_frames_stand_in_for_a_driver_without_counters() {
    let mut p = Pair::negotiated("[ports.\"va\".pfc_watchdog]\nenabled = true\npriorities = [3]\n");
    let pfc = |p: &mut Pair, now: Now| {
        let r = p.request(now, Request::PfcShow { port: None });
        r.result.unwrap()["ports"][0].clone()
    };
    let problems = |p: &mut Pair, now: Now| {
        let r = p.request(now, Request::Status);
        r.result.unwrap()["ports"][0]["problems"].to_string()
    };
    let v = pfc(&mut p, at(60));
    assert_eq!(
        (v["available"].clone(), v["source"].clone()),
        (true.into(), "host".into()),
        "{v}"
    );
    assert!(
        v["reason"].as_str().unwrap().contains("not supported"),
        "why the driver's are not: {v}"
    );
    let said = problems(&mut p, at(60));
    assert!(
        said.contains("counts the PFC frames the host receives")
            && said.contains("pauses this NIC sends are never seen"),
        "what it cannot see, none received yet: {said}"
    );
    assert!(!said.contains("sees no counters"), "not blind: {said}");
    // 1 s of 20 XOFFs every 10 ms on priority 3 from the peer: a storm, received.
    let frame = xoff_from_b();
    for ms in (100..1100).step_by(10) {
        p.flood(at(ms), &frame, 20);
        p.exchange(at(ms));
    }
    let v = pfc(&mut p, at(1100));
    let p3 = v["priorities"][3].clone();
    assert_eq!(p3["state"], "storm", "{v}");
    assert_eq!(p3["direction"], "rx", "{v}");
    assert_eq!(v["host"]["xoff"][3], 2_000, "{v}");
    assert!(p3["rx_frames"].as_u64().unwrap() > 1_000, "{p3}");
    assert!(
        p3["tx_frames"].is_null(),
        "the host sees none it sends: {p3}"
    );
    assert!(
        p.a_out.iter().any(|o| matches!(o, Output::Event(e)
            if serde_json::to_string(e).unwrap().contains("pfc_storm"))),
        "a pfc_storm event"
    );
    let m = p.d[0].render_metrics(at(1100), None);
    for line in [
        "lossless_pfc_available{port=\"va\"} 1",
        "lossless_pfc_host_source{port=\"va\"} 1",
        "lossless_pfc_host_frames_total{port=\"va\",priority=\"3\",kind=\"xoff\"} 2000",
    ] {
        assert!(m.lines().any(|l| l == line), "{line} not in the metrics");
    }
    let said = problems(&mut p, at(1100));
    assert!(
        said.contains("(2000 so far)") && said.contains("not the pauses this NIC sends"),
        "{said}"
    );
}
