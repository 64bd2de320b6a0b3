#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! Every dcbnl request lossless-sys encodes, byte for byte against the same
//! message built in C from the kernel's uapi structs and macros
//! (`tests/oracle/dcbnl_golden.c`, compiled with gcc against the installed
//! `<linux/dcbnl.h>`, `<linux/rtnetlink.h>`); and the replies built there,
//! as `net/dcb/dcbnl.c` lays them out, through our decoders. Attributes the
//! installed headers predate come from the running kernel's BTF. No
//! privileges needed.

#[path = "oracle/btf.rs"]
mod btf;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use lossless_sys::dcbnl::*;

const ETS_STRICT: Tsa = Tsa::STRICT;
const ETS: IeeeEts = IeeeEts {
    willing: true,
    ets_cap: 8,
    cbs: false,
    tc_tx_bw: [20, 30, 50, 0, 0, 0, 0, 0],
    tc_rx_bw: [0; 8],
    tc_tsa: [
        Tsa::ETS,
        Tsa::ETS,
        Tsa::ETS,
        ETS_STRICT,
        ETS_STRICT,
        ETS_STRICT,
        ETS_STRICT,
        ETS_STRICT,
    ],
    prio_tc: [0, 0, 1, 1, 2, 2, 2, 3],
    tc_reco_bw: [20, 30, 50, 0, 0, 0, 0, 0],
    tc_reco_tsa: [
        Tsa::ETS,
        Tsa::ETS,
        Tsa::ETS,
        ETS_STRICT,
        ETS_STRICT,
        ETS_STRICT,
        ETS_STRICT,
        ETS_STRICT,
    ],
    reco_prio_tc: [0, 0, 1, 1, 2, 2, 2, 3],
};
const BUFFER: DcbBuffer = DcbBuffer {
    prio2buffer: [0, 0, 0, 1, 1, 0, 0, 0],
    buffer_size: [130_944, 262_016, 0, 0, 0, 0, 0, 0],
    total_size: 1_048_576,
};
const ROCE: DcbApp = DcbApp {
    selector: AppSelector::DGRAM,
    priority: 3,
    protocol: 4791,
};
const DSCP26: DcbApp = DcbApp {
    selector: AppSelector::DSCP,
    priority: 3,
    protocol: 26,
};
const PCP3: DcbApp = DcbApp {
    selector: AppSelector::PCP,
    priority: 3,
    protocol: 3,
};
const PFC: IeeePfcSet = IeeePfcSet {
    enabled: 0x18,
    delay: 0x1234,
};

struct COracle {
    msgs: HashMap<String, Vec<u8>>,
    trust_source: String,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Compiles and runs the C oracle once per test binary; None (the test returns) when
/// gcc is missing and `LOSSLESS_SKIP_ORACLES=1` says to skip.
fn oracle(test: &str) -> Option<&'static COracle> {
    if !lossless_testkit::require(test, &[lossless_testkit::Oracle::Gcc]) {
        return None;
    }
    static ORACLE: std::sync::OnceLock<COracle> = std::sync::OnceLock::new();
    Some(ORACLE.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/dcbnl_golden.c");
        let dir = std::env::temp_dir().join(format!("lsys-dcbnl-oracle-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("dcbnl_golden");
        let mut gcc = Command::new("gcc");
        gcc.args(["-Wall", "-Wextra", "-Werror", "-o"])
            .arg(&exe)
            .arg(&src);
        // For headers older than Linux 6.2: the trust table's attribute
        // numbers as the running kernel defines them.
        if let Some(e) = btf::running_kernel() {
            if let (Some(t), Some(a)) = (
                e.get("DCB_ATTR_DCB_APP_TRUST_TABLE"),
                e.get("DCB_ATTR_DCB_APP"),
            ) {
                gcc.arg(format!("-DORACLE_TRUST_TABLE={t}"))
                    .arg(format!("-DORACLE_DCB_APP={a}"))
                    .arg("-DORACLE_SEL_PCP=255");
            }
        }
        let out = gcc.output().unwrap_or_else(|e| {
            panic!("gcc is needed for the dcbnl oracle (Debian packages gcc, linux-libc-dev): {e}")
        });
        assert!(
            out.status.success(),
            "gcc: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = Command::new(&exe).output().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(out.status.success());
        let mut msgs = HashMap::new();
        let mut trust_source = String::new();
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            let (k, v) = line.split_once(' ').unwrap();
            if k == "trust-source" {
                trust_source = v.to_owned();
            } else {
                msgs.insert(k.to_owned(), unhex(v));
            }
        }
        COracle { msgs, trust_source }
    }))
}

