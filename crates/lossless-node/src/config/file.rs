//! The layout of the file: `[daemon]`, `[defaults]` and `[ports."..."]`,
//! read from the TOML tree into daemon settings and per-section layers.

use std::net::SocketAddr;
use std::path::PathBuf;

use lossless_dcbx::DcbxMode;
use lossless_relay::RelaySection;
use lossless_wire::cee::{PriorityMap, DCBX_OUI};
use serde::de::{DeserializeOwned, IntoDeserializer};
use toml_edit::ImDocument;

use super::app::{AppRule, AppRules, RuleSelector, MAX_RULES};
use super::error::{each, Fault};
use super::headroom::HeadroomSetting;
use super::pattern::Pattern;
use super::priorities::{indexed, priorities};
use super::read::{quoted, Field};
use super::setting::{Feature, Flag, Layer, Setting, Site, Timer};
use super::DaemonSettings;

const TOP_KEYS: &[&str] = &["daemon", "defaults", "ports", "relay"];
const DAEMON_KEYS: &[&str] = &[
    "socket",
    "socket_group",
    "state_dir",
    "metrics",
    "metrics_web_config",
    "log",
    "packet_rcvbuf_bytes",
    "control_max_connections",
    "control_request_timeout_ms",
    "metrics_max_connections",
    "rx_budget_per_s",
    "rx_budget_burst",
];
pub(crate) const PORT_KEYS: &[&str] = &[
    "admin_status",
    "apply",
    "nic_drift",
    "nic_hold_ms",
    "port_description",
    "system_name",
    "system_description",
    "system_capabilities",
    "management_address",
    "chassis_id",
    "port_id",
    "max_neighbors",
    "max_neighbor_hold",
    "timers",
    "dcbx",
    "pg",
    "pfc",
    "app",
    "ets",
    "headroom",
    "pfc_watchdog",
    "roce",
];
const TIMER_KEYS: &[&str] = &[
    "msg_tx_interval",
    "msg_tx_hold",
    "msg_fast_tx",
    "tx_fast_init",
    "tx_credit_max",
    "reinit_delay",
];
const DCBX_KEYS: &[&str] = &["enabled", "mode", "max_version"];
const PG_KEYS: &[&str] = &[
    "enable",
    "willing",
    "advertise",
    "pgid",
    "percent",
    "num_tcs",
];
const PFC_KEYS: &[&str] = &[
    "enable",
    "willing",
    "advertise",
    "priorities",
    "num_tcs",
    "mbc",
];
const APP_KEYS: &[&str] = &["enable", "willing", "advertise", "entries"];
const ENTRY_KEYS: &[&str] = &["selector", "protocol", "priority", "priorities", "oui"];

/// A `[ports."..."]` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PortSection {
    pub pattern: Pattern,
    pub layer: Layer,
}

/// The file, read but not yet checked against `PortConfig::validate`.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub daemon: DaemonSettings,
    pub defaults: Layer,
    pub ports: Vec<PortSection>,
    pub relay: Option<RelaySection>,
}

/// Text that is not TOML: nothing more can be read from it.
pub(crate) struct Syntax {
    pub at: usize,
    pub message: String,
}

/// Reads the file; every refused key or value goes to `faults` and the reading goes
/// on with the next, so the file's every mistake is listed.
pub(crate) fn parse(text: &str, faults: &mut Vec<Fault>) -> Result<Parsed, Syntax> {
    let doc = ImDocument::parse(text).map_err(|e| Syntax {
        at: e.span().map_or(0, |s| s.start),
        // toml_edit puts context and detail on separate lines.
        message: e
            .message()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(": "),
    })?;
    let mut out = Parsed {
        daemon: DaemonSettings::default(),
        defaults: Layer::new("defaults".into(), 0),
        ports: Vec::new(),
        relay: None,
    };
    each(
        Field::root(doc.as_table()).entries(),
        faults,
        |f, faults| {
            match f.name {
                "daemon" => daemon(&f, &mut out.daemon, faults),
                "defaults" => {
                    out.defaults = Layer::new(f.path.clone(), f.key_at());
                    port_keys(&f, &mut out.defaults, faults);
                }
                "ports" => each(f.entries(), faults, |p, faults| {
                    let path = format!("ports.{}", quoted(p.name));
                    let p = p.with_path(path);
                    let pattern = Pattern::parse(p.name).map_err(|reason| Fault {
                        at: p.key_at(),
                        key: p.path.clone(),
                        reason: reason.to_string(),
                    })?;
                    let mut layer = Layer::new(p.path.clone(), p.key_at());
                    port_keys(&p, &mut layer, faults);
                    out.ports.push(PortSection { pattern, layer });
                    Ok(())
                }),
                "relay" => out.relay = Some(super::relay::parse(text, &f)?),
                _ => return Err(f.unknown(TOP_KEYS)),
            }
            Ok(())
        },
    );
    Ok(out)
}

