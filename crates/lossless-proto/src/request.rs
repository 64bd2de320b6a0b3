//! The requests a client writes, one JSON object a line.

use lossless_dcbx::DcbxMode;
use lossless_wire::ieee::Tsa;
use serde::{Deserialize, Serialize};

/// A request line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    Status,
    Neighbors {
        #[serde(default)]
        port: Option<String>,
    },
    DcbxShow {
        #[serde(default)]
        port: Option<String>,
    },
    DcbxSet {
        port: String,
        change: FeatureChange,
    },
    /// Drops a port's runtime change (`dcbx_set`) so that the file's value runs again:
    /// one feature's, or every one when `feature` is absent. Persisted like a set.
    DcbxReset {
        port: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        feature: Option<FeatureName>,
    },
    /// Sets RoCE host settings of a port at run time (`lossless roce set`), each key
    /// checked by the file's rule (`RoceSetting::check` in lossless-node): persisted as
    /// `dcbx_set` is, over the file's `[ports."X".roce]`.
    RoceSet {
        port: String,
        settings: std::collections::BTreeMap<String, serde_json::Value>,
    },
    /// Drops the port's runtime RoCE host settings: the file's run again.
    RoceReset {
        port: String,
    },
    Counters {
        #[serde(default)]
        port: Option<String>,
    },
    Events {
        /// Keep the connection open and stream events as they happen.
        #[serde(default)]
        follow: bool,
    },
    Reload,
    /// Adaptive headroom per port: the last measurement, its sizing, what is applied.
    HeadroomShow {
        #[serde(default)]
        port: Option<String>,
    },
    /// The PFC relay of draft-he-rtgwg-wan-pfc-00: the core's counters and the data path's.
    RelayShow,
    /// PFC per priority (frames, rates, time paused) and the storm watchdog's state.
    PfcShow {
        #[serde(default)]
        port: Option<String>,
    },
}

/// One feature's administrative change; absent fields stay as they are. Which fields
/// a feature takes (any other is refused, naming it):
///
/// * every feature but `mode`: `enable`, `willing`, `advertise`;
/// * `pg`: `pgid`, `percent`;
/// * `pfc` (CEE DCBX and IEEE 802.1Qaz alike): `priorities`; IEEE only: `mbc`;
/// * `app`: `app` (the whole list, replaced), `app_del` then `app_add` (rules removed,
///   then merged in);
/// * `ets` (IEEE 802.1Qaz): `prio_tc`, `tc_bw`, `tsa` (eight each) or `tcs` (per
///   traffic class, the three tables at once), `max_tcs`, `cbs`, `recommend`;
/// * `mode`: `mode`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(from = "FeatureChangeWire", into = "FeatureChangeWire")]
pub struct FeatureChange {
    pub feature: FeatureName,
    pub enable: Option<bool>,
    pub willing: Option<bool>,
    pub advertise: Option<bool>,
    /// PFC: the priorities with PFC on (replaces the set).
    pub priorities: Option<Vec<u8>>,
    /// PFC, IEEE 802.1Qaz: the MACsec bypass capability bit.
    pub mbc: Option<bool>,
    /// PG: PGID of priorities 0..7.
    pub pgid: Option<Vec<u8>>,
    /// PG: bandwidth percentage of PGs 0..7.
    pub percent: Option<Vec<u8>>,
    /// APP: the whole list of rules (replaces it; the CEE table's shape reads too).
    pub app: Option<crate::app::AppRules>,
    /// APP: rules to merge in ([`crate::app::AppRules::add`]) and to take out
    /// ([`crate::app::AppRules::remove`]).
    pub app_rules: Option<Box<AppRulesChange>>,
    /// ETS's fields (boxed: a request stays small).
    pub ets: Option<Box<EtsChange>>,
    /// mode: which DCBX version the port runs.
    pub mode: Option<DcbxMode>,
}

/// APP rules added and removed by one change: `app_del` runs first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AppRulesChange {
    /// A rule for a selector and protocol already listed gains the priorities (a
    /// DSCP's is replaced).
    pub add: Option<Vec<AppRuleChange>>,
    /// The priorities given, or the whole rule when none is.
    pub del: Option<Vec<AppRuleChange>>,
}

/// ETS's fields of a change.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EtsChange {
    /// The traffic class of priorities 0..7.
    pub prio_tc: Option<Vec<u8>>,
    /// The bandwidth share of traffic classes 0..7.
    pub tc_bw: Option<Vec<u8>>,
    /// The selection algorithm of traffic classes 0..7.
    pub tsa: Option<Vec<Tsa>>,
    /// Per traffic class (the file's `ets.tcs`): replaces the three tables.
    pub tcs: Option<Vec<TcChange>>,
    /// Traffic classes the station supports, 1..=8.
    pub max_tcs: Option<u8>,
    /// The station supports the credit-based shaper.
    pub cbs: Option<bool>,
    /// Send the ETS Recommendation TLV (Some(true/false)), or Some(None): when not
    /// willing (the default).
    pub recommend: Option<Option<bool>>,
}

