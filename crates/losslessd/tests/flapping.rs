#![allow(clippy::unwrap_used)]
//! A flapping peer against losslessd itself (issue 29, items 2 and 3): a willing port
//! with `apply = "dcbnl"` under the emulated DCB driver, and crafted LLDPDUs put on
//! the other end of the veth (lossless-testkit's injector) that alternate what the
//! peer advertises, one every millisecond for 5 s. The driver's log counts the dcbnl
//! requests; the daemon's log its lines.
//!
//! Checked: the NIC is programmed at most once per `nic_hold_ms` (1 s) and holds the
//! latest configuration at the end; `auto` mode flips at most once per 5 s; the peer
//! is reported flapping (status, metrics, events) and the log carries summaries, not
//! a line per event. Before the dampening (`LOSSLESSD_BIN` at an older build) the
//! same runs made thousands of dcbnl requests, mode changes and log lines.
//!
//! The 5 s of frames is the load, not a wait; every result is waited for.

mod common;

use std::time::{Duration, Instant};

use common::*;
use lossless_node::protocol::Request;
use lossless_testkit::inject::Injector;
use lossless_wire::cee::{self, CeeDcbx, Control, FeatureHeader, FeatureTlv, PriorityMap};
use lossless_wire::frame::emit_lldp_frame;
use lossless_wire::ieee::{IeeeDcbx, PfcConfig};
use lossless_wire::lldp::Lldpdu;
use lossless_wire::MacAddr;
use serde_json::Value;

/// The peer: va's MAC.
const PEER: MacAddr = MacAddr([2, 0, 0, 0, 0, 0x0a]);
/// How long the peer flaps, one LLDPDU per millisecond.
const FLAP: Duration = Duration::from_secs(5);

const CONF: &str = "[ports.\"vb\"]\napply = \"dcbnl\"\n";

fn frame(cee_dcbx: Option<CeeDcbx>, ieee_dcbx: IeeeDcbx) -> Vec<u8> {
    let (chassis, port) = Lldpdu::mac_ids(&PEER);
    let mut pdu = Lldpdu::new(chassis, port, 120);
    pdu.cee_dcbx = cee_dcbx;
    pdu.ieee_dcbx = ieee_dcbx;
    let mut out = Vec::new();
    emit_lldp_frame(PEER, &pdu, &mut out).unwrap();
    out
}

/// IEEE 802.1Qaz PFC only, not willing, on `pfc`.
fn ieee(pfc: u8) -> Vec<u8> {
    let tlvs = IeeeDcbx::new(
        None,
        None,
        Some(PfcConfig {
            willing: false,
            mbc: false,
            cap: 8,
            enabled: PriorityMap(pfc),
            headroom_measurement: false,
        }),
        None,
    );
    frame(None, tlvs)
}

/// CEE DCBX PFC only, not willing, on `pfc`, SeqNo `seq`, acknowledging `ack` (a
/// CEE port takes the peer's configuration once the peer acknowledged its own).
fn cee(pfc: u8, seq: u32, ack: u32) -> Vec<u8> {
    let tlv = CeeDcbx::new(
        Control {
            oper_version: 0,
            max_version: 0,
            seq,
            ack,
        },
        None,
        Some(FeatureTlv::new(
            FeatureHeader::new(true, false),
            cee::PfcConfig {
                priorities: PriorityMap(pfc),
                num_tcs: 8,
            },
        )),
        None,
    );
    frame(Some(tlv), IeeeDcbx::default())
}

struct Run {
    /// Programmings the daemon made (`hardware.applied` in `status`).
    programs: u64,
    /// dcbnl requests the driver logged while the peer flapped (reads not logged).
    requests: usize,
    mode_changes: u64,
    log_lines: usize,
}

