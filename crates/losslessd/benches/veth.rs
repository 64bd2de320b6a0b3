//! losslessd on veth, against lldpad in the same run (needs root, lldpad, gcc):
//!
//!   cargo bench -p losslessd --bench veth              everything
//!   cargo bench -p losslessd --bench veth -- pair      only losslessd <-> losslessd
//!   (sections: pair, anchor, ieee, auto-cee, ieee-anchor, mixed, restart,
//!   scale, headroom; headroom runs only when named)
//!
//! * pair:    link-up -> agreed operational PFC on both ends, two losslessd
//!   in CEE DCBX (`mode = "cee"` on both).
//! * anchor:  the same for two lldpads (CEE), the figure to beat.
//! * ieee:    two losslessd in IEEE 802.1Qaz (`mode = "ieee"`): link-up ->
//!   both ends agreed (`all_syncd`) on PFC 3,4 and on the ETS table that A
//!   recommends and B (willing) runs.
//! * auto-cee: an auto port (the default) against a losslessd with
//!   `mode = "cee"`: link-up -> the auto port has fallen back to CEE and both
//!   agree on PFC, as in pair; with pair in the same run, the difference (the
//!   fallback's cost) in time and in LLDPDUs sent.
//! * ieee-anchor: two lldpads in IEEE 802.1Qaz mode, A not willing (ETS
//!   configuration and recommendation, PFC 3,4), B willing: link-up -> B's
//!   driver runs A's ETS and PFC and A has received B's TLVs saying so.
//! * mixed:   lldpad on one end, losslessd on the other.
//! * restart: losslessd stopped (SIGTERM, or kill -9) and started again ->
//!   both ends agreed again, timed from the new process's start; 10 s apart,
//!   so that the peer's 802.1AB transmit credit is full as in any real
//!   restart (back to back, the peer's rate limiter sets the pace: ~1 s).
//! * scale:   one losslessd with BENCH_PORTS ports (default 512; e.g.
//!   BENCH_PORTS=4096), peers a second losslessd in another namespace,
//!   simultaneous link-up -> all converged; then CPU and RSS over a
//!   steady-state window (BENCH_STEADY_S, default 30 s).
//! * headroom: two losslessd measuring the link (Adaptive PFC Headroom),
//!   link-up -> both ports show a measured headroom, against the floor "settles
//!   within 1 s of link-up with at most 100 frames per port"; the measurement
//!   frames each port sent and received, counted once both rounds are over; the
//!   same after a link flap. BENCH_RUNS runs (default and minimum 20);
//!   BENCH_DEBUG=1 prints each run; BENCH_HEADROOM_LINE=100us puts the delay
//!   line between the two (two veth pairs, as in tests/headroom.rs).
//!
//! Wall times are measured from just before the `ip link set up` (or the
//! spawn) to the first poll that sees the agreement, polling the control
//! socket every 0.5 ms (dcbtool every 10 ms for lldpad, which is itself
//! slower to answer). The daemon's own figure (`last_convergence_ms`: link
//! event to every feature Syncd) is printed beside it.
#![allow(clippy::unwrap_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::*;
use lossless_node::protocol::Request;
use lossless_testkit::lldptool_fields;
use serde_json::{json, Value};

const MAC_A: &str = "02:00:00:00:00:0a";
const MAC_B: &str = "02:00:00:00:00:0b";

const NOT_WILLING: &str = "[ports.\"va\"]\npfc = { willing = false, priorities = [3, 4] }\n";
const CEE: &str = "dcbx = { mode = \"cee\" }\n";

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |s: &str| filter.is_empty() || filter.iter().any(|f| f == s);
    // lldpad (under the emulated driver) only for the sections that run it.
    let with_lldpad = ["anchor", "ieee-anchor", "mixed"].iter().any(|s| want(s));
    let needs: &[Oracle] = if with_lldpad {
        LLDPAD_PEER
    } else {
        &[Oracle::Netns]
    };
    if !require("veth bench", needs) {
        return;
    }
    println!("machine: {}", machine());
    let runs: usize = env_or("BENCH_RUNS", 20);
    let lldpad_runs: usize = env_or("BENCH_RUNS_LLDPAD", 3);
    let ports: usize = env_or("BENCH_PORTS", 512);
    let mut pair_samples = Samples::default();
    if want("pair") {
        pair_samples = pair(runs);
    }
    let pair_wall = median(&pair_samples.wall);
    if want("anchor") {
        anchor(lldpad_runs);
    }
    let pair_frames = want("pair").then(|| pair_samples.frames.clone());
    if want("ieee") {
        ieee(runs);
    }
    if want("auto-cee") {
        auto_cee(runs, pair_frames.as_deref(), pair_wall);
    }
    if want("ieee-anchor") {
        ieee_anchor(lldpad_runs);
    }
    if want("mixed") {
        mixed(lldpad_runs);
    }
    if want("restart") {
        restart(runs.min(5));
    }
    if want("scale") {
        scale(ports);
    }
    // Not part of "everything": name it.
    if filter.iter().any(|f| f == "headroom") {
        headroom(runs.max(20));
    }
}

