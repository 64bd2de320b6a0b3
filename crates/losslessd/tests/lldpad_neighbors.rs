#![allow(clippy::unwrap_used)]
//! A device on the link, against lldpad in both DCBX versions: lldpad on `va` (not
//! willing, PFC on 3 and 4), losslessd on `vb` (willing), and fake LLDPDUs put on
//! `va` past its qdisc, so that only losslessd hears them (lossless-testkit's
//! `Injector`). The multiple-neighbour rule holds for at most `max_neighbor_hold`, and
//! when the fake leaves the port runs lldpad's PFC again within about a second, also
//! when it held nothing of lldpad's and had to ask lldpad for a fresh LLDPDU.

mod common;

use std::time::{Duration, Instant};

use common::*;
use lossless_node::protocol::Request;
use lossless_testkit::{require, Injector};
use serde_json::Value;

const FAKE: [u8; 6] = [0x02, 0xfa, 0, 0, 0, 1];
const EVERY: Duration = Duration::from_millis(20);

/// lldpad in netns A on `va`, losslessd in netns B on `vb`, and the fake's socket.
struct Link {
    // Drop order: the socket and lldpad, then the daemon and the namespaces.
    fake: Injector,
    lldpad: Option<LldpadPeer>,
    mode: Mode,
    on: OnVeth,
}

impl Link {
    /// losslessd with `[ports."vb"]` plus `extra`; lldpad not started yet.
    fn new(extra: &str, mode: Mode) -> Link {
        let on = OnVeth::start(&format!("[ports.\"vb\"]\n{extra}"), &[]);
        on.na.wait_running("va");
        Link {
            fake: Injector::open(&on.na, "va"),
            lldpad: None,
            mode,
            on,
        }
    }

    /// lldpad on `va`, not willing, PFC on 3 and 4.
    fn start_lldpad(&mut self) {
        let lldpad = LldpadPeer::start(&self.on.na, "va", self.mode);
        match self.mode {
            Mode::Cee => {
                lldpad.dcbtool_ok(&["sc", "va", "pfc", "e:1", "a:1", "w:0", "pfcup:00011000"]);
            }
            Mode::Ieee => {
                lldpad.lldptool_ok(&[
                    "-T",
                    "-i",
                    "va",
                    "-V",
                    "PFC",
                    "enableTx=yes",
                    "willing=no",
                    "enabled=3,4",
                ]);
            }
        }
        self.lldpad = Some(lldpad);
    }

    /// Both up, and losslessd runs lldpad's PFC.
    fn converged(extra: &str, mode: Mode) -> Link {
        let mut l = Link::new(extra, mode);
        l.start_lldpad();
        l.wait(
            Duration::from_secs(20),
            "losslessd to run lldpad's PFC",
            Link::runs_lldpads,
        );
        l
    }

    fn ours(&self) -> Value {
        self.on.d.dcbx("vb")
    }

    /// The PFC feature of the version the port runs.
    fn pfc(&self, v: &Value) -> Value {
        match v["mode"]["running"].as_str() {
            Some("cee") => v["pfc"].clone(),
            _ => v["ieee"]["pfc"].clone(),
        }
    }

    /// A DCBX peer, and PFC on lldpad's priorities.
    fn runs_lldpads(&self, v: &Value) -> bool {
        let pfc = self.pfc(v);
        let oper = match v["mode"]["running"].as_str() {
            Some("cee") => priorities(&pfc["applied"]),
            _ => pfc["oper"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_u64).collect())
                .unwrap_or_default(),
        };
        v["peer_present"] == true && pfc["oper_mode"] == true && oper == [3, 4]
    }

    /// No DCBX peer: more than one neighbour.
    fn blocked(&self, v: &Value) -> bool {
        v["peer_present"] == false && self.pfc(v)["reason"] == "multiple_peers"
    }

    /// Polls `dcbx show vb` every 20 ms until `ok`; returns when it held.
    fn wait(&self, limit: Duration, what: &str, ok: impl Fn(&Link, &Value) -> bool) -> Instant {
        let t0 = Instant::now();
        loop {
            let v = self.ours();
            if ok(self, &v) {
                return Instant::now();
            }
            assert!(
                t0.elapsed() < limit,
                "{:?}: no {what} after {limit:?}: {}\n{}",
                self.mode,
                self.pfc(&v),
                self.on.d.log()
            );
            std::thread::sleep(EVERY);
        }
    }

    fn counter(&self, name: &str) -> u64 {
        let v = self.on.d.call(&Request::Counters {
            port: Some("vb".into()),
        });
        v["ports"][0]["lldp"][name].as_u64().unwrap()
    }

    fn neighbors(&self) -> Value {
        let v = self.on.d.call(&Request::Neighbors {
            port: Some("vb".into()),
        });
        v["ports"][0].clone()
    }
}