fn daemon(section: &Field, d: &mut DaemonSettings, faults: &mut Vec<Fault>) {
    // A non-loopback `metrics` is refused unless `metrics_web_config` (anywhere in the
    // section) names a file to protect it: kept until the section is read.
    let mut exposed = None;
    each(section.entries(), faults, |f, _| {
        match f.name {
            "socket" => d.socket = absolute(&f)?,
            "state_dir" => d.state_dir = absolute(&f)?,
            "socket_group" => {
                let g = f.str()?;
                if g.is_empty() {
                    return Err(f.fault("a group name cannot be empty"));
                }
                if let Some(c) = g
                    .chars()
                    .find(|&c| c == ':' || c == '/' || c.is_whitespace())
                {
                    return Err(f.fault(format!("{c:?} cannot appear in a group name")));
                }
                d.socket_group = Some(g.to_string());
            }
            "metrics" => {
                let addr = metrics(&f)?;
                if let Err(why) = check_metrics_exposure(addr, false) {
                    exposed = Some(f.fault(why.to_string()));
                }
                d.metrics = Some(addr);
            }
            "metrics_web_config" => d.metrics_web_config = Some(absolute(&f)?),
            "log" => {
                let s = f.str()?;
                if s.trim().is_empty() {
                    return Err(f.fault("the log filter cannot be empty (try \"info\")"));
                }
                d.log = s.to_string();
            }
            "packet_rcvbuf_bytes" => {
                d.limits.packet_rcvbuf_bytes = bounded(&f, 64 << 10, 1 << 30, "bytes")?
            }
            "control_max_connections" => {
                d.limits.control_max_connections = bounded(&f, 1, 1 << 20, "connections")?
            }
            "metrics_max_connections" => {
                d.limits.metrics_max_connections = bounded(&f, 1, 65_536, "connections")?
            }
            "control_request_timeout_ms" => {
                d.limits.control_request_timeout_ms = bounded(&f, 10, 3_600_000, "ms")?
            }
            "rx_budget_per_s" => {
                d.limits.rx_budget.per_s = bounded(&f, 1, 10_000_000, "frames per second")?
            }
            "rx_budget_burst" => d.limits.rx_budget.burst = bounded(&f, 1, 10_000_000, "frames")?,
            _ => return Err(f.unknown(DAEMON_KEYS)),
        }
        Ok(())
    });
    if let Some(fault) = exposed.filter(|_| d.metrics_web_config.is_none()) {
        faults.push(fault);
    }
}

/// An integer in `min..=max` (`unit` names what it counts).
fn bounded(f: &Field, min: u32, max: u32, unit: &str) -> Result<u32, Fault> {
    let v = f.int()?;
    match u32::try_from(v) {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => Err(f.fault(format!("{v} is out of range {min}..={max} ({unit})"))),
    }
}

fn absolute(f: &Field) -> Result<PathBuf, Fault> {
    let s = f.str()?;
    if !s.starts_with('/') {
        return Err(f.fault(format!("{s:?} is not an absolute path")));
    }
    if s.contains('\0') {
        return Err(f.fault("a path cannot contain NUL"));
    }
    Ok(PathBuf::from(s))
}

fn metrics(f: &Field) -> Result<SocketAddr, Fault> {
    check_metrics_address(f.str()?).map_err(|reason| f.fault(reason.to_string()))
}

/// The metrics endpoint's address by the file's rule (`[daemon] metrics`, and
/// `losslessd --metrics` alike): ADDRESS:PORT with a port other than 0 (a scraper must
/// know it). Whether the address may be other than loopback is
/// [`check_metrics_exposure`]'s to say.
pub fn check_metrics_address(s: &str) -> Result<SocketAddr, MetricsAddressError> {
    let addr: SocketAddr = s
        .parse()
        .map_err(|_| MetricsAddressError::NotAddressPort(s.to_string()))?;
    if addr.port() == 0 {
        return Err(MetricsAddressError::PortZero);
    }
    Ok(addr)
}