fn same(o: &COracle, name: &str, ours: Result<Vec<u8>, DcbError>) {
    let ours = ours.unwrap();
    let theirs = o
        .msgs
        .get(name)
        .unwrap_or_else(|| panic!("no {name} from the oracle"));
    assert_eq!(hex(&ours), hex(theirs), "{name}: ours, then the C oracle's");
}

#[test]
fn cee_requests_match_the_kernel_structs() {
    let Some(o) = oracle("cee_requests_match_the_kernel_structs") else {
        return;
    };
    same(o, "gstate", encode_get_state(1, "va"));
    same(o, "sstate", encode_set_state(2, "va", true));
    same(o, "pfc_gcfg", encode_get_pfc(3, "va"));
    same(
        o,
        "pfc_scfg",
        encode_set_pfc(
            4,
            "va",
            [false, false, false, true, true, false, false, false],
        ),
    );
    same(o, "pfc_gstate", encode_get_pfc_state(5, "va"));
    same(o, "pfc_sstate", encode_set_pfc_state(6, "va", true));
    same(o, "pgrx_gcfg", encode_get_pg(7, "va", PgDir::Rx));
    let pg = PgConfig::from_cee(&PgSetting {
        pgid: [0, 0, 0, 0, 1, 1, 1, 15],
        percent: [25, 75, 0, 0, 0, 0, 0, 0],
    })
    .unwrap();
    same(o, "pgtx_scfg", encode_set_pg(8, "va", PgDir::Tx, &pg));
    same(o, "set_all", encode_set_all(9, "va"));
}

#[test]
fn ieee_requests_match_the_kernel_structs() {
    let Some(o) = oracle("ieee_requests_match_the_kernel_structs") else {
        return;
    };
    same(o, "ieee_get", encode_get_ieee(10, "va"));
    same(o, "ieee_set_ets", encode_set_ieee_ets(11, "va", &ETS));
    same(
        o,
        "ieee_set_pfc",
        encode_set_ieee_pfc(12, "va", PFC.enabled, PFC.delay),
    );
    same(
        o,
        "ieee_set_buffer",
        encode_set_dcb_buffer(13, "va", &BUFFER),
    );
    same(
        o,
        "ieee_set_apps",
        encode_set_ieee_apps(14, "va", &[ROCE, DSCP26]),
    );
    same(o, "ieee_del_app", encode_del_ieee_apps(15, "va", &[DSCP26]));
    same(o, "gdcbx", encode_get_dcbx(16, "va"));
    same(
        o,
        "sdcbx",
        encode_set_dcbx(17, "va", DcbxMode::HOST | DcbxMode::VER_IEEE),
    );
    let all = IeeeSet {
        ets: Some(ETS),
        pfc: Some(PFC),
        buffer: Some(BUFFER),
        apps: vec![ROCE],
        trust: None,
    };
    same(o, "ieee_set_all_objects", encode_set_ieee(18, "va", &all));
}

#[test]
fn trust_and_pcp_requests_match_the_kernel() {
    let Some(o) = oracle("trust_and_pcp_requests_match_the_kernel") else {
        return;
    };
    if o.trust_source == "none" {
        // Neither headers from Linux 6.2+ nor BTF: nothing to check against.
        eprintln!("SKIPPED: no <linux/dcbnl.h> with the trust table and no kernel BTF");
        return;
    }
    eprintln!("trust table attribute numbers from: {}", o.trust_source);
    same(
        o,
        "ieee_set_trust",
        encode_set_app_trust(19, "va", &[AppSelector::DSCP, AppSelector::PCP]),
    );
    same(
        o,
        "ieee_set_app_pcp",
        encode_set_ieee_apps(20, "va", &[PCP3]),
    );
}

