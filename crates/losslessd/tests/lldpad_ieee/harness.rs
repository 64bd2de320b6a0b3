//! The harness of the lldpad IEEE tests: lldpad and losslessd on a veth pair, lldptool
//! views, and the tables in the forms each side writes them.

use std::path::Path;
use std::time::Duration;

use lossless_testkit::{lldptool_fields, Capture, DriverState, LldpadApp};
use serde_json::{json, Value};

use crate::common::*;

/// lldpad's MAC, below ours (`vb`, 02:00:00:00:00:0b)...
pub const LOW_MAC: &str = "02:00:00:00:00:0a";
/// ... or above it.
pub const HIGH_MAC: &str = "02:00:00:00:00:0c";
pub const OUR_MAC: &str = "02:00:00:00:00:0b";

/// Waits for lldpad (1 s tick, fast transmissions 1 s apart) and for us.
pub const LIMIT: Duration = Duration::from_secs(20);
pub const EVERY: Duration = Duration::from_millis(100);

/// lldpad in netns A on `va`, losslessd in netns B on `vb`.
pub struct Interop {
    // Drop order: the capture, the daemon and lldpad before the namespaces.
    pub cap: Option<Capture>,
    pub d: Daemon,
    pub lldpad: Option<LldpadPeer>,
    pub na: Netns,
    pub nb: Netns,
    /// Our emulated driver, when losslessd programs one (`apply = "dcbnl"`).
    pub our_driver: Option<ShimEnv>,
    _dir: TempDir,
}

/// What runs besides lldpad and losslessd.
#[derive(Default)]
pub struct Extras<'a> {
    /// tshark records `vb` from before losslessd starts, into this file.
    pub capture: Option<&'a Path>,
    /// losslessd runs under the emulated DCB driver (for `vb`).
    pub driver: bool,
}

impl Interop {
    pub fn new(conf: &str, lldpad_mac: &str, mode: Mode) -> Interop {
        Interop::with(conf, lldpad_mac, mode, Extras::default())
    }

    pub fn with(conf: &str, lldpad_mac: &str, mode: Mode, extras: Extras<'_>) -> Interop {
        let dir = TempDir::new();
        let na = Netns::new();
        let nb = Netns::new();
        let veth = Veth::new(&na, "va", lldpad_mac, &nb, "vb", OUR_MAC);
        veth.up(&na, &nb);
        let cap = extras
            .capture
            .map(|p| Capture::start(&nb, "vb", "ether proto 0x88cc", p));
        let file = dir.path().join("b.toml");
        std::fs::write(&file, conf).unwrap();
        let driver = extras
            .driver
            .then(|| ShimEnv::new(&dir.path().join("driver"), &["vb"]));
        let env = driver.as_ref().map(ShimEnv::vars).unwrap_or_default();
        let d = Daemon::start_with_env(
            &nb,
            &dir.path().join("d"),
            &["--config", file.to_str().unwrap()],
            &env,
        );
        let lldpad = LldpadPeer::start(&na, "va", mode);
        Interop {
            cap,
            d,
            lldpad: Some(lldpad),
            na,
            nb,
            our_driver: driver,
            _dir: dir,
        }
    }

    pub fn lldpad(&self) -> &LldpadPeer {
        self.lldpad.as_ref().expect("lldpad runs")
    }

    /// `lldptool -T -i va -V TLV ARGS`; it must succeed.
    pub fn set(&self, tlv: &str, args: &[&str]) {
        let mut all = vec!["-T", "-i", "va", "-V", tlv];
        all.extend_from_slice(args);
        self.lldpad().lldptool_ok(&all);
    }

    /// `lldptool -t -i va -V TLV` (what lldpad sends, its operational values) or,
    /// with `neighbor`, `-t -n` (what it received from us), as text.
    pub fn view_text(&self, tlv: &str, neighbor: bool) -> String {
        let mut all = vec!["-t"];
        if neighbor {
            all.push("-n");
        }
        all.extend_from_slice(&["-i", "va", "-V", tlv]);
        self.lldpad().lldptool(&all)
    }

    /// [`Interop::view_text`] as `Key: value` fields.
    pub fn view(&self, tlv: &str, neighbor: bool) -> Vec<(String, String)> {
        lldptool_fields(&self.view_text(tlv, neighbor))
    }

    /// Waits until lldptool's view of `tlv` (see [`Interop::view_text`]) has every
    /// field of `want` with exactly that value, and returns it. lldpad rebuilds a TLV
    /// now and then, and a view taken meanwhile comes back empty: hence the wait,
    /// bounded, and the last view in the message when it runs out.
    pub fn expect_view(
        &self,
        tlv: &str,
        neighbor: bool,
        want: &[(&str, &str)],
    ) -> Vec<(String, String)> {
        let what = format!(
            "lldptool -t{} -V {tlv} to show {want:?}",
            if neighbor { " -n" } else { "" }
        );
        settle(
            &what,
            || self.view(tlv, neighbor),
            |f| want.iter().all(|(k, v)| field(f, k) == *v),
        )
    }

    /// `lldptool -t -i va -V TLV -c KEY`: lldpad's configuration, `KEY=VALUE`.
    pub fn config(&self, tlv: &str, key: &str) -> String {
        self.lldpad()
            .lldptool_ok(&["-t", "-i", "va", "-V", tlv, "-c", key])
            .trim()
            .to_string()
    }

    /// What lldpad programmed into its driver, once it did.
    pub fn driver(&self) -> Option<DriverState> {
        self.lldpad().driver_state()
    }

