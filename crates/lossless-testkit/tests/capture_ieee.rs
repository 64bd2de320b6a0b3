//! Regenerates the golden IEEE 802.1Qaz captures in crates/lossless-wire/tests/data/
//! (ignored by default; needs root, lldpad, gcc, tshark):
//!
//!   cargo test -p lossless-testkit --test capture_ieee -- --ignored
//!
//! For each configuration two lldpads run in IEEE mode on a veth pair: A (`va`,
//! 02:00:00:00:00:0a) is configured with lldptool as listed, B (`vb`,
//! 02:00:00:00:00:0b) is willing for ETS and PFC. After the configuration the capture
//! on `vb` runs until both have sent again; the file keeps A's last LLDPDU, then B's
//! (the data directory's README lists what each holds).

use std::path::{Path, PathBuf};
use std::time::Duration;

use lossless_testkit::tshark::{concatenate, tshark_select};
use lossless_testkit::{require, tshark_fields, Capture, LldpadPeer, Mode, Oracle, Pair, TempDir};

const MAC_A: &str = "02:00:00:00:00:0a";
const MAC_B: &str = "02:00:00:00:00:0b";
const TSA_ETS2: &str = "tsa=0:ets,1:ets,2:strict,3:strict,4:strict,5:strict,6:strict,7:strict";
const UP2TC: &str = "up2tc=0:0,1:0,2:0,3:1,4:1,5:0,6:0,7:0";

struct Config {
    file: &'static str,
    a: Vec<Vec<String>>,
}

fn cmd(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn configs() -> Vec<Config> {
    let ets_cfg = |willing: &str| {
        cmd(&[
            "-V",
            "ETS-CFG",
            "enableTx=yes",
            willing,
            TSA_ETS2,
            UP2TC,
            "tcbw=40,60,0,0,0,0,0,0",
        ])
    };
    let pfc = |willing: &str| cmd(&["-V", "PFC", "enableTx=yes", willing, "enabled=3,4"]);
    let mut all_selectors = vec![
        ets_cfg("willing=no"),
        pfc("willing=no"),
        cmd(&["-V", "APP", "enableTx=yes"]),
    ];
    for app in [
        "app=3,1,35078", // Ethertype FCoE
        "app=4,2,3260",  // TCP iSCSI
        "app=5,3,4791",  // UDP RoCEv2
        "app=6,4,860",   // TCP or UDP
        "app=3,5,26",    // DSCP 26
        "app=1,5,10",    // DSCP 10
    ] {
        all_selectors.push(cmd(&["-V", "APP", app]));
    }
    let mut app32 = vec![pfc("willing=no"), cmd(&["-V", "APP", "enableTx=yes"])];
    for dscp in 0..32 {
        app32.push(cmd(&["-V", "APP", &format!("app={},5,{dscp}", dscp % 8)]));
    }
    vec![
        Config {
            file: "ieee_not_willing_ets_pfc.pcap",
            a: vec![ets_cfg("willing=no"), pfc("willing=no")],
        },
        Config {
            file: "ieee_willing.pcap",
            a: vec![ets_cfg("willing=yes"), pfc("willing=yes")],
        },
        Config {
            file: "ieee_ets_rec.pcap",
            a: vec![
                ets_cfg("willing=no"),
                cmd(&[
                    "-V",
                    "ETS-REC",
                    "enableTx=yes",
                    "tsa=0:ets,1:ets,2:ets,3:strict,4:strict,5:strict,6:strict,7:strict",
                    "up2tc=0:0,1:0,2:2,3:1,4:1,5:2,6:0,7:3",
                    "tcbw=30,30,40,0,0,0,0,0",
                ]),
                pfc("willing=no"),
            ],
        },
        Config {
            file: "ieee_app_every_selector.pcap",
            a: all_selectors,
        },
        Config {
            file: "ieee_app_32_dscp.pcap",
            a: app32,
        },
    ]
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../lossless-wire/tests/data")
}

/// The last frame from `mac` in `raw`, by frame number.
fn last_from(raw: &Path, mac: &str) -> String {
    let f = tshark_fields(
        raw,
        &["-Y", &format!("eth.src == {mac}")],
        &["frame.number"],
    );
    f.column("frame.number")
        .last()
        .unwrap_or_else(|| panic!("no LLDPDU from {mac} in {}", raw.display()))
        .to_string()
}

fn capture(cfg: &Config, tmp: &Path) -> PathBuf {
    let p = Pair::up();
    let a = LldpadPeer::start(&p.a, "va", Mode::Ieee);
    let b = LldpadPeer::start(&p.b, "vb", Mode::Ieee);
    b.lldptool_ok(&["-T", "-i", "vb", "-V", "ETS-CFG", "willing=yes"]);
    b.lldptool_ok(&["-T", "-i", "vb", "-V", "PFC", "willing=yes"]);
    let raw = tmp.join(format!("raw-{}", cfg.file));
    let mut cap = Capture::start(&p.b, "vb", "ether proto 0x88cc", &raw);
    for args in &cfg.a {
        let mut all = vec!["-T", "-i", "va"];
        all.extend(args.iter().map(String::as_str));
        a.lldptool_ok(&all);
    }
    // Every change starts lldpad's fast transmissions (1 s apart): both have sent
    // the final state within a few seconds.
    std::thread::sleep(Duration::from_secs(5));
    cap.stop();
    let (fa, fb) = (last_from(&raw, MAC_A), last_from(&raw, MAC_B));
    std::fs::create_dir_all(data_dir()).expect("data dir");
    let out = data_dir().join(cfg.file);
    // One file per frame, then A's and B's appended in that order.
    let mut parts = Vec::new();
    for (who, n) in [("a", &fa), ("b", &fb)] {
        let part = tmp.join(format!("{who}-{}", cfg.file));
        tshark_select(&raw, &format!("frame.number == {n}"), &part);
        parts.push(part);
    }
    concatenate(&parts, &out);
    out
}

#[test]
#[ignore = "regenerates crates/lossless-wire/tests/data/ieee_*.pcap (root, lldpad, tshark)"]
fn regenerate_ieee_captures() {
    if !require(
        "regenerate_ieee_captures",
        &[Oracle::Netns, Oracle::Lldpad, Oracle::Gcc, Oracle::Tshark],
    ) {
        return;
    }
    let tmp = TempDir::new();
    for cfg in configs() {
        let out = capture(&cfg, tmp.path());
        let f = tshark_fields(
            &out,
            &[],
            &[
                "eth.src",
                "lldp.ieee.802_1.subtype",
                "lldp.dcbx.ieee.willing",
                "_ws.expert",
            ],
        );
        assert_eq!(f.len(), 2, "{}: A's frame and B's", cfg.file);
        assert_eq!(f.column("eth.src"), [MAC_A, MAC_B], "{}", cfg.file);
        for r in 0..2 {
            assert_eq!(f.get(r, "_ws.expert"), "", "{}: {:?}", cfg.file, f.rows[r]);
        }
        println!("{}: {:?}", cfg.file, f.rows);
    }
}