#[test]
fn replies_built_from_the_kernel_structs_decode() {
    let Some(o) = oracle("replies_built_from_the_kernel_structs_decode") else {
        return;
    };
    let st = decode_ieee_state(&o.msgs["reply_ieee_get"], 21, "va")
        .unwrap()
        .unwrap();
    assert_eq!(st.ets, Some(ETS));
    let mut peer = ETS;
    peer.willing = false;
    assert_eq!(st.peer_ets, Some(peer));
    assert_eq!(
        st.maxrate.unwrap().tc_maxrate,
        std::array::from_fn(|t| t as u64 * 1_000_000_000)
    );
    let pfc = st.pfc.unwrap();
    assert_eq!(
        (pfc.cap, pfc.enabled, pfc.mbc, pfc.delay),
        (8, 0x08, 0, 2000)
    );
    assert_eq!(pfc.requests, std::array::from_fn(|i| 100 + i as u64));
    assert_eq!(pfc.indications, std::array::from_fn(|i| 200 + i as u64));
    let peer_pfc = st.peer_pfc.unwrap();
    assert_eq!(
        (
            peer_pfc.enabled,
            peer_pfc.requests[7],
            peer_pfc.indications[0]
        ),
        (0x18, 14, 14)
    );
    assert_eq!(st.buffer, Some(BUFFER));
    assert_eq!(st.apps, vec![ROCE, DSCP26]);
    assert_eq!(st.peer_apps, Some(vec![ROCE]));
    assert_eq!(st.dcbx, Some(DcbxMode::HOST | DcbxMode::VER_IEEE));
    let trust = (o.trust_source != "none").then(|| vec![AppSelector::DSCP, AppSelector::PCP]);
    assert_eq!(st.trust, trust);

    assert_eq!(
        decode_u8_reply(&o.msgs["reply_gdcbx"], 22, DcbCmd::GetDcbx, "va").unwrap(),
        Some((DcbxMode::LLD_MANAGED | DcbxMode::VER_CEE).0)
    );
    let status = |name: &str, seq, cmd| {
        let s = decode_u8_reply(&o.msgs[name], seq, cmd, "va")
            .unwrap()
            .unwrap();
        DcbError::Status {
            ifname: "va".into(),
            cmd,
            status: s,
        }
    };
    let e = status("reply_ieee_set_einval", 23, DcbCmd::IeeeSet);
    assert_eq!((e.kind(), e.errno()), (DcbErrorKind::Refused, Some(22)));
    let e = status("reply_ieee_del_enoent", 24, DcbCmd::IeeeDel);
    assert_eq!((e.kind(), e.errno()), (DcbErrorKind::Errno(2), Some(2)));
    let e =
        decode_u8_reply(&o.msgs["reply_error_eopnotsupp"], 25, DcbCmd::IeeeSet, "va").unwrap_err();
    assert_eq!(
        (e.kind(), e.cmd()),
        (DcbErrorKind::Unsupported, Some(DcbCmd::IeeeSet))
    );
}

#[test]
fn the_running_kernels_btf_agrees_with_the_encoded_numbers() {
    let Some(e) = btf::running_kernel() else {
        eprintln!(
            "SKIPPED: no {} (kernel without CONFIG_DEBUG_INFO_BTF)",
            btf::VMLINUX
        );
        return;
    };
    // The command bytes we send, and the attribute numbers the oracle used.
    for (cmd, name) in [
        (DcbCmd::IeeeSet, "DCB_CMD_IEEE_SET"),
        (DcbCmd::IeeeGet, "DCB_CMD_IEEE_GET"),
        (DcbCmd::GetDcbx, "DCB_CMD_GDCBX"),
        (DcbCmd::SetDcbx, "DCB_CMD_SDCBX"),
        (DcbCmd::IeeeDel, "DCB_CMD_IEEE_DEL"),
    ] {
        assert_eq!(e.get(name), Some(&i64::from(cmd.code())), "{name}");
        assert_eq!(cmd.name(), name);
    }
    let r = encode_set_app_trust(1, "va", &[AppSelector::DSCP, AppSelector::PCP]).unwrap();
    // IFNAME ends at 28; the IEEE nest header, then the trust table's type.
    assert_eq!(
        i64::from(u16::from_ne_bytes([r[34], r[35]])),
        e["DCB_ATTR_DCB_APP_TRUST_TABLE"]
    );
    assert_eq!(
        i64::from(u16::from_ne_bytes([r[46], r[47]])),
        e["DCB_ATTR_DCB_APP"]
    );
    assert_eq!(
        i64::from(u16::from_ne_bytes([r[38], r[39]])),
        e["DCB_ATTR_IEEE_APP"]
    );
}
