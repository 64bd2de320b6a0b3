//! Value checks: `PortConfig::validate` on the effective configuration of
//! every section, with a refusal traced back to the key that set the value.

use lossless_dcbx::ConfigError;
use lossless_wire::cee::InvalidValue;
use lossless_wire::MacAddr;

use super::error::Fault;
use super::file::PortSection;
use super::pattern::Pattern;
use super::setting::{Key, Layer, Timer};
use super::PortSettings;
use crate::identity::LocalInfo;

/// Checks `[defaults]` over the built-in defaults, then each port section in
/// file order over `[defaults]` (an exact-name section also over the glob
/// sections that match its name). Every check is per key, so settings that
/// pass in every section also pass in any combination of sections. Every refusal
/// goes to `faults`, each once (a `[defaults]` or glob key refused under several
/// sections is listed once).
pub(crate) fn check(defaults: &Layer, ports: &[PortSection], faults: &mut Vec<Fault>) {
    let mut add = |found: Vec<Fault>| {
        for f in found {
            if !faults.contains(&f) {
                faults.push(f);
            }
        }
    };
    add(check_all(&[defaults]));
    for section in ports {
        let mut layers = vec![defaults];
        if let Pattern::Exact(name) = &section.pattern {
            layers.extend(
                ports
                    .iter()
                    .filter(|g| g.pattern.is_glob() && g.pattern.matches(name))
                    .map(|g| &g.layer),
            );
        }
        layers.push(&section.layer);
        add(check_all(&layers));
    }
}

/// Every refusal of one stack of layers: the first, then, with the key it blames
/// taken out (its value falls back to the layers below, which passed), the next,
/// until the stack passes or the refusal blames no key.
fn check_all(layers: &[&Layer]) -> Vec<Fault> {
    let mut own: Vec<Layer> = layers.iter().map(|l| (*l).clone()).collect();
    let mut found = Vec::new();
    let limit = own.iter().map(|l| l.settings.len()).sum::<usize>() + 1;
    for _ in 0..limit {
        let refs: Vec<&Layer> = own.iter().collect();
        let Err((fault, blamed)) = check_layers(&refs) else {
            break;
        };
        found.push(fault);
        let Some((layer, keys)) = blamed else {
            break;
        };
        own[layer]
            .settings
            .retain(|(s, _)| !keys.contains(&s.key()));
    }
    found
}

/// The first refusal of a stack of layers, and which layer's keys it blames (to
/// take out before looking for the next).
type Blame = Option<(usize, Vec<Key>)>;

fn check_layers(layers: &[&Layer]) -> Result<(), (Fault, Blame)> {
    let mut settings = PortSettings::default();
    for layer in layers {
        layer.apply(&mut settings);
    }
    // Before any port exists, what the host will say is unknown: the longest it can
    // be is what the LLDPDU must have room for.
    let config = settings.port_config(MacAddr([0; 6]), &LocalInfo::longest());
    let Err(ConfigError::Value { path, reason }) = config.validate() else {
        return Ok(());
    };
    let Some(top) = layers.last() else {
        return Ok(());
    };
    if path == "lldpdu" {
        return Err(too_long(layers, reason));
    }
    let Some((key, suffix, reason)) = locate(&settings, &path, reason.clone()) else {
        // A check this module does not know yet: blame the section.
        let fault = Fault {
            at: top.at,
            key: format!("{}.{path}", top.path),
            reason,
        };
        return Err((fault, None));
    };
    for (i, layer) in layers.iter().enumerate().rev() {
        if let Some(site) = layer.find(key) {
            let (name, at) = site.part(&suffix);
            let fault = Fault {
                at,
                key: name,
                reason,
            };
            return Err((fault, Some((i, vec![key]))));
        }
        // The three ETS tables may have been set at once, per traffic class.
        let table = matches!(key, Key::EtsPrioTc | Key::EtsTcBw | Key::EtsTsa);
        if let Some(site) = layer.find(Key::EtsTcs).filter(|_| table) {
            let fault = Fault {
                at: site.at,
                key: site.key.clone(),
                reason,
            };
            return Err((fault, Some((i, vec![Key::EtsTcs]))));
        }
    }
    // Only a built-in default could be left, and those are valid.
    let fault = Fault {
        at: top.at,
        key: format!("{}.{path}", top.path),
        reason,
    };
    Err((fault, None))
}