fn stats(name: &str, mut v: Vec<f64>) {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        println!("{name}: no samples");
        return;
    }
    println!(
        "{name}: median {:.1} ms, min {:.1}, max {:.1} ({n} runs)",
        v[n / 2],
        v[0],
        v[n - 1]
    );
}

fn agreed(d: &Daemon, port: &str, pfc: &[u64]) -> bool {
    let v = d.dcbx(port);
    converged(&v) && priorities(&v["pfc"]["oper"]) == pfc
}

fn own_ms(d: &Daemon) -> f64 {
    d.call(&Request::Status)["ports"][0]["last_convergence_ms"]
        .as_f64()
        .unwrap_or(f64::NAN)
}

fn poll(limit: Duration, mut f: impl FnMut() -> bool) -> Option<f64> {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if f() {
            return Some(t0.elapsed().as_secs_f64() * 1e3);
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    None
}

/// What a run of two losslessd gives: wall time from link-up to both agreed, the
/// daemons' own figure, and the LLDPDUs both had sent by then.
#[derive(Default, Clone)]
struct Samples {
    wall: Vec<f64>,
    own: Vec<f64>,
    frames: Vec<f64>,
}

fn median(v: &[f64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied()
}

fn frames_out(d: &Daemon) -> u64 {
    d.call(&Request::Counters { port: None })["ports"][0]["lldp"]["frames_out"]
        .as_u64()
        .unwrap_or(0)
}

/// Two losslessd with configurations `a` (for `va`) and `b` (for `vb`), links down;
/// `va` up, then (timed) `vb` up, until `agreed(daemon, port)` holds on both.
fn two_daemons(
    name: &str,
    runs: usize,
    a: &str,
    b: &str,
    agreed: impl Fn(&Daemon, &str) -> bool,
) -> Samples {
    let mut out = Samples::default();
    for _ in 0..runs {
        let dir = TempDir::new();
        let na = Netns::new();
        let nb = Netns::new();
        Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
        let start = |ns: &Netns, sub: &str, conf: &str| {
            let file = dir.path().join(format!("{sub}.toml"));
            std::fs::write(&file, conf).unwrap();
            Daemon::start(
                ns,
                &dir.path().join(sub),
                &["--config", file.to_str().unwrap()],
            )
        };
        let da = start(&na, "a", a);
        let db = start(&nb, "b", b);
        na.ip(&["link", "set", "va", "up"]);
        std::thread::sleep(Duration::from_millis(100));
        let t0 = Instant::now();
        nb.ip(&["link", "set", "vb", "up"]);
        let ok = poll(Duration::from_secs(10), || {
            agreed(&db, "vb") && agreed(&da, "va")
        });
        match ok {
            Some(_) => {
                out.wall.push(t0.elapsed().as_secs_f64() * 1e3);
                out.frames.push((frames_out(&da) + frames_out(&db)) as f64);
                out.own.push(own_ms(&da).max(own_ms(&db)));
            }
            None => println!("{name}: run did not converge in 10 s"),
        }
    }
    out
}

/// Two losslessd in CEE: A not willing with PFC 3,4, B willing; veth links down.
fn pair(runs: usize) -> Samples {
    let s = two_daemons(
        "pair",
        runs,
        &format!("{NOT_WILLING}{CEE}"),
        &format!("[ports.\"vb\"]\n{CEE}"),
        |d, port| agreed(d, port, &[3, 4]),
    );
    stats(
        "losslessd <-> losslessd, link-up to agreed PFC on both ends (wall)",
        s.wall.clone(),
    );
    stats(
        "losslessd <-> losslessd, the same as the daemons measure it (max of both)",
        s.own.clone(),
    );
    frames("losslessd <-> losslessd", &s.frames);
    s
}

fn frames(name: &str, v: &[f64]) {
    let (min, max) = v
        .iter()
        .fold((f64::MAX, 0.0f64), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
    match median(v) {
        Some(m) => println!(
            "{name}: LLDPDUs sent by both ends until then: median {m:.0}, min {min:.0}, max {max:.0}"
        ),
        None => println!("{name}: no samples"),
    }
}

const IEEE_A: &str = r#"
[ports."va"]
dcbx = { mode = "ieee" }
pfc = { willing = false, priorities = [3, 4] }

[ports."va".ets]
willing = false
prio_tc = [0, 0, 0, 1, 1, 0, 0, 0]
tc_bw = [50, 50, 0, 0, 0, 0, 0, 0]
tsa = ["ets", "ets", "strict", "strict", "strict", "strict", "strict", "strict"]
"#;

const IEEE_B: &str = r#"
[ports."vb"]
dcbx = { mode = "ieee" }

[ports."vb".ets]
willing = true
"#;

/// IEEE 802.1Qaz agreed: PFC 3,4 and A's ETS table running, both TLVs agreed.
fn ieee_agreed(d: &Daemon, port: &str) -> bool {
    let v = d.dcbx(port);
    converged(&v)
        && v["mode"]["running"] == "ieee"
        && v["ieee"]["pfc"]["oper"] == json!([3, 4])
        && v["ieee"]["ets"]["oper"]["tc_bw"] == json!([50, 50, 0, 0, 0, 0, 0, 0])
}

/// Two losslessd in IEEE 802.1Qaz: A not willing (ETS recommended, PFC 3,4), B
/// willing.
fn ieee(runs: usize) {
    let s = two_daemons("ieee", runs, IEEE_A, IEEE_B, ieee_agreed);
    stats(
        "losslessd <-> losslessd (IEEE 802.1Qaz), link-up to agreed PFC and ETS on both ends (wall)",
        s.wall.clone(),
    );
    stats(
        "losslessd <-> losslessd (IEEE 802.1Qaz), the same as the daemons measure it (max of both)",
        s.own,
    );
    frames("losslessd <-> losslessd (IEEE 802.1Qaz)", &s.frames);
}

/// An auto port (A, not willing, PFC 3,4) against `mode = "cee"` (B, willing).
fn auto_cee(runs: usize, pair_frames: Option<&[f64]>, pair_wall: Option<f64>) {
    let s = two_daemons(
        "auto-cee",
        runs,
        NOT_WILLING,
        &format!("[ports.\"vb\"]\n{CEE}"),
        |d, port| {
            let v = d.dcbx(port);
            v["mode"]["running"] == "cee"
                && converged(&v)
                && priorities(&v["pfc"]["oper"]) == [3, 4]
        },
    );
    stats(
        "auto <-> cee losslessd, link-up to the fallback and agreed PFC on both ends (wall)",
        s.wall.clone(),
    );
    stats(
        "auto <-> cee losslessd, the same as the daemons measure it (max of both)",
        s.own.clone(),
    );
    frames("auto <-> cee losslessd", &s.frames);
    if let (Some(pw), Some(pf), Some(w), Some(f)) = (
        pair_wall,
        pair_frames.and_then(median),
        median(&s.wall),
        median(&s.frames),
    ) {
        println!(
            "auto-cee against pair (medians): {:+.1} ms, {:+.0} LLDPDUs",
            w - pw,
            f - pf
        );
    }
}

/// lldpad's `dcbtool go IF pfc`: in sync and running PFC on 3,4.
fn lldpad_agreed(l: &LldpadPeer) -> bool {
    let f = dcbtool_fields(&l.dcbtool(&["go", l.ifname(), "pfc"]));
    dcbtool_field(&f, "Syncd") == "true"
        && dcbtool_field(&f, "Oper Mode") == "true"
        && dcbtool_field(&f, "pfcup") == "0 0 0 1 1 0 0 0"
}

fn poll_slow(limit: Duration, mut f: impl FnMut() -> bool) -> Option<f64> {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if f() {
            return Some(t0.elapsed().as_secs_f64() * 1e3);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// lldpad (CEE, not willing, PFC 3,4) on `va`; links down. `peer` starts the
/// other end on `vb` (another lldpad, or losslessd) and returns a check that
/// both ends agree. Times `vb` link-up to that agreement.
fn time_against_lldpad<T>(
    peer: impl FnOnce(&Netns, &std::path::Path) -> T,
    agreed_both: impl Fn(&LldpadPeer, &T) -> bool,
) -> Option<f64> {
    let dir = TempDir::new();
    let na = Netns::new();
    let nb = Netns::new();
    Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
    let b = peer(&nb, dir.path());
    let a = LldpadPeer::start(&na, "va", Mode::Cee);
    a.dcbtool(&["sc", "va", "pfc", "e:1", "a:1", "w:0", "pfcup:00011000"]);
    std::thread::sleep(Duration::from_secs(1));
    na.ip(&["link", "set", "va", "up"]);
    std::thread::sleep(Duration::from_millis(100));
    let t0 = Instant::now();
    nb.ip(&["link", "set", "vb", "up"]);
    poll_slow(Duration::from_secs(30), || agreed_both(&a, &b))?;
    Some(t0.elapsed().as_secs_f64() * 1e3)
}

/// Two lldpads (CEE): the figure to beat.
fn anchor(runs: usize) {
    let wall = (0..runs)
        .filter_map(|_| {
            time_against_lldpad(
                |nb, _| {
                    let b = LldpadPeer::start(nb, "vb", Mode::Cee);
                    b.dcbtool(&["sc", "vb", "pfc", "e:1", "a:1", "w:1"]);
                    b
                },
                |a, b| lldpad_agreed(b) && lldpad_agreed(a),
            )
        })
        .collect();
    stats(
        "lldpad <-> lldpad (CEE), link-up to agreed PFC on both ends (wall)",
        wall,
    );
}

/// lldpad (not willing, PFC 3,4) on va, losslessd (willing) on vb.
fn mixed(runs: usize) {
    let wall = (0..runs)
        .filter_map(|_| {
            time_against_lldpad(
                |nb, dir| Daemon::start(nb, &dir.join("d"), &["--interface", "vb"]),
                |a, d| agreed(d, "vb", &[3, 4]) && lldpad_agreed(a),
            )
        })
        .collect();
    stats(
        "lldpad <-> losslessd (CEE), link-up to agreed PFC on both ends (wall)",
        wall,
    );
}

/// lldptool's view of one TLV on lldpad `l` (`-n`: what it received) has `want`.
fn lldptool_shows(l: &LldpadPeer, tlv: &str, neighbor: bool, want: &[(&str, &str)]) -> bool {
    let mut args = vec!["-t"];
    if neighbor {
        args.push("-n");
    }
    args.extend_from_slice(&["-i", l.ifname(), "-V", tlv]);
    let f = lldptool_fields(&l.lldptool(&args));
    want.iter().all(|(k, v)| dcbtool_field(&f, k) == *v)
}

const LLDPAD_TSA: &str = "tsa=0:ets,1:ets,2:strict,3:strict,4:strict,5:strict,6:strict,7:strict";
const LLDPAD_UP2TC: &str = "up2tc=0:0,1:0,2:0,3:1,4:1,5:0,6:0,7:0";
const LLDPAD_TCBW: &str = "tcbw=50,50,0,0,0,0,0,0";

/// Two lldpads in IEEE 802.1Qaz mode: A (`va`) not willing, with an ETS
/// configuration, the same table as recommendation and PFC 3,4; B (`vb`) willing.
/// Both configured with the links down, then `va` up and (timed) `vb` up, until B's
/// driver runs A's PFC and ETS and A has received B's PFC (willing, 3,4) and ETS
/// configuration (A's table).
fn ieee_anchor(runs: usize) {
    let mut wall = Vec::new();
    for _ in 0..runs {
        let na = Netns::new();
        let nb = Netns::new();
        Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
        let a = LldpadPeer::start(&na, "va", Mode::Ieee);
        let b = LldpadPeer::start(&nb, "vb", Mode::Ieee);
        let set = |l: &LldpadPeer, args: &[&str]| {
            let mut all = vec!["-T", "-i", l.ifname()];
            all.extend_from_slice(args);
            l.lldptool_ok(&all);
        };
        set(
            &a,
            &[
                "-V",
                "ETS-CFG",
                "enableTx=yes",
                "willing=no",
                LLDPAD_TSA,
                LLDPAD_UP2TC,
                LLDPAD_TCBW,
            ],
        );
        set(
            &a,
            &[
                "-V",
                "ETS-REC",
                "enableTx=yes",
                LLDPAD_TSA,
                LLDPAD_UP2TC,
                LLDPAD_TCBW,
            ],
        );
        set(
            &a,
            &["-V", "PFC", "enableTx=yes", "willing=no", "enabled=3,4"],
        );
        set(&b, &["-V", "ETS-CFG", "enableTx=yes", "willing=yes"]);
        set(&b, &["-V", "PFC", "enableTx=yes", "willing=yes"]);
        std::thread::sleep(Duration::from_secs(1));
        na.ip(&["link", "set", "va", "up"]);
        std::thread::sleep(Duration::from_millis(100));
        let t0 = Instant::now();
        nb.ip(&["link", "set", "vb", "up"]);
        let ok = poll_slow(Duration::from_secs(30), || {
            let Some(st) = b.driver_state() else {
                return false;
            };
            st.ieee_pfc_en() == 0x18
                && st.list("ieee_ets_tc_tx_bw") == [50, 50, 0, 0, 0, 0, 0, 0]
                && st.list("ieee_ets_prio_tc") == [0, 0, 0, 1, 1, 0, 0, 0]
                && lldptool_shows(
                    &a,
                    "PFC",
                    true,
                    &[("Willing", "yes"), ("PFC enabled", "3 4")],
                )
                && lldptool_shows(
                    &a,
                    "ETS-CFG",
                    true,
                    &[
                        ("PRIO_MAP", "0:0 1:0 2:0 3:1 4:1 5:0 6:0 7:0"),
                        ("TC Bandwidth", "50% 50% 0% 0% 0% 0% 0% 0%"),
                    ],
                )
        });
        match ok {
            Some(_) => wall.push(t0.elapsed().as_secs_f64() * 1e3),
            None => println!("ieee-anchor: run did not converge in 30 s"),
        }
    }
    stats(
        "lldpad <-> lldpad (IEEE 802.1Qaz), link-up to agreed PFC and ETS on both ends (wall)",
        wall,
    );
}

/// Restart of the not-willing side: from the new process's start to both
/// ends agreed again, after SIGTERM and after kill -9.
fn restart(runs: usize) {
    let dir = TempDir::new();
    let na = Netns::new();
    let nb = Netns::new();
    Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
    // CEE DCBX on both: the check below follows its SeqNo/AckNo.
    let conf = dir.path().join("a.toml");
    std::fs::write(&conf, format!("{NOT_WILLING}{CEE}")).unwrap();
    let mut a = Daemon::start(
        &na,
        &dir.path().join("a"),
        &["--config", conf.to_str().unwrap()],
    );
    let conf_b = dir.path().join("b.toml");
    std::fs::write(&conf_b, format!("[ports.\"vb\"]\n{CEE}")).unwrap();
    let b = Daemon::start(
        &nb,
        &dir.path().join("b"),
        &["--config", conf_b.to_str().unwrap()],
    );
    na.ip(&["link", "set", "va", "up"]);
    nb.ip(&["link", "set", "vb", "up"]);
    poll(Duration::from_secs(10), || agreed(&b, "vb", &[3, 4])).expect("first agreement");
    for kill9 in [false, true] {
        let mut wall = Vec::new();
        for _ in 0..runs {
            // Let the peer's transmit credit refill (802.1AB txCreditMax 5,
            // one per second, and the txFastInit frames after each restart
            // spend some): restarts in quick succession measure the peer's
            // rate limiter (a ~1 s wait), not a restart.
            std::thread::sleep(Duration::from_secs(10));
            let boots = a.call(&Request::Status)["daemon"]["boots"]
                .as_u64()
                .unwrap();
            if kill9 {
                a.kill9();
            } else {
                a.stop();
            }
            let t0 = Instant::now();
            a.spawn();
            let ok = poll(Duration::from_secs(10), || {
                let c = [
                    a.call(&Request::Status)["daemon"]["boots"].as_u64() == Some(boots + 1),
                    agreed(&a, "va", &[3, 4]),
                    agreed(&b, "vb", &[3, 4]),
                    b.dcbx("vb")["control"]["ack"] == a.dcbx("va")["control"]["seq"],
                ];
                if std::env::var_os("BENCH_DEBUG").is_some() {
                    eprintln!("{:?} {c:?}", t0.elapsed());
                }
                c.iter().all(|x| *x)
            });
            match ok {
                Some(_) => wall.push(t0.elapsed().as_secs_f64() * 1e3),
                None => println!("restart: run did not re-converge in 10 s"),
            }
            if std::env::var_os("BENCH_DEBUG").is_some()
                && t0.elapsed() > Duration::from_millis(100)
            {
                let tail = |log: String| {
                    let lines: Vec<&str> = log.lines().collect();
                    lines[lines.len().saturating_sub(40)..].join("\n")
                };
                eprintln!("slow run; A:\n{}\nB:\n{}", tail(a.log()), tail(b.log()));
            }
        }
        let how = if kill9 { "kill -9" } else { "SIGTERM" };
        stats(
            &format!("restart after {how}: start to re-agreed on both ends"),
            wall,
        );
    }
}

fn proc_ticks(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the ")" of the command name: utime is the 12th, stime the 13th.
    let rest = s.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let f: Vec<&str> = rest.split_whitespace().collect();
    f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
}

fn proc_kb(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn count_converged(d: &Daemon) -> usize {
    let Some(v) = d.try_call(&Request::Status) else {
        return 0;
    };
    v["ports"]
        .as_array()
        .map(|a| a.iter().filter(|p| p["all_syncd"] == true).count())
        .unwrap_or(0)
}

/// One losslessd with `n` ports, peers in another namespace.
fn scale(n: usize) {
    let dir = TempDir::new();
    let hub = Netns::new();
    let leaf = Netns::new();
    let mut batch = String::new();
    for i in 0..n {
        batch.push_str(&format!(
            "link add p{i} type veth peer name q{i} netns {}\n",
            leaf.name
        ));
    }
    let file = dir.path().join("add.batch");
    std::fs::write(&file, batch).unwrap();
    let t = Instant::now();
    hub.ip(&["-batch", file.to_str().unwrap()]);
    println!(
        "scale: created {n} veth pairs in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let hub_conf = dir.path().join("hub.toml");
    std::fs::write(
        &hub_conf,
        "[ports.\"p*\"]\npfc = { willing = false, priorities = [3, 4] }\n",
    )
    .unwrap();
    let leaf_conf = dir.path().join("leaf.toml");
    std::fs::write(&leaf_conf, "[ports.\"q*\"]\n").unwrap();
    let h = Daemon::start(
        &hub,
        &dir.path().join("hub"),
        &["--config", hub_conf.to_str().unwrap(), "--log", "warn"],
    );
    let l = Daemon::start(
        &leaf,
        &dir.path().join("leaf"),
        &["--config", leaf_conf.to_str().unwrap(), "--log", "warn"],
    );
    let up = |prefix: &str| {
        (0..n)
            .map(|i| format!("link set {prefix}{i} up\n"))
            .collect::<String>()
    };
    let hub_up = dir.path().join("hub-up.batch");
    std::fs::write(&hub_up, up("p")).unwrap();
    let leaf_up = dir.path().join("leaf-up.batch");
    std::fs::write(&leaf_up, up("q")).unwrap();
    hub.ip(&["-batch", hub_up.to_str().unwrap()]);
    std::thread::sleep(Duration::from_millis(500));
    let ports = h.call(&Request::Status)["ports"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(ports, n, "hub manages every port");
    let t0 = Instant::now();
    leaf.ip(&["-batch", leaf_up.to_str().unwrap()]);
    let links_up = t0.elapsed().as_secs_f64() * 1e3;
    let mut last = 0;
    let ok = poll_slow(Duration::from_secs(30), || {
        last = count_converged(&h);
        last == n && count_converged(&l) == n
    });
    match ok {
        Some(_) => println!(
            "scale: {n} ports, simultaneous link-up (ip -batch took {links_up:.0} ms) to all converged on both daemons: {:.0} ms, RSS {} KiB ({})",
            t0.elapsed().as_secs_f64() * 1e3,
            proc_kb(h.pid().unwrap(), "VmRSS:"),
            load()
        ),
        None => println!("scale: only {last}/{n} converged after 30 s"),
    }
    // Steady state: let the fast transmissions end, then measure.
    std::thread::sleep(Duration::from_secs(6));
    let pid = h.pid().unwrap();
    let window = Duration::from_secs(env_or("BENCH_STEADY_S", 30) as u64);
    let (t1, c1) = (Instant::now(), proc_ticks(pid));
    std::thread::sleep(window);
    let (dt, dc) = (t1.elapsed().as_secs_f64(), proc_ticks(pid) - c1);
    let hz = 100.0; // USER_HZ on Linux
    println!(
        "scale: steady state over {dt:.0} s: {:.2} % of one core ({dc} ticks of 10 ms), RSS {} KiB (peak {} KiB) ({})",
        dc as f64 / hz / dt * 100.0,
        proc_kb(pid, "VmRSS:"),
        proc_kb(pid, "VmHWM:"),
        load()
    );
    let c = h.call(&Request::Counters {
        port: Some("p0".into()),
    });
    println!(
        "scale: p0 sent {} LLDPDUs, received {}",
        c["ports"][0]["lldp"]["frames_out"], c["ports"][0]["lldp"]["frames_in"]
    );
    drop(h);
    drop(l);
    let _: Value = Value::Null;
}

const MEASURING: &str = "[ports.\"IF\"]\npfc = { priorities = [3] }\n\
                         [ports.\"IF\".headroom]\nmeasure = true\nspeed = \"100G\"\n";

fn headroom_of(d: &Daemon) -> Value {
    d.call(&Request::HeadroomShow { port: None })["ports"][0].clone()
}

/// Measurement frames a port sent and received (requests, responses, follow-ups).
fn measure_frames(h: &Value) -> (u64, u64) {
    let f = &h["frames"];
    let n = |k: &str| f[k].as_u64().unwrap_or(0);
    (
        n("requests_sent") + n("responses_sent") + n("follow_ups_sent"),
        n("requests_received") + n("responses_received") + n("follow_ups_received"),
    )
}

fn percentile(v: &[f64], p: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or(f64::NAN)
}

/// A child process killed (and reaped) on drop.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One timed link-up: from `up` (the command that brings the link up) to both ports
/// showing a measured headroom; then, once neither port has a round open, the
/// measurement frames each port sent and received since `before`.
struct Settle {
    ms: f64,
    frames: [(u64, u64); 2],
    failed_rounds: u64,
}

fn settle(a: &Daemon, b: &Daemon, up: impl FnOnce()) -> Option<Settle> {
    let before = [
        measure_frames(&headroom_of(a)),
        measure_frames(&headroom_of(b)),
    ];
    let failed_before = [a, b].map(|d| {
        headroom_of(d)["frames"]["rounds_failed"]
            .as_u64()
            .unwrap_or(0)
    });
    let t0 = Instant::now();
    up();
    poll(Duration::from_secs(10), || {
        headroom_of(a)["last"].is_object() && headroom_of(b)["last"].is_object()
    })?;
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    let _ = poll(Duration::from_secs(2), || {
        headroom_of(a)["measuring"] == false && headroom_of(b)["measuring"] == false
    });
    let (ha, hb) = (headroom_of(a), headroom_of(b));
    let after = [measure_frames(&ha), measure_frames(&hb)];
    let frames = [0, 1].map(|i| (after[i].0 - before[i].0, after[i].1 - before[i].1));
    let failed_rounds = [&ha, &hb]
        .iter()
        .zip(failed_before)
        .map(|(h, f)| h["frames"]["rounds_failed"].as_u64().unwrap_or(0) - f)
        .sum();
    Some(Settle {
        ms,
        frames,
        failed_rounds,
    })
}

/// Two losslessd measuring the link over veth. Each run starts a new pair with the
/// links down, brings `va` up, then (timed) `vb`: the command that brings the link
/// up; then flaps it (`vb` down, both daemons see it and forget the measurement,
/// `vb` up, timed again). A port shows a measured headroom when `headroom show` has
/// a last round (forgotten at link-down). With BENCH_HEADROOM_LINE=DELAY the two
/// veth pairs are joined by `lossless-delayline` (as in tests/headroom.rs) instead.
fn headroom(runs: usize) {
    let debug = std::env::var_os("BENCH_DEBUG").is_some();
    let line = std::env::var("BENCH_HEADROOM_LINE").ok();
    if let Some(d) = &line {
        println!("headroom: through lossless-delayline --delay {d} (BENCH_HEADROOM_LINE)");
    }
    let mut samples: [Vec<Settle>; 2] = [Vec::new(), Vec::new()];
    for run in 0..runs {
        let dir = TempDir::new();
        let na = Netns::new();
        let nb = Netns::new();
        // The line's namespace and process go after the daemons (declared first).
        let (_nl, _line) = match &line {
            None => {
                Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
                (None, None)
            }
            Some(delay) => {
                let nl = Netns::new();
                Veth::new(&na, "va", MAC_A, &nl, "la", "02:00:00:00:00:0c");
                Veth::new(&nb, "vb", MAC_B, &nl, "lb", "02:00:00:00:00:0d");
                nl.ip(&["link", "set", "la", "up"]);
                nl.ip(&["link", "set", "lb", "up"]);
                let child = nl
                    .command(env!("CARGO_BIN_EXE_lossless-delayline"))
                    .args(["--a", "la", "--b", "lb", "--delay", delay])
                    .stdin(std::process::Stdio::null())
                    .spawn()
                    .expect("lossless-delayline");
                (Some(nl), Some(KillOnDrop(child)))
            }
        };
        let start = |ns: &Netns, ifname: &str, sub: &str| {
            let conf = dir.path().join(format!("{sub}.toml"));
            std::fs::write(&conf, MEASURING.replace("IF", ifname)).unwrap();
            Daemon::start(
                ns,
                &dir.path().join(sub),
                &["--config", conf.to_str().unwrap()],
            )
        };
        let a = start(&na, "va", "a");
        let b = start(&nb, "vb", "b");
        na.ip(&["link", "set", "va", "up"]);
        std::thread::sleep(Duration::from_millis(100));
        let first = settle(&a, &b, || {
            nb.ip(&["link", "set", "vb", "up"]);
        });
        // Through the line a flap of vb is no link-down for va: first link-ups only.
        let flap = if line.is_some() {
            None
        } else {
            nb.ip(&["link", "set", "vb", "down"]);
            let down = poll(Duration::from_secs(5), || {
                [&a, &b].iter().all(|d| {
                    let h = headroom_of(d);
                    h["running"] == false && h["last"].is_null()
                })
            });
            Some(down.and_then(|_| {
                settle(&a, &b, || {
                    nb.ip(&["link", "set", "vb", "up"]);
                })
            }))
        };
        let mut timed = vec![("first link-up", first)];
        timed.extend(flap.map(|f| ("after a flap", f)));
        for (i, (what, s)) in timed.into_iter().enumerate() {
            let Some(s) = s else {
                println!("headroom: run {run}, {what}: did not settle in 10 s");
                continue;
            };
            if debug {
                println!(
                    "headroom run {run}, {what}: {:.1} ms, frames (sent, received) a {:?} b {:?}, {} failed rounds",
                    s.ms, s.frames[0], s.frames[1], s.failed_rounds
                );
            }
            if debug && s.ms > 1000.0 {
                let tail = |log: String| {
                    let lines: Vec<&str> = log.lines().collect();
                    lines[lines.len().saturating_sub(60)..].join("\n")
                };
                println!("slow run; A:\n{}\nB:\n{}", tail(a.log()), tail(b.log()));
            }
            samples[i].push(s);
        }
    }
    for (what, v) in ["first link-up", "after a flap"].iter().zip(&samples) {
        if v.is_empty() && line.is_some() {
            continue;
        }
        if v.is_empty() {
            println!("headroom, {what}: no run settled");
            continue;
        }
        let ms: Vec<f64> = v.iter().map(|s| s.ms).collect();
        let over = ms.iter().filter(|&&m| m > 1000.0).count();
        let sent = v
            .iter()
            .flat_map(|s| s.frames.map(|f| f.0))
            .max()
            .unwrap_or(0);
        let received = v
            .iter()
            .flat_map(|s| s.frames.map(|f| f.1))
            .max()
            .unwrap_or(0);
        let failed: u64 = v.iter().map(|s| s.failed_rounds).sum();
        println!(
            "headroom, {what}: link-up to a measured headroom on both ports (wall): p50 {:.1} ms, p90 {:.1}, max {:.1} ({} runs, {over} over 1 s)",
            percentile(&ms, 0.5),
            percentile(&ms, 0.9),
            percentile(&ms, 1.0),
            ms.len()
        );
        println!(
            "headroom, {what}: measurement frames per port: at most {sent} sent, {received} received (floor: 100); {failed} failed rounds in all"
        );
    }
}
