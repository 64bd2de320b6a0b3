//! Between the system crate's types (what the kernel says) and the node core's (what
//! it reasons about): links, dcbnl objects and errors, timestamping clocks.

use lossless_node::dcb_device::{DeviceError, DeviceErrorKind};
use lossless_node::hardware::{
    DcbBuffer, EtsProgram, HardwareError, IeeePfc, IeeeReadback, NicState,
};
use lossless_node::link::{Link, LinkChange};
use lossless_node::timestamps::{Clock, Clocks, TimestampMode};
use lossless_sys::dcbnl::{self as sys_dcb, DcbError, DcbErrorKind};
use lossless_sys::link::{LinkEvent, LinkInfo};
use lossless_sys::timestamp as sys_ts;
use lossless_wire::ieee::AppPriority;

pub fn link(l: LinkInfo) -> Link {
    Link {
        ifindex: l.ifindex,
        name: l.name,
        mac: l.mac,
        admin_up: l.admin_up,
        oper_up: l.oper_up,
        carrier: l.carrier,
        alias: l.alias,
    }
}

pub fn link_change(ev: LinkEvent) -> LinkChange {
    match ev {
        LinkEvent::New(l) => LinkChange::New(link(l)),
        LinkEvent::Del { ifindex, .. } => LinkChange::Del { ifindex },
    }
}

/// A dcbnl failure, classified by what the node core decides and counts on
/// (`lossless_node::dcb_device`).
pub fn device_error(e: DcbError) -> DeviceError {
    let kind = match (&e, e.kind()) {
        (DcbError::NotReported { .. }, _) => DeviceErrorKind::NotReported,
        (_, DcbErrorKind::Unsupported) => DeviceErrorKind::Unsupported,
        (_, DcbErrorKind::NoDevice) => DeviceErrorKind::NoDevice,
        (_, DcbErrorKind::Refused) => DeviceErrorKind::Refused,
        (_, DcbErrorKind::InvalidRequest) => DeviceErrorKind::InvalidRequest,
        (_, DcbErrorKind::Permission) => DeviceErrorKind::Permission,
        (_, DcbErrorKind::Busy) => DeviceErrorKind::Busy,
        (_, DcbErrorKind::Timeout) => DeviceErrorKind::Timeout,
        (_, DcbErrorKind::Malformed) => DeviceErrorKind::Malformed,
        (_, DcbErrorKind::Io) => DeviceErrorKind::Io,
        (_, DcbErrorKind::Errno(_)) => DeviceErrorKind::Other,
    };
    // The errno by name; a CEE or SDCBX set's driver-defined status by number.
    let code = match (&e, e.errno()) {
        (_, Some(errno)) => Some(sys_dcb::errno_name(errno)),
        (DcbError::Status { status, .. }, None) => Some(format!("status {status}")),
        _ => None,
    };
    let error = DeviceError::new(kind, e.to_string());
    match code {
        Some(c) => error.with_code(c),
        None => error,
    }
}

/// A dcbnl failure as the node counts it (the PFC counter thread's readings).
pub fn hardware_error(e: DcbError) -> HardwareError {
    device_error(e).hardware()
}

pub fn ieee_readback(c: sys_dcb::IeeeConfig) -> IeeeReadback {
    IeeeReadback {
        pfc: c.pfc.map(|p| IeeePfc {
            cap: p.cap,
            enabled: p.enabled,
            mbc: p.mbc,
            delay: p.delay,
            requests: p.requests,
            indications: p.indications,
        }),
        buffer: c.buffer.map(|b| DcbBuffer {
            prio2buffer: b.prio2buffer,
            buffer_size: b.buffer_size,
            total_size: b.total_size,
        }),
    }
}

pub fn sys_buffer(b: &DcbBuffer) -> sys_dcb::DcbBuffer {
    sys_dcb::DcbBuffer {
        prio2buffer: b.prio2buffer,
        buffer_size: b.buffer_size,
        total_size: b.total_size,
    }
}

/// IEEE ETS as `struct ieee_ets` carries it (receive bandwidths as transmit: few
/// drivers read them, none differently).
pub fn ieee_ets(e: &EtsProgram) -> sys_dcb::IeeeEts {
    let tsa = |t: &lossless_wire::ieee::EtsTable| t.tsa.map(|a| sys_dcb::Tsa(a.0));
    let rec = e.recommendation.unwrap_or(e.table);
    sys_dcb::IeeeEts {
        willing: e.willing,
        ets_cap: e.max_tcs,
        cbs: e.cbs,
        tc_tx_bw: e.table.tc_bw,
        tc_rx_bw: e.table.tc_bw,
        tc_tsa: tsa(&e.table),
        prio_tc: e.table.prio_tc,
        tc_reco_bw: rec.tc_bw,
        tc_reco_tsa: tsa(&rec),
        reco_prio_tc: rec.prio_tc,
    }
}

/// APP entries as `struct dcb_app` (the IEEE selector numbers are the kernel's).
pub fn dcb_apps(apps: &[AppPriority]) -> Vec<sys_dcb::DcbApp> {
    apps.iter()
        .map(|a| sys_dcb::DcbApp {
            selector: sys_dcb::AppSelector(a.selector.0),
            priority: a.priority,
            protocol: a.protocol,
        })
        .collect()
}

pub fn timestamp_mode(m: TimestampMode) -> sys_ts::TimestampMode {
    match m {
        TimestampMode::Auto => sys_ts::TimestampMode::Auto,
        TimestampMode::Software => sys_ts::TimestampMode::Software,
        TimestampMode::Hardware => sys_ts::TimestampMode::Hardware,
    }
}

pub fn clocks(c: sys_ts::Clocks) -> Clocks {
    let clock = |c: sys_ts::Clock| match c {
        sys_ts::Clock::Hardware => Clock::Hardware,
        sys_ts::Clock::Software => Clock::Software,
        sys_ts::Clock::Userspace => Clock::Userspace,
    };
    Clocks {
        rx: clock(c.rx),
        tx: clock(c.tx),
    }
}

/// A `struct dcb_app` back as the node's APP entry.
pub fn app_priority(a: sys_dcb::DcbApp) -> AppPriority {
    AppPriority {
        priority: a.priority,
        selector: lossless_wire::ieee::Selector(a.selector.0),
        protocol: a.protocol,
    }
}

/// What `DCB_CMD_IEEE_GET` says the NIC holds, as the node compares it. The PFC
/// counters are left out (the counter thread reads them; a read-back compares
/// configuration).
pub fn nic_state(s: sys_dcb::IeeeState) -> NicState {
    NicState {
        ets: s.ets.map(|e| lossless_wire::ieee::EtsTable {
            prio_tc: e.prio_tc,
            tc_bw: e.tc_tx_bw,
            tsa: e.tc_tsa.map(|t| lossless_wire::ieee::Tsa(t.0)),
        }),
        pfc: s.pfc.map(|p| IeeePfc {
            cap: p.cap,
            enabled: p.enabled,
            mbc: p.mbc,
            delay: p.delay,
            requests: [0; 8],
            indications: [0; 8],
        }),
        apps: s.apps.into_iter().map(app_priority).collect(),
        trust: s.trust.map(|t| t.into_iter().map(|sel| sel.0).collect()),
        buffer: s.buffer.map(|b| DcbBuffer {
            prio2buffer: b.prio2buffer,
            buffer_size: b.buffer_size,
            total_size: b.total_size,
        }),
        dcbx: s.dcbx.map(|m| m.0),
        cee: None,
    }
}