impl From<FeatureChangeWire> for FeatureChange {
    fn from(w: FeatureChangeWire) -> Self {
        let app_rules = (w.app_add.is_some() || w.app_del.is_some()).then(|| {
            Box::new(AppRulesChange {
                add: w.app_add,
                del: w.app_del,
            })
        });
        let ets = EtsChange {
            prio_tc: w.prio_tc,
            tc_bw: w.tc_bw,
            tsa: w.tsa,
            tcs: w.tcs,
            max_tcs: w.max_tcs,
            cbs: w.cbs,
            recommend: w.recommend,
        };
        FeatureChange {
            feature: w.feature,
            enable: w.enable,
            willing: w.willing,
            advertise: w.advertise,
            priorities: w.priorities,
            mbc: w.mbc,
            pgid: w.pgid,
            percent: w.percent,
            app: w.app,
            app_rules,
            ets: (ets != EtsChange::default()).then(|| Box::new(ets)),
            mode: w.mode,
        }
    }
}

impl From<FeatureChange> for FeatureChangeWire {
    fn from(c: FeatureChange) -> Self {
        let (app_add, app_del) = match c.app_rules {
            Some(r) => (r.add, r.del),
            None => (None, None),
        };
        let e = c.ets.map(|e| *e).unwrap_or_default();
        FeatureChangeWire {
            feature: c.feature,
            enable: c.enable,
            willing: c.willing,
            advertise: c.advertise,
            priorities: c.priorities,
            mbc: c.mbc,
            pgid: c.pgid,
            percent: c.percent,
            app: c.app,
            app_add,
            app_del,
            prio_tc: e.prio_tc,
            tc_bw: e.tc_bw,
            tsa: e.tsa,
            tcs: e.tcs,
            max_tcs: e.max_tcs,
            cbs: e.cbs,
            recommend: e.recommend,
            mode: c.mode,
        }
    }
}

/// The flat JSON form of [`FeatureChange`] (what the socket reads and writes).
#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FeatureChangeWire {
    feature: FeatureName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    enable: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    willing: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    advertise: Option<bool>,
    /// PFC: the priorities with PFC on (replaces the set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    priorities: Option<Vec<u8>>,
    /// PFC, IEEE 802.1Qaz: the MACsec bypass capability bit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mbc: Option<bool>,
    /// PG: PGID of priorities 0..7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pgid: Option<Vec<u8>>,
    /// PG: bandwidth percentage of PGs 0..7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    percent: Option<Vec<u8>>,
    /// APP: the whole list of rules (replaces it; the CEE table's shape reads too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    app: Option<crate::app::AppRules>,
    /// APP: rules to merge in ([`crate::app::AppRules::add`]): a rule for a selector
    /// and protocol already listed gains the priorities (a DSCP's is replaced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    app_add: Option<Vec<AppRuleChange>>,
    /// APP: rules to take out ([`crate::app::AppRules::remove`]): the priorities
    /// given, or the whole rule when none is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    app_del: Option<Vec<AppRuleChange>>,
    /// ETS: the traffic class of priorities 0..7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prio_tc: Option<Vec<u8>>,
    /// ETS: the bandwidth share of traffic classes 0..7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tc_bw: Option<Vec<u8>>,
    /// ETS: the selection algorithm of traffic classes 0..7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tsa: Option<Vec<Tsa>>,
    /// ETS per traffic class (the file's `ets.tcs`): replaces the three tables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tcs: Option<Vec<TcChange>>,
    /// ETS: traffic classes the station supports, 1..=8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_tcs: Option<u8>,
    /// ETS: the station supports the credit-based shaper.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cbs: Option<bool>,
    /// ETS: send the ETS Recommendation TLV (`true`/`false`), or `null`: when not
    /// willing (the default).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    recommend: Option<Option<bool>>,
    /// mode: which DCBX version the port runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mode: Option<DcbxMode>,
}

/// A field that may be given as `null`: present (Some) with its value.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// One APP rule to add or remove: `{"selector":"dscp","protocol":26,"priority":3}`.
/// `priority` (one) or `priorities` (a list); checked as the file's are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppRuleChange {
    pub selector: crate::app::RuleSelector,
    pub protocol: u16,
    #[serde(
        default,
        alias = "priority",
        deserialize_with = "one_or_list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub priorities: Vec<u8>,
    /// CEE DCBX only: the OUI sent with the entry (00-1B-21 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oui: Option<[u8; 3]>,
}

fn one_or_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        One(u8),
        List(Vec<u8>),
    }
    Ok(match Raw::deserialize(d)? {
        Raw::One(p) => vec![p],
        Raw::List(l) => l,
    })
}

/// One traffic class of the per-class ETS form: `{"tc":1,"priorities":[3],"bandwidth":50}`.
/// Priorities not listed in any class are on class 0; a class not listed is strict with
/// no share; a class with a share is ETS unless `tsa` says otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcChange {
    pub tc: u8,
    #[serde(default)]
    pub priorities: Vec<u8>,
    #[serde(default)]
    pub bandwidth: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tsa: Option<Tsa>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FeatureName {
    Pg,
    #[default]
    Pfc,
    App,
    /// IEEE 802.1Qaz ETS.
    Ets,
    /// The DCBX version (`dcbx.mode`): not a feature, but changed the same way.
    Mode,
}

impl FeatureName {
    pub const ALL: [FeatureName; 5] = [
        FeatureName::Pg,
        FeatureName::Pfc,
        FeatureName::App,
        FeatureName::Ets,
        FeatureName::Mode,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FeatureName::Pg => "pg",
            FeatureName::Pfc => "pfc",
            FeatureName::App => "app",
            FeatureName::Ets => "ets",
            FeatureName::Mode => "mode",
        }
    }
}