/// Why a metrics address is refused ([`check_metrics_address`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetricsAddressError {
    #[error("{0:?} is not ADDRESS:PORT (such as \"127.0.0.1:9717\" or \"[::1]:9717\")")]
    NotAddressPort(String),
    #[error("port 0 is not allowed: give the port to scrape")]
    PortZero,
}

/// Whether the metrics endpoint may listen on `addr`: a loopback address always; any
/// other only with a web configuration (`metrics_web_config`, `--web-config-file`),
/// whose file must then set TLS or basic authentication (the daemon checks that when
/// it reads the file). Metrics carry the fabric's topology: they are not served in
/// clear to the network by default.
pub fn check_metrics_exposure(
    addr: SocketAddr,
    web_config: bool,
) -> Result<(), MetricsExposureError> {
    if addr.ip().is_loopback() || web_config {
        return Ok(());
    }
    Err(MetricsExposureError { ip: addr.ip() })
}

/// A metrics address other than loopback without a web configuration to protect it
/// ([`check_metrics_exposure`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{ip} is not a loopback address: the metrics endpoint has no authentication, bind it \
     to 127.0.0.1 or ::1, or protect it with TLS or basic authentication in a web \
     configuration file (metrics_web_config; docs/operations.md, \"Fleet\")"
)]
pub struct MetricsExposureError {
    pub ip: std::net::IpAddr,
}

/// A value named by a lowercase word, read through its serde form.
fn word<T: DeserializeOwned>(f: &Field) -> Result<T, Fault> {
    let s = f.str()?;
    T::deserialize(s.into_deserializer())
        .map_err(|e: serde::de::value::Error| f.fault(e.to_string()))
}

fn site(f: &Field) -> Site {
    Site {
        key: f.path.clone(),
        at: f.at(),
        parts: Vec::new(),
    }
}

/// Every key that may appear in `[defaults]` and in a `[ports."..."]` section.
fn port_keys(section: &Field, layer: &mut Layer, faults: &mut Vec<Fault>) {
    let out = &mut layer.settings;
    each(section.entries(), faults, |f, faults| {
        let setting = match f.name {
            "apply" => Setting::Apply(word(&f)?),
            "nic_drift" => Setting::NicDrift(word(&f)?),
            "nic_hold_ms" => {
                let v = f.uint(super::NIC_HOLD_MAX_MS.into())?;
                Setting::NicHoldMs(u32::try_from(v).unwrap_or(u32::MAX))
            }
            "admin_status" => Setting::AdminStatus(word(&f)?),
            "port_description"
            | "system_name"
            | "system_description"
            | "system_capabilities"
            | "management_address" => {
                let mut parts = Vec::new();
                if let Some(setting) = super::identity::read(&f, &mut parts)? {
                    let mut site = site(&f);
                    site.parts = parts;
                    out.push((setting, site));
                }
                return Ok(());
            }
            "chassis_id" => Setting::ChassisId(f.str()?.to_string()),
            "port_id" => Setting::PortId(f.str()?.to_string()),
            "max_neighbors" => {
                let v = f.uint(u32::MAX.into())?;
                Setting::MaxNeighbors(usize::try_from(v).unwrap_or(usize::MAX))
            }
            "max_neighbor_hold" => {
                let v = f.uint(u32::MAX.into())?;
                Setting::MaxNeighborHold(u32::try_from(v).unwrap_or(u32::MAX))
            }
            "timers" => {
                each(f.entries(), faults, |t, _| {
                    let timer = Timer::from_name(t.name).ok_or_else(|| t.unknown(TIMER_KEYS))?;
                    let v = t.uint(timer.type_max())?;
                    let v = u16::try_from(v).unwrap_or(u16::MAX);
                    out.push((Setting::Timer(timer, v), site(&t)));
                    Ok(())
                });
                return Ok(());
            }
            "dcbx" => {
                each(f.entries(), faults, |d, _| {
                    let setting = match d.name {
                        "enabled" => Setting::DcbxEnabled(d.bool()?),
                        "mode" => {
                            let m = d.str()?;
                            Setting::DcbxMode(DcbxMode::from_name(m).ok_or_else(|| {
                                d.fault(format!(
                                    "unknown DCBX mode {}; expected \"auto\", \"ieee\", \"cee\" or \"static\"",
                                    quoted(m)
                                ))
                            })?)
                        }
                        "max_version" => {
                            Setting::MaxVersion(u8::try_from(d.uint(255)?).unwrap_or(u8::MAX))
                        }
                        _ => return Err(d.unknown(DCBX_KEYS)),
                    };
                    out.push((setting, site(&d)));
                    Ok(())
                });
                return Ok(());
            }
            "headroom" => {
                each(f.entries(), faults, |h, _| {
                    out.push((Setting::Headroom(HeadroomSetting::read(&h)?), site(&h)));
                    Ok(())
                });
                return Ok(());
            }
            "pfc_watchdog" => {
                each(f.entries(), faults, |w, _| {
                    let setting = super::pfc_watchdog::PfcWatchdogSetting::read(&w)?;
                    out.push((Setting::PfcWatchdog(setting), site(&w)));
                    Ok(())
                });
                return Ok(());
            }
            "roce" => {
                each(f.entries(), faults, |r, _| {
                    let setting = super::roce::RoceSetting::read(&r)?;
                    out.push((Setting::Roce(setting), site(&r)));
                    Ok(())
                });
                return Ok(());
            }
            "pg" | "pfc" | "app" => {
                let which = match f.name {
                    "pg" => Feature::Pg,
                    "pfc" => Feature::Pfc,
                    _ => Feature::App,
                };
                feature(&f, which, out, faults);
                return Ok(());
            }
            "ets" => {
                super::ets::read(&f, out, faults);
                return Ok(());
            }
            _ => return Err(f.unknown(PORT_KEYS)),
        };
        out.push((setting, site(&f)));
        Ok(())
    });
}