/// The keys whose values fill an LLDPDU (what can make it too long), longest-lived
/// first: the one set last in the topmost section that sets any is blamed.
const LLDPDU_KEYS: [Key; 7] = [
    Key::ChassisId,
    Key::PortId,
    Key::PortDescription,
    Key::SystemName,
    Key::SystemDescription,
    Key::ManagementAddress,
    Key::AppEntries,
];

/// An LLDPDU that could exceed one frame: blamed on the identity or APP key set last.
fn too_long(layers: &[&Layer], reason: String) -> (Fault, Blame) {
    let reason = format!(
        "{reason} (the values left to the host are counted at their longest: a host name \
         of 64 octets, an alias and a description of 255)"
    );
    for (i, layer) in layers.iter().enumerate().rev() {
        let last = layer
            .settings
            .iter()
            .rev()
            .find(|(s, _)| LLDPDU_KEYS.contains(&s.key()));
        if let Some((setting, site)) = last {
            let fault = Fault {
                at: site.at,
                key: site.key.clone(),
                reason,
            };
            return (fault, Some((i, vec![setting.key()])));
        }
    }
    let top = layers
        .last()
        .map_or((0, String::new()), |l| (l.at, l.path.clone()));
    let fault = Fault {
        at: top.0,
        key: top.1,
        reason,
    };
    (fault, None)
}

/// Which key holds the value `PortConfig::validate` refused at `path`, the
/// element within it (`[2]`, `[1].selector`, or empty), and the reason to show.
fn locate(s: &PortSettings, path: &str, reason: String) -> Option<(Key, String, String)> {
    let simple = |key| Some((key, String::new(), reason.clone()));
    match path {
        "max_neighbors" => simple(Key::MaxNeighbors),
        "max_neighbor_hold" => simple(Key::MaxNeighborHold),
        "chassis_id" => simple(Key::ChassisId),
        "port_id" => simple(Key::PortId),
        "system_name" => simple(Key::SystemName),
        "port_description" => simple(Key::PortDescription),
        "system_description" => simple(Key::SystemDescription),
        "management_address" => simple(Key::ManagementAddress),
        "system_capabilities.capabilities" => Some((
            Key::SystemCapabilities,
            ".capabilities".into(),
            reason.clone(),
        )),
        "system_capabilities.enabled" => {
            Some((Key::SystemCapabilities, ".enabled".into(), reason.clone()))
        }
        "dcbx.pg" => feature(s.dcbx.pg.cfg.validate()),
        "dcbx.pfc" => feature(s.dcbx.pfc.cfg.validate()),
        "dcbx.ieee" => feature(s.dcbx.ieee.ets.cfg.validate()),
        _ => {
            let timer = Timer::from_name(path.strip_prefix("timers.")?)?;
            simple(Key::Timer(timer))
        }
    }
}

/// The same feature check `PortConfig::validate` made, for its structured
/// error: which field and which element.
fn feature(r: Result<(), InvalidValue>) -> Option<(Key, String, String)> {
    let e = r.err()?;
    let index = |i: usize| format!("[{i}]");
    let (key, suffix) = match (e.field, e.index) {
        ("pg.pgid", i) => (Key::PgPgid, i.map(index)),
        ("pg.percent", i) => (Key::PgPercent, i.map(index)),
        ("pg.num_tcs", _) => (Key::PgNumTcs, None),
        ("pfc.num_tcs", _) => (Key::PfcNumTcs, None),
        ("ets.prio_tc", i) => (Key::EtsPrioTc, i.map(index)),
        ("ets.tc_bw", i) => (Key::EtsTcBw, i.map(index)),
        ("ets.tsa", i) => (Key::EtsTsa, i.map(index)),
        ("ets.max_tcs", _) => (Key::EtsMaxTcs, None),
        _ => return None,
    };
    let reason = match (e.field, e.index) {
        ("pg.percent", None) => format!("percentages sum to {}, must be 100", e.value),
        ("ets.tc_bw", None) => format!("{} (they sum to {})", e.reason, e.value),
        _ => format!("{} (found {})", e.reason, e.value),
    };
    Some((key, suffix.unwrap_or_default(), reason))
}
