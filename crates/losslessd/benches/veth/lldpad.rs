//! The sections that run lldpad under the emulated DCB driver: `anchor` (two
//! lldpads in CEE, the figure to beat), `mixed` (lldpad against losslessd) and
//! `ieee-anchor` (two lldpads in IEEE 802.1Qaz mode).

use std::time::{Duration, Instant};

use crate::common::*;
use crate::measure::*;
use crate::pair::*;
use crate::*;
use lossless_testkit::lldptool_fields;

/// lldpad's `dcbtool go IF pfc`: in sync and running PFC on 3,4.
pub fn lldpad_agreed(l: &LldpadPeer) -> bool {
    let f = dcbtool_fields(&l.dcbtool(&["go", l.ifname(), "pfc"]));
    dcbtool_field(&f, "Syncd") == "true"
        && dcbtool_field(&f, "Oper Mode") == "true"
        && dcbtool_field(&f, "pfcup") == "0 0 0 1 1 0 0 0"
}

/// lldpad (CEE, not willing, PFC 3,4) on `va`; links down. `peer` starts the
/// other end on `vb` (another lldpad, or losslessd) and returns a check that
/// both ends agree. Times `vb` link-up to that agreement.
pub fn time_against_lldpad<T>(
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
pub fn anchor(runs: usize) {
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
pub fn mixed(runs: usize) {
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
pub fn lldptool_shows(l: &LldpadPeer, tlv: &str, neighbor: bool, want: &[(&str, &str)]) -> bool {
    let mut args = vec!["-t"];
    if neighbor {
        args.push("-n");
    }
    args.extend_from_slice(&["-i", l.ifname(), "-V", tlv]);
    let f = lldptool_fields(&l.lldptool(&args));
    want.iter().all(|(k, v)| dcbtool_field(&f, k) == *v)
}

pub const LLDPAD_TSA: &str =
    "tsa=0:ets,1:ets,2:strict,3:strict,4:strict,5:strict,6:strict,7:strict";
pub const LLDPAD_UP2TC: &str = "up2tc=0:0,1:0,2:0,3:1,4:1,5:0,6:0,7:0";
pub const LLDPAD_TCBW: &str = "tcbw=50,50,0,0,0,0,0,0";

/// Two lldpads in IEEE 802.1Qaz mode: A (`va`) not willing, with an ETS
/// configuration, the same table as recommendation and PFC 3,4; B (`vb`) willing.
/// Both configured with the links down, then `va` up and (timed) `vb` up, until B's
/// driver runs A's PFC and ETS and A has received B's PFC (willing, 3,4) and ETS
/// configuration (A's table).
pub fn ieee_anchor(runs: usize) {
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