fn feature(
    section: &Field,
    feature: Feature,
    out: &mut Vec<(Setting, Site)>,
    faults: &mut Vec<Fault>,
) {
    each(section.entries(), faults, |f, _| {
        let mut site = site(&f);
        let setting = if let Some(flag) = Flag::from_name(f.name) {
            Setting::Flag(feature, flag, f.bool()?)
        } else {
            match (feature, f.name) {
                (Feature::Pg | Feature::Pfc, "num_tcs") => {
                    let v = u8::try_from(f.uint(255)?).unwrap_or(u8::MAX);
                    match feature {
                        Feature::Pg => Setting::PgNumTcs(v),
                        _ => Setting::PfcNumTcs(v),
                    }
                }
                (Feature::Pg, "pgid") => {
                    let (v, at) = f.eight("one PGID per priority 0..7")?;
                    site.parts = indexed(at);
                    Setting::PgPgid(v)
                }
                (Feature::Pg, "percent") => {
                    let (v, at) = f.eight("one percentage per priority group 0..7")?;
                    site.parts = indexed(at);
                    Setting::PgPercent(v)
                }
                (Feature::Pfc, "mbc") => Setting::PfcMbc(f.bool()?),
                (Feature::Pfc, "priorities") => {
                    let (v, parts) = priorities(&f)?;
                    site.parts = parts;
                    Setting::PfcPriorities(v)
                }
                (Feature::App, "entries") => {
                    let (v, parts) = app_entries(&f)?;
                    site.parts = parts;
                    Setting::AppEntries(Box::new(v))
                }
                (Feature::Pg, _) => return Err(f.unknown(PG_KEYS)),
                (Feature::Pfc, _) => return Err(f.unknown(PFC_KEYS)),
                (Feature::App, _) => return Err(f.unknown(APP_KEYS)),
                (Feature::Ets, _) => return Err(f.unknown(super::ets::ETS_KEYS)),
            }
        };
        out.push((setting, site));
        Ok(())
    });
}

