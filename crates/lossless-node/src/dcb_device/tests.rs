//! The order of the requests and what each refusal becomes, on a device that records
//! what it is asked and answers as it is told.

use std::collections::HashMap;

use lossless_dcbx::Version;
use lossless_wire::cee::{PfcConfig, PgConfig, PriorityMap};
use lossless_wire::ieee::{AppPriority, EtsTable, Selector};

use super::*;
use crate::hardware::{IeeePfc, IeeeProgram, Trust, TrustOutcome};

/// Records every request by name; answers those named in `fail` with their error,
/// and IEEE_GET with `state`.
#[derive(Default)]
struct Recording {
    calls: Vec<String>,
    fail: HashMap<&'static str, DeviceError>,
    state: NicState,
    dcbx: u8,
    /// The answer to `check_apps`.
    check: Option<DeviceError>,
    /// SDCBX changes the mode even when it answers with a failure (ice).
    sdcbx_takes_it: bool,
}

impl Recording {
    fn answer(&mut self, call: &'static str, detail: String) -> Result<(), DeviceError> {
        self.calls.push(if detail.is_empty() {
            call.to_owned()
        } else {
            format!("{call} {detail}")
        });
        match self.fail.get(call) {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn failing(mut self, call: &'static str, e: DeviceError) -> Recording {
        self.fail.insert(call, e);
        self
    }
}

impl DcbDevice for Recording {
    fn ieee_state(&mut self, _: &str) -> Result<NicState, DeviceError> {
        self.answer("ieee_get", String::new())?;
        Ok(self.state.clone())
    }
    fn ieee_readback(&mut self, _: &str) -> Result<IeeeReadback, DeviceError> {
        self.answer("ieee_readback", String::new())?;
        Ok(IeeeReadback::default())
    }
    fn set_ieee_ets(&mut self, _: &str, _: &EtsProgram) -> Result<(), DeviceError> {
        self.answer("ets", String::new())
    }
    fn set_ieee_pfc(&mut self, _: &str, enabled: u8, delay: u16) -> Result<(), DeviceError> {
        self.answer("pfc", format!("{enabled:#04x} {delay}"))
    }
    fn check_apps(&mut self, _: &[AppPriority]) -> Result<(), DeviceError> {
        match &self.check {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
    fn add_app(&mut self, _: &str, app: &AppPriority) -> Result<(), DeviceError> {
        self.answer("app_add", format!("{}:{}", app.selector.0, app.protocol))
    }
    fn del_app(&mut self, _: &str, app: &AppPriority) -> Result<(), DeviceError> {
        self.answer("app_del", format!("{}:{}", app.selector.0, app.protocol))
    }
    fn set_app_trust(&mut self, _: &str, order: &[u8]) -> Result<(), DeviceError> {
        self.answer("trust", format!("{order:?}"))
    }
    fn set_buffer(&mut self, _: &str, _: &DcbBuffer) -> Result<(), DeviceError> {
        self.answer("buffer", String::new())
    }
    fn get_dcbx(&mut self, _: &str) -> Result<u8, DeviceError> {
        self.answer("gdcbx", String::new())?;
        Ok(self.dcbx)
    }
    fn set_dcbx(&mut self, _: &str, mode: u8) -> Result<(), DeviceError> {
        if self.sdcbx_takes_it {
            self.dcbx = mode;
        }
        self.answer("sdcbx", format!("{mode:#04x}"))?;
        self.dcbx = mode;
        Ok(())
    }
    fn set_state(&mut self, _: &str, on: bool) -> Result<(), DeviceError> {
        self.answer("state", on.to_string())
    }
    fn set_pfc(&mut self, _: &str, p: PriorityMap) -> Result<(), DeviceError> {
        self.answer("pfc_cfg", format!("{:#04x}", p.0))
    }
    fn set_pfc_state(&mut self, _: &str, on: bool) -> Result<(), DeviceError> {
        self.answer("pfc_state", on.to_string())
    }
    fn set_pg(&mut self, _: &str, _: &PgConfig) -> Result<(), DeviceError> {
        self.answer("pg", String::new())
    }
    fn set_all(&mut self, _: &str) -> Result<(), DeviceError> {
        self.answer("set_all", String::new())
    }
    fn get_pfc(&mut self, _: &str) -> Result<PriorityMap, DeviceError> {
        self.answer("pfc_gcfg", String::new())?;
        Ok(PriorityMap(0b1000))
    }
    fn get_pfc_state(&mut self, _: &str) -> Result<bool, DeviceError> {
        self.answer("pfc_gstate", String::new())?;
        Ok(true)
    }
    fn get_pg_tx(&mut self, _: &str) -> Result<([u8; 8], [u8; 8]), DeviceError> {
        self.answer("pgtx_gcfg", String::new())?;
        Ok(([0; 8], [100, 0, 0, 0, 0, 0, 0, 0]))
    }
}

fn refused(what: &str) -> DeviceError {
    DeviceError::new(
        DeviceErrorKind::Refused,
        format!("p0: {what}: the driver refused"),
    )
    .with_code("EINVAL")
}

fn unsupported(what: &str) -> DeviceError {
    DeviceError::new(
        DeviceErrorKind::Unsupported,
        format!("p0: {what}: EOPNOTSUPP"),
    )
    .with_code("EOPNOTSUPP")
}

const UDP_4791: AppPriority = AppPriority {
    priority: 3,
    selector: Selector::UDP,
    protocol: 4791,
};
const DSCP_26: AppPriority = AppPriority {
    priority: 3,
    selector: Selector::DSCP,
    protocol: 26,
};
const DSCP_48: AppPriority = AppPriority {
    priority: 6,
    selector: Selector::DSCP,
    protocol: 48,
};

/// A driver with a trust table, PFC's delay at 20,000 bit times, and `held` in its
/// APP table.
fn nic(held: &[AppPriority]) -> NicState {
    NicState {
        pfc: Some(IeeePfc {
            cap: 8,
            delay: 20_000,
            ..IeeePfc::default()
        }),
        apps: held.to_vec(),
        trust: Some(vec![SELECTOR_PCP]),
        ..NicState::default()
    }
}

fn program() -> IeeeProgram {
    IeeeProgram {
        ets: Some(EtsProgram {
            willing: false,
            max_tcs: 8,
            cbs: false,
            table: EtsTable::default(),
            recommendation: None,
        }),
        pfc_enabled: 1 << 3,
        app_add: vec![UDP_4791, DSCP_26, DSCP_26],
        app_del: vec![DSCP_48],
        trust: Some(Trust::DscpThenPcp),
    }
}

#[test]
fn ieee_runs_apps_then_trust_then_ets_and_pfc_between_two_reads() {
    let mut dev = Recording {
        state: nic(&[DSCP_48]),
        ..Recording::default()
    };
    let out = program_ieee(&mut dev, "p0", &program());
    assert_eq!(
        dev.calls,
        [
            "ieee_get",
            "app_add 3:4791",
            "app_add 5:26",
            "app_del 5:48",
            "trust [5, 255]",
            "ets",
            "pfc 0x08 20000",
            "ieee_get",
        ]
    );
    assert!(out.refusals().next().is_none(), "{out:?}");
    assert_eq!(out.apps_added.len(), 2, "an entry asked twice is sent once");
    assert_eq!(out.trust, Ok(TrustOutcome::Set));
    assert!(matches!(out.nic, Some(Ok(_))));
}

/// A refusal in the middle (the driver takes DSCP entries only) is that entry's
/// answer; the entries after it, the trust order, ETS and PFC still go.
#[test]
fn a_refused_app_entry_blocks_nothing_after_it() {
    let mut dev = Recording {
        state: nic(&[]),
        ..Recording::default()
    };
    dev.fail.insert("app_add", refused("IEEE_SET"));
    let mut p = program();
    p.app_add = vec![UDP_4791];
    let out = program_ieee(&mut dev, "p0", &p);
    assert_eq!(
        dev.calls,
        [
            "ieee_get",
            "app_add 3:4791",
            "trust [5, 255]",
            "ets",
            "pfc 0x08 20000",
            "ieee_get",
        ]
    );
    let refusals: Vec<_> = out.refusals().collect();
    assert_eq!(refusals.len(), 1);
    assert_eq!(refusals[0].kind, HardwareErrorKind::Refused);
    assert_eq!(refusals[0].code.as_deref(), Some("EINVAL"));
    assert_eq!(refusals[0].message, "p0: IEEE_SET: the driver refused");
    assert_eq!(out.pfc, Ok(()));
}

/// Entries the NIC holds are not added again; entries it does not hold are not
/// deleted (gone already: an answer of success).
#[test]
fn held_entries_are_not_sent_and_absent_ones_not_deleted() {
    let mut dev = Recording {
        state: nic(&[UDP_4791, DSCP_26]),
        ..Recording::default()
    };
    let out = program_ieee(&mut dev, "p0", &program());
    assert!(
        !dev.calls.iter().any(|c| c.starts_with("app_")),
        "{:?}",
        dev.calls
    );
    assert!(out.apps_added.iter().all(|(_, r)| r.is_ok()));
    assert_eq!(out.apps_deleted, vec![(DSCP_48, Ok(()))]);
}

/// No trust table: the trust order is not sent and is no failure; no PFC delay
/// reported: PFC is not sent and is refused as not supported.
#[test]
fn no_trust_table_and_no_pfc_delay() {
    let mut state = nic(&[]);
    state.trust = None;
    state.pfc = None;
    let mut dev = Recording {
        state,
        ..Recording::default()
    };
    let out = program_ieee(&mut dev, "p0", &program());
    assert!(!dev
        .calls
        .iter()
        .any(|c| c.starts_with("trust") || c.starts_with("pfc")));
    assert_eq!(out.trust, Ok(TrustOutcome::Unsupported));
    let e = out.pfc.expect_err("a refusal");
    assert_eq!(e.kind, HardwareErrorKind::NotSupported);
    assert!(e.message.contains("DCB_ATTR_IEEE_PFC"), "{}", e.message);
    // A trust table the driver then does not take (NotReported): unsupported too.
    let mut dev = Recording {
        state: nic(&[]),
        ..Recording::default()
    }
    .failing(
        "trust",
        DeviceError::new(DeviceErrorKind::NotReported, "no trust table"),
    );
    let out = program_ieee(&mut dev, "p0", &program());
    assert_eq!(out.trust, Ok(TrustOutcome::Unsupported));
    // Refused: the refusal.
    let mut dev = Recording {
        state: nic(&[]),
        ..Recording::default()
    }
    .failing("trust", refused("IEEE_SET"));
    let out = program_ieee(&mut dev, "p0", &program());
    assert_eq!(
        out.trust.expect_err("a refusal").kind,
        HardwareErrorKind::Refused
    );
}

/// The first IEEE_GET failing fails every part with its error, and nothing is sent.
#[test]
fn a_failed_first_read_fails_every_part() {
    let mut dev = Recording::default().failing(
        "ieee_get",
        DeviceError::new(DeviceErrorKind::Timeout, "p0: no reply"),
    );
    let out = program_ieee(&mut dev, "p0", &program());
    assert_eq!(dev.calls, ["ieee_get"]);
    assert_eq!(out.refusals().count(), 1 + 1 + 3 + 1 + 1);
    assert!(out
        .refusals()
        .all(|e| e.kind == HardwareErrorKind::Timeout && e.message == "p0: no reply"));
    assert!(out.nic.is_none());
}

/// A list the device cannot send fails every entry asked for (each copy too),
/// before any request; the other list and the rest still go.
#[test]
fn an_app_list_that_does_not_check_fails_whole() {
    let mut dev = Recording {
        state: nic(&[DSCP_48]),
        check: Some(DeviceError::new(
            DeviceErrorKind::InvalidRequest,
            "invalid dcbnl request: priority 9",
        )),
        ..Recording::default()
    };
    let out = program_ieee(&mut dev, "p0", &program());
    assert_eq!(out.apps_added.len(), 3);
    assert_eq!(out.apps_deleted.len(), 1);
    assert!(out
        .apps_added
        .iter()
        .chain(&out.apps_deleted)
        .all(|(_, r)| r.as_ref().expect_err("a refusal").kind == HardwareErrorKind::Refused));
    assert!(!dev.calls.iter().any(|c| c.starts_with("app_")));
    assert!(dev.calls.iter().any(|c| c.starts_with("pfc")));
}

#[test]
fn cee_sets_state_pfc_pg_then_commits() {
    let pfc = PfcConfig {
        priorities: PriorityMap(0b1000),
        num_tcs: 8,
    };
    let pg = PgConfig::default();
    let mut dev = Recording::default();
    assert_eq!(program_cee(&mut dev, "p0", Some(&pfc), Some(&pg)), Ok(()));
    assert_eq!(
        dev.calls,
        [
            "state true",
            "pfc_cfg 0x08",
            "pfc_state true",
            "pg",
            "set_all"
        ]
    );
    // PFC off: no priority, its state off, no PG.
    let mut dev = Recording::default();
    assert_eq!(program_cee(&mut dev, "p0", None, None), Ok(()));
    assert_eq!(
        dev.calls,
        ["state true", "pfc_cfg 0x00", "pfc_state false", "set_all"]
    );
}

/// A driver without `setstate` or without the PG setters: PFC is committed all the
/// same, and the PG's refusal reported after; any other refusal stops the order.
#[test]
fn cee_goes_on_past_what_the_driver_lacks() {
    let pg = PgConfig::default();
    let mut dev = Recording::default()
        .failing("state", unsupported("SSTATE"))
        .failing("pg", unsupported("PGRX_SCFG"));
    let e = program_cee(&mut dev, "p0", None, Some(&pg)).expect_err("a refusal");
    assert_eq!(dev.calls.last().map(String::as_str), Some("set_all"));
    assert_eq!(e.kind, HardwareErrorKind::NotSupported);
    assert_eq!(e.code.as_deref(), Some("EOPNOTSUPP"));
    // A PG refused for its value: not committed.
    let mut dev = Recording::default().failing("pg", refused("PGTX_SCFG"));
    let e = program_cee(&mut dev, "p0", None, Some(&pg)).expect_err("a refusal");
    assert_eq!(e.kind, HardwareErrorKind::Refused);
    assert!(!dev.calls.iter().any(|c| c == "set_all"));
    // DCB refused outright: nothing after.
    let mut dev = Recording::default().failing("state", refused("SSTATE"));
    assert!(program_cee(&mut dev, "p0", None, Some(&pg)).is_err());
    assert_eq!(dev.calls, ["state true"]);
}

#[test]
fn the_dcbx_mode_is_asked_only_when_it_differs_and_a_refusal_is_read_back() {
    let ieee = DCBX_HOST | DCBX_VER_IEEE;
    let mut dev = Recording {
        dcbx: ieee,
        ..Recording::default()
    };
    assert_eq!(set_dcbx_mode(&mut dev, "p0", Version::Ieee), Ok(()));
    assert_eq!(dev.calls, ["gdcbx"]);
    let mut dev = Recording::default();
    assert_eq!(set_dcbx_mode(&mut dev, "p0", Version::Cee), Ok(()));
    assert_eq!(dev.calls, ["gdcbx", "sdcbx 0x05"]);
    // A non-zero status (ice's ICE_DCB_NO_HW_CHG) with the mode in place: done.
    let mut dev = Recording {
        sdcbx_takes_it: true,
        ..Recording::default()
    }
    .failing("sdcbx", refused("SDCBX"));
    assert_eq!(set_dcbx_mode(&mut dev, "p0", Version::Ieee), Ok(()));
    assert_eq!(dev.calls, ["gdcbx", "sdcbx 0x09", "gdcbx"]);
    // Not in place: the refusal.
    let mut dev = Recording::default().failing("sdcbx", refused("SDCBX"));
    let e = set_dcbx_mode(&mut dev, "p0", Version::Ieee).expect_err("a refusal");
    assert_eq!(dev.calls, ["gdcbx", "sdcbx 0x09", "gdcbx"]);
    assert_eq!(e.kind, HardwareErrorKind::Refused);
    assert_eq!(e.code.as_deref(), Some("EINVAL"));
}

#[test]
fn reads_and_the_headroom_writes() {
    let mut dev = Recording::default();
    let nic = read_nic(&mut dev, "p0", true).expect("read");
    assert_eq!(
        dev.calls,
        ["ieee_get", "pfc_gcfg", "pfc_gstate", "pgtx_gcfg"]
    );
    assert_eq!(nic.cee.map(|c| (c.pfc, c.pfc_state)), Some((0b1000, true)));
    // A driver without CEE's getters: no CEE objects, no failure.
    let mut dev = Recording::default().failing("pfc_gcfg", unsupported("PFC_GCFG"));
    assert_eq!(read_nic(&mut dev, "p0", true).expect("read").cee, None);
    // The headroom: PFC with its delay, then the read-back, whatever the write said.
    let mut dev = Recording::default().failing("pfc", refused("IEEE_SET"));
    let (w, r) = apply_headroom(&mut dev, "p0", 0b1000, 20_000, true);
    assert_eq!(w.expect_err("a refusal").kind, HardwareErrorKind::Refused);
    assert!(matches!(r, Some(Ok(_))));
    assert_eq!(dev.calls, ["pfc 0x08 20000", "ieee_readback"]);
    // The buffer: written, then read back; a refusal reads nothing.
    let mut dev = Recording::default();
    assert!(write_buffer(&mut dev, "p0", &DcbBuffer::default()).is_ok());
    assert_eq!(dev.calls, ["buffer", "ieee_readback"]);
    let mut dev = Recording::default().failing("buffer", refused("IEEE_SET"));
    assert!(write_buffer(&mut dev, "p0", &DcbBuffer::default()).is_err());
    assert_eq!(dev.calls, ["buffer"]);
}

/// Every kind a device reports maps to the one the node counts, and back.
#[test]
fn each_kind_maps_to_what_the_node_counts() {
    use DeviceErrorKind as D;
    use HardwareErrorKind as H;
    for (d, h) in [
        (D::Unsupported, H::NotSupported),
        (D::NotReported, H::NotSupported),
        (D::NoDevice, H::NoDevice),
        (D::Refused, H::Refused),
        (D::InvalidRequest, H::Refused),
        (D::Permission, H::Permission),
        (D::Busy, H::Busy),
        (D::Timeout, H::Timeout),
        (D::Malformed, H::Malformed),
        (D::Io, H::Other),
        (D::Other, H::Other),
    ] {
        let e = DeviceError::new(d, "m").with_code("E");
        let hw = e.hardware();
        assert_eq!(
            (hw.kind, hw.message.as_str(), hw.code.as_deref()),
            (h, "m", Some("E"))
        );
        assert_eq!(DeviceError::from_hardware(&hw).hardware(), hw);
    }
}
