//! What the operator sets for IEEE 802.1Qaz on a port, beside what CEE and IEEE share.
//!
//! PFC is one feature in both versions (`DcbxConfig::pfc`: the priorities, willing,
//! enable, advertise, and the number of PFC-capable traffic classes, which IEEE calls
//! PFC capability); IEEE adds the MACsec bypass bit. ETS is IEEE's counterpart of
//! CEE's priority groups and has its own settings. The APP table's flags are shared
//! (`DcbxConfig::app`); its IEEE entries (selectors for TCP, UDP, any port and DSCP)
//! are kept here, beside the CEE entries.

use lossless_wire::ieee::{
    AppPriorityTable, EtsConfig, EtsRecommendation, EtsTable, IeeeDcbx, InvalidValue, PfcConfig,
    PriorityMap, Selector, MAX_TCS,
};
use serde::{Deserialize, Serialize};

use super::{DcbxConfig, FeatureAdmin};

/// ETS as this port runs and advertises it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EtsAdmin {
    /// The station supports the credit-based shaper.
    #[serde(default)]
    pub cbs: bool,
    /// Traffic classes the station supports, 1..=8.
    pub max_tcs: u8,
    /// Priority to traffic class, bandwidth per class, selection algorithm per class.
    #[serde(flatten)]
    pub table: EtsTable,
    /// Send the table as an ETS Recommendation too, for a willing peer to run. None:
    /// when we are not willing (a switch recommends, a host takes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommend: Option<bool>,
}

impl Default for EtsAdmin {
    /// lldpad's default: 8 TCs, every priority on TC 0, every TC strict.
    fn default() -> Self {
        EtsAdmin {
            cbs: false,
            max_tcs: MAX_TCS,
            table: EtsTable::default(),
            recommend: None,
        }
    }
}

impl EtsAdmin {
    /// Whether the ETS Recommendation TLV goes out, given our Willing.
    pub fn recommends(&self, willing: bool) -> bool {
        self.recommend.unwrap_or(!willing)
    }

    /// The ETS Configuration TLV's rules, and every priority on a class the station
    /// has.
    pub fn validate(&self) -> Result<(), InvalidValue> {
        EtsConfig {
            willing: false,
            cbs: self.cbs,
            max_tcs: self.max_tcs,
            table: self.table,
        }
        .validate()?;
        for (p, &tc) in self.table.prio_tc.iter().enumerate() {
            if tc >= self.max_tcs {
                return Err(InvalidValue {
                    field: "ets.prio_tc",
                    index: Some(p),
                    value: tc.into(),
                    reason: "the traffic class is beyond ets.max_tcs",
                });
            }
        }
        Ok(())
    }
}

/// The IEEE-only settings of a port.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct IeeeConfig {
    pub ets: FeatureAdmin<EtsAdmin>,
    /// PFC's MACsec bypass capability (the rest of IEEE PFC is `DcbxConfig::pfc`).
    pub pfc_mbc: bool,
    /// The APP entries in IEEE form; enable, willing and advertise are
    /// `DcbxConfig::app`'s.
    pub app: AppPriorityTable,
}

impl IeeeConfig {
    /// ETS's rules and the APP entries' (each valid, no selector and protocol twice).
    pub fn validate(&self) -> Result<(), InvalidValue> {
        self.ets.cfg.validate()?;
        validate_app(&self.app)
    }
}

impl DcbxConfig {
    /// The IEEE TLVs this configuration sends while the port runs `ets` and `pfc`, as
    /// IEEE 802.1Qaz asks (D.2.9: the ETS Configuration TLV carries what the station
    /// runs). The machines advertise it with their operational tables
    /// (`IeeeMachines::advertise`); the LLDPDU's bound measures it with the configured ones.
    pub fn ieee_tlvs(
        &self,
        ets: EtsTable,
        pfc: PriorityMap,
        headroom_measurement: bool,
    ) -> IeeeDcbx {
        let ets_admin = &self.ieee.ets;
        let (ets, rec) = if ets_admin.advertise && ets_admin.enable {
            let cfg = EtsConfig {
                willing: ets_admin.willing,
                cbs: ets_admin.cfg.cbs,
                max_tcs: ets_admin.cfg.max_tcs,
                table: ets,
            };
            let rec = ets_admin
                .cfg
                .recommends(ets_admin.willing)
                .then_some(EtsRecommendation {
                    table: ets_admin.cfg.table,
                });
            (Some(cfg), rec)
        } else {
            (None, None)
        };
        // A PFC disabled locally is advertised with no priority, so that a willing
        // peer turns it off too (CEE's Enable flag has the same effect).
        let pfc = self.pfc.advertise.then_some(PfcConfig {
            willing: self.pfc.willing,
            mbc: self.ieee.pfc_mbc,
            cap: self.pfc.cfg.num_tcs,
            enabled: if self.pfc.enable {
                pfc
            } else {
                PriorityMap::NONE
            },
            headroom_measurement,
        });
        // Our own entries only: echoing the peer's back would make them ours.
        let app = (self.app.advertise && self.app.enable).then(|| self.ieee.app.clone());
        IeeeDcbx::new(ets, rec, pfc, app)
    }
}

/// Every entry valid, none twice, and a DSCP on one priority only: two priorities for
/// one DSCP would leave it to the NIC which one wins. (A port or an Ethertype may be
/// given several priorities, as the standard's table allows.)
pub fn validate_app(app: &AppPriorityTable) -> Result<(), InvalidValue> {
    app.validate()?;
    for (i, e) in app.iter().enumerate() {
        let earlier = app[..i].iter().find(|f| {
            f.selector == e.selector
                && f.protocol == e.protocol
                && (f.priority == e.priority || e.selector == Selector::DSCP)
        });
        if let Some(f) = earlier {
            return Err(InvalidValue {
                field: "app.entries",
                index: Some(i),
                value: u64::from(e.protocol),
                reason: if f.priority == e.priority {
                    "the same entry twice"
                } else {
                    "a DSCP on two priorities"
                },
            });
        }
    }
    Ok(())
}