/// The APP rules: an array of `{ selector, protocol, priority | priorities, oui }`
/// tables, inline or as `[[...app.entries]]`, checked by [`AppRules::validate`].
fn app_entries(f: &Field) -> Result<(AppRules, Vec<(String, usize)>), Fault> {
    let elements = f.elements()?;
    if elements.len() > MAX_RULES {
        return Err(f.fault(format!(
            "at most {MAX_RULES} rules fit in the APP TLV, found {}",
            elements.len()
        )));
    }
    let mut rules = AppRules::default();
    let mut parts = Vec::new();
    for (i, e) in elements.iter().enumerate() {
        parts.push((format!("[{i}]"), e.at()));
        let (mut selector, mut protocol, mut oui, mut prio) = (None, None, None, None);
        for k in e.entries()? {
            match k.name {
                "selector" => selector = Some(app_selector(&k)?),
                "protocol" => protocol = Some(u16::try_from(k.uint(0xffff)?).unwrap_or(u16::MAX)),
                "oui" => oui = Some(read_oui(&k)?),
                "priorities" | "priority" if prio.is_some() => {
                    return Err(k.fault("give either `priority` or `priorities`, not both"))
                }
                "priorities" => prio = Some(priorities(&k)?.0),
                "priority" => {
                    let v = k.uint(7)?;
                    prio = Some(PriorityMap(1 << v));
                }
                _ => return Err(k.unknown(ENTRY_KEYS)),
            }
            parts.push((format!("[{i}].{}", k.name), k.at()));
        }
        let missing = |key: &str| e.fault(format!("missing key `{key}`"));
        rules.entries.push(AppRule {
            selector: selector.ok_or_else(|| missing("selector"))?,
            protocol: protocol.ok_or_else(|| missing("protocol"))?,
            oui: oui.unwrap_or(DCBX_OUI),
            priorities: prio.ok_or_else(|| missing("priority"))?,
        });
    }
    if let Err(e) = rules.validate() {
        let (key, at) = elements
            .get(e.index)
            .map(|el| {
                let part = ["priority", "priorities"]
                    .iter()
                    .find(|p| {
                        e.part == "priorities"
                            && parts
                                .iter()
                                .any(|(s, _)| *s == format!("[{}].{p}", e.index))
                    })
                    .copied()
                    .unwrap_or(e.part);
                let suffix = if part.is_empty() {
                    format!("[{}]", e.index)
                } else {
                    format!("[{}].{part}", e.index)
                };
                let at = parts
                    .iter()
                    .find(|(s, _)| *s == suffix)
                    .map_or(el.at(), |(_, at)| *at);
                (format!("{}{suffix}", f.path), at)
            })
            .unwrap_or((f.path.clone(), f.at()));
        return Err(Fault {
            at,
            key,
            reason: e.reason,
        });
    }
    Ok((rules, parts))
}

/// `"ethertype"`, `"tcp"`, `"udp"`, `"port"` (alias `"tcp-udp"`), `"dscp"`, or CEE's
/// 2-bit field value 0..=3.
fn app_selector(f: &Field) -> Result<RuleSelector, Fault> {
    if let Ok(name) = f.str() {
        return RuleSelector::from_name(name).ok_or_else(|| {
            f.fault(format!(
                "unknown APP selector {}; expected \"ethertype\", \"tcp\", \"udp\", \"port\" \
                 or \"dscp\"",
                quoted(name)
            ))
        });
    }
    match f.int() {
        Ok(_) => Ok(RuleSelector::Cee(
            u8::try_from(f.uint(3)?).unwrap_or(u8::MAX),
        )),
        Err(_) => Err(
            f.fault("expected \"ethertype\", \"tcp\", \"udp\", \"port\", \"dscp\" or CEE's 0..=3")
        ),
    }
}

/// An OUI as `"00-1b-21"` (or with colons), or as three integers.
fn read_oui(f: &Field) -> Result<[u8; 3], Fault> {
    let bad = || f.fault("expected an OUI such as \"00-1b-21\" or [0x00, 0x1b, 0x21]");
    if let Ok(s) = f.str() {
        let bytes: Vec<&str> = s.split(['-', ':']).collect();
        let mut out = [0u8; 3];
        if bytes.len() != 3 {
            return Err(bad());
        }
        for (slot, b) in out.iter_mut().zip(bytes) {
            if b.len() != 2 || !b.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(bad());
            }
            *slot = u8::from_str_radix(b, 16).map_err(|_| bad())?;
        }
        return Ok(out);
    }
    let elements = f.elements().map_err(|_| bad())?;
    if elements.len() != 3 {
        return Err(bad());
    }
    let mut out = [0u8; 3];
    for (slot, e) in out.iter_mut().zip(&elements) {
        *slot = u8::try_from(e.uint(255)?).unwrap_or(u8::MAX);
    }
    Ok(out)
}