#[test]
fn a_configured_cap_of_5_s_holds_against_lldpad() {
    if !require(
        "a_configured_cap_of_5_s_holds_against_lldpad",
        lossless_testkit::oracle::LLDPAD_PEER,
    ) {
        return;
    }
    for mode in [Mode::Cee, Mode::Ieee] {
        let l = Link::converged("max_neighbor_hold = 5\n", mode);
        let t0 = Instant::now();
        l.fake.lldpdu(FAKE, u16::MAX);
        l.wait(Duration::from_secs(2), "multiple_peers", Link::blocked);
        let t1 = l.wait(
            Duration::from_secs(10),
            "lldpad's PFC again",
            Link::runs_lldpads,
        );
        let took = t1 - t0;
        println!(
            "{mode:?}: TTL 65535 from a second MSAP, max_neighbor_hold 5 s: no peer for {took:?}"
        );
        assert!(
            took >= Duration::from_millis(4900),
            "{mode:?}: released after {took:?}"
        );
        // Then, in CEE DCBX, lldpad's acknowledgement within its one-second tick.
        assert!(
            took <= Duration::from_millis(6500),
            "{mode:?}: released after {took:?}"
        );
        assert_eq!(l.counter("neighbor_hold_expiries"), 1, "{mode:?}");
        let n = l.neighbors();
        let roles: Vec<(&str, &str)> = n["neighbors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                (
                    n["chassis_id"].as_str().unwrap(),
                    n["role"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            roles,
            [
                ("02:00:00:00:00:0a", "negotiated"),
                ("02:fa:00:00:00:01", "set_aside")
            ],
            "{mode:?}: {n}"
        );
    }
}

#[test]
fn a_fakes_shutdown_gives_lldpads_pfc_back_within_a_second() {
    if !require(
        "a_fakes_shutdown_gives_lldpads_pfc_back_within_a_second",
        lossless_testkit::oracle::LLDPAD_PEER,
    ) {
        return;
    }
    for mode in [Mode::Cee, Mode::Ieee] {
        // We hold lldpad's LLDPDU: its configuration runs the moment the fake leaves
        // (in CEE DCBX once lldpad acknowledges our SeqNo without the Error flags the
        // fake made us set, within its one-second tick).
        let l = Link::converged("", mode);
        l.fake.lldpdu(FAKE, u16::MAX);
        l.wait(Duration::from_secs(2), "multiple_peers", Link::blocked);
        std::thread::sleep(Duration::from_secs(2));
        let t0 = Instant::now();
        l.fake.lldpdu(FAKE, 0);
        let took = l.wait(
            Duration::from_secs(40),
            "lldpad's PFC again",
            Link::runs_lldpads,
        ) - t0;
        println!("{mode:?}: fake shutdown, lldpad's LLDPDU held: PFC back after {took:?}");
        assert!(took <= Duration::from_millis(1500), "{mode:?}: {took:?}");

        // We hold nothing of lldpad's (a remote MIB of one, the fake's since before
        // lldpad started): we ask lldpad for a fresh LLDPDU, which it sends within its
        // one-second tick.
        let mut l = Link::new("max_neighbors = 1\n", mode);
        l.fake.lldpdu(FAKE, u16::MAX);
        l.start_lldpad();
        l.wait(Duration::from_secs(20), "multiple_peers", Link::blocked);
        // lldpad quiet: no LLDPDU of its for 3 s (its next one is up to 30 s away).
        let mut seen = (l.counter("frames_discarded"), Instant::now());
        while seen.1.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(100));
            let n = l.counter("frames_discarded");
            if n != seen.0 {
                seen = (n, Instant::now());
            }
        }
        assert!(seen.0 > 0, "{mode:?}: lldpad's LLDPDUs were discarded");
        assert_eq!(l.neighbors()["discarded_msaps"], 1, "{mode:?}");
        let t0 = Instant::now();
        l.fake.lldpdu(FAKE, 0);
        let took = l.wait(
            Duration::from_secs(40),
            "lldpad's PFC again",
            Link::runs_lldpads,
        ) - t0;
        println!("{mode:?}: fake shutdown, nothing of lldpad's held: PFC back after {took:?}");
        assert!(took <= Duration::from_millis(1500), "{mode:?}: {took:?}");
    }
}