    /// Our `dcbx show vb` (the control socket's JSON).
    pub fn ours(&self) -> Value {
        self.d.dcbx("vb")
    }

    /// `lossless dcbx show vb --json`, the CLI's JSON, for port `vb`.
    pub fn ours_cli(&self) -> Value {
        let out = self.d.cli(&["dcbx", "show", "vb", "--json"]);
        assert!(
            out.status.success(),
            "lossless dcbx show: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["ports"][0].clone()
    }
}

/// Calls `get` every [`EVERY`] until `ok` holds of what it returns (and returns that),
/// or panics after [`LIMIT`] with the last value.
pub fn settle<T: std::fmt::Debug>(
    what: &str,
    mut get: impl FnMut() -> T,
    ok: impl Fn(&T) -> bool,
) -> T {
    let t0 = std::time::Instant::now();
    loop {
        let v = get();
        if ok(&v) {
            return v;
        }
        assert!(
            t0.elapsed() < LIMIT,
            "timed out after {LIMIT:?} waiting for {what}; last: {v:?}"
        );
        std::thread::sleep(EVERY);
    }
}

/// Field `k` of lldptool's fields; "" when absent.
pub fn field<'a>(f: &'a [(String, String)], k: &str) -> &'a str {
    dcbtool_field(f, k)
}

/// An ETS table as lldptool prints it: `PRIO_MAP`, `TC Bandwidth`, `TSA_MAP`.
pub fn lldptool_table(prio_tc: [u8; 8], tc_bw: [u8; 8], tsa: [&str; 8]) -> [String; 3] {
    let join = |v: Vec<String>| v.join(" ");
    [
        join((0..8).map(|p| format!("{p}:{}", prio_tc[p])).collect()),
        join(tc_bw.iter().map(|b| format!("{b}%")).collect()),
        join((0..8).map(|t| format!("{t}:{}", tsa[t])).collect()),
    ]
}

/// The fields of an lldptool ETS view for a table, with more (`Willing`).
pub fn table_fields<'a>(
    t: &'a [String; 3],
    more: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let mut v = vec![
        ("PRIO_MAP", t[0].as_str()),
        ("TC Bandwidth", t[1].as_str()),
        ("TSA_MAP", t[2].as_str()),
    ];
    v.extend_from_slice(more);
    v
}

/// An ETS table as `dcbx show` has it.
pub fn json_table(prio_tc: [u8; 8], tc_bw: [u8; 8], tsa: [&str; 8]) -> Value {
    json!({ "prio_tc": prio_tc, "tc_bw": tc_bw, "tsa": tsa })
}

/// The TSA numbers the driver holds for names (IEEE 802.1Q-2018 Table 8-6).
pub fn tsa_numbers(tsa: [&str; 8]) -> Vec<u64> {
    tsa.iter()
        .map(|t| match *t {
            "strict" => 0,
            "cbs" => 1,
            "ets" => 2,
            other => panic!("no number for TSA {other}"),
        })
        .collect()
}

/// APP entries of `dcbx show` as (priority, selector number, protocol), sorted.
pub fn json_apps(v: &Value) -> Vec<(u8, u8, u16)> {
    let mut out: Vec<(u8, u8, u16)> = v
        .as_array()
        .unwrap_or_else(|| panic!("not an APP table: {v}"))
        .iter()
        .map(|e| {
            let sel = match e["selector"].as_str() {
                Some("ethertype") => 1,
                Some("tcp") => 2,
                Some("udp") => 3,
                Some("port") => 4,
                Some("dscp") => 5,
                _ => panic!("unexpected selector in {e}"),
            };
            (
                e["priority"].as_u64().unwrap() as u8,
                sel,
                e["protocol"].as_u64().unwrap() as u16,
            )
        })
        .collect();
    out.sort_unstable();
    out
}

pub fn app(priority: u8, selector: u8, protocol: u16, peer: bool) -> LldpadApp {
    LldpadApp {
        priority,
        selector,
        protocol,
        peer,
        hw: "set".into(),
    }
}

/// Ours: not willing for ETS (recommending the table) nor PFC; three APP rules.
pub const AUTHORITY: &str = r#"
[ports."vb"]
pfc = { willing = false, priorities = [3, 4] }

[ports."vb".ets]
willing = false
recommend = true
prio_tc = [0, 0, 0, 1, 1, 0, 2, 0]
tc_bw = [30, 60, 10, 0, 0, 0, 0, 0]
tsa = ["ets", "ets", "ets", "strict", "strict", "strict", "strict", "strict"]

[ports."vb".app]
entries = [
    { selector = "dscp", protocol = 26, priority = 3 },
    { selector = "udp", protocol = 4791, priority = 3 },
    { selector = "ethertype", protocol = 0x8906, priority = 4 },
]
"#;
pub const PRIO_TC: [u8; 8] = [0, 0, 0, 1, 1, 0, 2, 0];
pub const TC_BW: [u8; 8] = [30, 60, 10, 0, 0, 0, 0, 0];
pub const TSA: [&str; 8] = [
    "ets", "ets", "ets", "strict", "strict", "strict", "strict", "strict",
];
/// AUTHORITY's APP rules as (priority, selector, protocol), sorted.
pub const AUTHORITY_APPS: [(u8, u8, u16); 3] = [(3, 3, 4791), (3, 5, 26), (4, 1, 0x8906)];

pub fn lldpad_willing(i: &Interop) {
    i.set("ETS-CFG", &["enableTx=yes", "willing=yes"]);
    i.set("PFC", &["enableTx=yes", "willing=yes"]);
    i.set("APP", &["enableTx=yes"]);
}