/// losslessd on vb with the emulated driver; once it runs, `pdu(i, ack)` on va every
/// millisecond for [`FLAP`], `ack` the CEE SeqNo the port sends (after one CEE
/// LLDPDU, when `cee_first`; else 0). Prints the figures.
fn flap(
    what: &str,
    cee_first: bool,
    mut pdu: impl FnMut(u32, u32) -> Vec<u8>,
) -> (OnVeth, ShimEnv, TempDir, Run) {
    let dir = TempDir::new();
    let shim = ShimEnv::new(&dir.path().join("driver"), &["vb"]);
    let net = OnVeth::start(CONF, &shim.vars());
    wait_for(Duration::from_secs(5), "vb probed, link up", || {
        let st = net.d.try_call(&Request::Status)?;
        let p = &st["ports"][0];
        (p["link_up"] == true && p["hardware"]["mode"] == "dcbnl").then_some(())
    });
    let inject = Injector::open(&net.na, "va");
    let mut ack = 0;
    if cee_first {
        inject.send(&cee(0, 1, 0));
        ack = wait_for(Duration::from_secs(5), "the port in CEE DCBX", || {
            let d = net.d.try_call(&Request::DcbxShow {
                port: Some("vb".into()),
            })?;
            let p = &d["ports"][0];
            let seq = p["control"]["seq"].as_u64()?;
            (p["mode"]["running"] == "cee" && seq != 0).then_some(seq as u32)
        });
    }
    let applied = |d: &Daemon| {
        d.call(&Request::Status)["ports"][0]["hardware"]["applied"]
            .as_u64()
            .unwrap_or(0)
    };
    let programs0 = applied(&net.d);
    let taken = |d: &Daemon| counters(d)["io"]["rx_frames"].as_u64().unwrap_or(0);
    let taken0 = taken(&net.d);
    let requests0 = shim.log().len();
    let lines0 = net.d.log().lines().count();
    let start = Instant::now();
    let mut i = 0;
    while start.elapsed() < FLAP {
        inject.send(&pdu(i, ack));
        i += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    let secs = start.elapsed().as_secs_f64();
    let run = Run {
        programs: applied(&net.d) - programs0,
        requests: shim.log().len() - requests0,
        mode_changes: counters(&net.d)["dcbx"]["mode_changes"].as_u64().unwrap(),
        log_lines: net.d.log().lines().count() - lines0,
    };
    println!(
        "{what}: {i} LLDPDUs in {secs:.1} s ({} taken, the rest past the receive budget): {} \
         programmings, {} dcbnl requests, {} mode changes, {} log lines ({} on {})",
        taken(&net.d) - taken0,
        run.programs,
        run.requests,
        run.mode_changes,
        run.log_lines,
        net.d.bin.display(),
        machine()
    );
    (net, shim, dir, run)
}

fn counters(d: &Daemon) -> Value {
    d.call(&Request::Counters {
        port: Some("vb".into()),
    })["ports"][0]
        .clone()
}

/// The port is reported flapping: health, metric, event.
fn reported_flapping(d: &Daemon) {
    wait_for(Duration::from_secs(5), "flapping in status", || {
        let st = d.try_call(&Request::Status)?;
        let problems = st["ports"][0]["problems"].to_string();
        problems.contains("the DCBX peer flaps").then_some(())
    });
    let events = d.call(&Request::Events { follow: false });
    let flapping = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["event"] == "flapping" && e["active"] == true);
    assert!(flapping, "no flapping event: {events:#}");
    let log = d.log();
    assert!(
        log.contains("the DCBX peer is flapping"),
        "no summary in the log"
    );
}

#[test]
fn a_peer_alternating_its_ieee_pfc_programs_the_nic_once_per_hold() {
    if !require("flapping_ieee", EMULATED_DRIVER) {
        return;
    }
    let (net, shim, _dir, run) = flap("IEEE PFC alternating", false, |i, _| {
        ieee(if i.is_multiple_of(2) {
            0b0000_1000
        } else {
            0b0001_0000
        })
    });
    // One programming per second (SDCBX once; each IEEE programming is ETS, PFC and
    // a read-back): a few dozen requests, not one programming per frame.
    assert!(
        run.requests <= 60,
        "{} dcbnl requests in 5 s: the NIC follows the peer frame by frame\n{}",
        run.requests,
        shim.log_text()
    );
    assert!(run.log_lines <= 100, "{} log lines in 5 s", run.log_lines);
    reported_flapping(&net.d);
    // What runs (the last LLDPDU the port took: the receive budget drops the peer's
    // past 100 a second) is what the NIC holds once the hold ran out.
    wait_for(
        Duration::from_secs(3),
        "the NIC holds the latest PFC",
        || {
            let d = net.d.try_call(&Request::DcbxShow {
                port: Some("vb".into()),
            })?;
            let oper = &d["ports"][0]["ieee"]["pfc"]["oper"];
            let list = oper.get("enabled").unwrap_or(oper).as_array()?;
            let want: u8 = list
                .iter()
                .filter_map(Value::as_u64)
                .map(|p| 1u8 << p)
                .sum();
            (want != 0 && shim.state("vb")?.ieee_pfc_en() == want).then_some(())
        },
    );
}

#[test]
fn a_peer_alternating_its_cee_pfc_programs_the_nic_once_per_hold() {
    if !require("flapping_cee", EMULATED_DRIVER) {
        return;
    }
    let (net, shim, _dir, run) = flap("CEE PFC alternating", true, |i, ack| {
        cee(
            if i.is_multiple_of(2) {
                0b0000_1000
            } else {
                0b0001_0000
            },
            i + 2,
            ack,
        )
    });
    assert!(
        run.requests <= 120,
        "{} dcbnl requests in 5 s: the NIC follows the peer frame by frame\n{}",
        run.requests,
        shim.log_text()
    );
    assert!(run.log_lines <= 100, "{} log lines in 5 s", run.log_lines);
    reported_flapping(&net.d);
}

#[test]
fn a_peer_alternating_ieee_and_cee_flips_auto_mode_once_per_hold() {
    if !require("flapping_mode", EMULATED_DRIVER) {
        return;
    }
    let (net, shim, _dir, run) = flap("IEEE and CEE alternating", false, |i, _| {
        if i.is_multiple_of(2) {
            cee(0b0000_1000, i + 1, 0)
        } else {
            ieee(0b0000_1000)
        }
    });
    // At once on the first CEE LLDPDU, then at most once per 5 s.
    assert!(
        run.mode_changes <= 2,
        "{} mode changes in 5 s",
        run.mode_changes
    );
    assert!(
        run.requests <= 120,
        "{} dcbnl requests in 5 s\n{}",
        run.requests,
        shim.log_text()
    );
    assert!(run.log_lines <= 100, "{} log lines in 5 s", run.log_lines);
    reported_flapping(&net.d);
}
