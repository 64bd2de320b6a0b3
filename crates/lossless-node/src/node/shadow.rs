//! Runtime changes (`dcbx set`) that shadow the configuration file: on a reload, each
//! feature of a port whose persisted override runs instead of a different value in
//! the file, and whether this reload changed that value (which then does not run).
//! `lossless dcbx reset PORT FEATURE` hands the feature back to the file.

use crate::config::{DaemonConfig, PortSettings};
use crate::protocol::{FeatureName, Shadowed, Source};
use crate::state::PersistedState;

/// Every runtime change of `ports` that runs instead of the file's value under `new`;
/// `old` is the file before the reload.
pub(super) fn shadowed<'a>(
    old: &DaemonConfig,
    new: &DaemonConfig,
    persisted: &PersistedState,
    ports: impl Iterator<Item = &'a String>,
) -> Vec<Shadowed> {
    let mut out = Vec::new();
    for port in ports {
        let Some(overrides) = persisted.ports.get(port) else {
            continue;
        };
        let (before, file) = (old.port(port), new.port(port));
        let mut running = file.clone();
        overrides.apply(&mut running);
        let sources = overrides.sources();
        for feature in FeatureName::ALL {
            let runtime = match feature {
                FeatureName::Pg => sources.pg,
                FeatureName::Pfc => sources.pfc,
                FeatureName::App => sources.app,
                FeatureName::Ets => sources.ets,
                FeatureName::Mode => sources.mode,
            } == Source::Runtime;
            if !runtime || !differs(&running, &file, feature) {
                continue;
            }
            let file_changed = differs(&before, &file, feature);
            out.push(Shadowed {
                port: port.clone(),
                feature,
                file_changed,
                message: message(port, feature, file_changed),
            });
        }
    }
    out
}

/// What a person reads: which value runs, and the command that gives the file's back.
fn message(port: &str, feature: FeatureName, file_changed: bool) -> String {
    let f = feature.name();
    let what = if file_changed {
        "the file's new value does not run: a runtime change (dcbx set) shadows it"
    } else {
        "a runtime change (dcbx set) runs instead of the file's value"
    };
    format!("{port} {f}: {what}; lossless dcbx reset {port} {f} to use the file")
}

/// Whether `a` and `b` differ in what `feature` covers (as a `dcbx set` of it changes).
fn differs(a: &PortSettings, b: &PortSettings, feature: FeatureName) -> bool {
    let (x, y) = (&a.dcbx, &b.dcbx);
    match feature {
        FeatureName::Pg => x.pg != y.pg,
        FeatureName::Pfc => x.pfc != y.pfc || x.ieee.pfc_mbc != y.ieee.pfc_mbc,
        FeatureName::App => {
            let flags =
                |d: &lossless_dcbx::DcbxConfig| (d.app.enable, d.app.willing, d.app.advertise);
            flags(x) != flags(y) || a.app != b.app
        }
        FeatureName::Ets => x.ieee.ets != y.ieee.ets,
        FeatureName::Mode => x.mode != y.mode,
    }
}
