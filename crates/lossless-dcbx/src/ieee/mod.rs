//! IEEE 802.1Qaz DCBX (IEEE 802.1Q-2018 clause 38 and Annex D): no SeqNo, no AckNo,
//! no Error flag; each feature is decided from the peer's latest TLVs every time one
//! arrives, and what a port runs is what it advertises.
//!
//! - ETS is asymmetric (D.3.2): a willing port runs the peer's ETS Recommendation;
//!   otherwise its own configuration. The peer's Willing bit does not matter.
//! - PFC is symmetric (D.3.3): a willing port takes a not-willing peer's PFC; when both
//!   are willing, the port with the lower MAC address takes the peer's, so the higher
//!   MAC's PFC runs on both ends (lldpad's `pfc_sm` does the same). Two willing ends
//!   with the same MAC each keep their own (a mismatch if they differ), where lldpad
//!   has both take the other's and swap at every exchange.
//! - APP: the operational table is our entries, then the peer's that do not name a
//!   selector and protocol of ours (lldpad merges the peer's entries too).
//!
//! Without a peer (none yet, gone, or more than one neighbour) a port runs its own
//! configuration: unlike CEE, IEEE has no state in which a feature is switched off for
//! want of agreement.

mod features;

use std::collections::VecDeque;

use lossless_wire::ieee::{
    AppPriorityTable, EtsConfig, EtsRecommendation, EtsTable, IeeeDcbx, PfcConfig, PriorityMap,
};
use lossless_wire::MacAddr;
use serde::Serialize;

use crate::config::DcbxConfig;
use crate::event::Event;
use crate::reason::Reason;

/// The IEEE settings are the configuration's ([`crate::config::ieee`]); named here too.
pub use crate::config::{EtsAdmin, IeeeConfig};
pub use features::{IeeeFeature, Outcome};

/// What the peer tells the IEEE machines.
#[derive(Debug, Clone, Copy)]
pub enum PeerView<'a> {
    /// DCBX is not running locally.
    Inactive,
    /// No DCBX peer; `reason` says which kind of absence.
    Absent(Reason),
    /// The single neighbour's IEEE TLVs, and its MAC (for PFC's tie-break).
    Present { tlvs: &'a IeeeDcbx, mac: MacAddr },
    /// `mode = "static"`: the configuration runs; the single neighbour's IEEE TLVs,
    /// if it sends any, are kept to show and compare, never followed.
    Static(Option<&'a IeeeDcbx>),
}

/// The peer's TLVs as last received (the valid ones).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
pub struct PeerTlvs {
    pub ets_config: Option<EtsConfig>,
    pub ets_recommendation: Option<EtsRecommendation>,
    pub pfc: Option<PfcConfig>,
    pub app: Option<AppPriorityTable>,
}

/// The three features of one port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IeeeMachines {
    pub ets: IeeeFeature<EtsTable>,
    pub pfc: IeeeFeature<PriorityMap>,
    pub app: IeeeFeature<AppPriorityTable>,
    pub peer: PeerTlvs,
}

impl IeeeMachines {
    pub fn new(d: &DcbxConfig) -> Self {
        IeeeMachines {
            ets: IeeeFeature::new(d.ieee.ets.cfg.table),
            pfc: IeeeFeature::new(d.pfc.cfg.priorities),
            app: IeeeFeature::new(d.ieee.app.clone()),
            peer: PeerTlvs::default(),
        }
    }

    /// Every feature agrees with the peer (see [`IeeeFeature::agreed`]).
    pub fn all_agreed(&self) -> bool {
        self.ets.agreed && self.pfc.agreed && self.app.agreed
    }

    /// Runs the three features with the peer's current information.
    pub fn evaluate(
        &mut self,
        d: &DcbxConfig,
        local: MacAddr,
        view: PeerView<'_>,
        events: &mut VecDeque<Event>,
    ) {
        self.peer = match view {
            PeerView::Present { tlvs, .. } | PeerView::Static(Some(tlvs)) => PeerTlvs {
                ets_config: ok(&tlvs.ets_config),
                ets_recommendation: ok(&tlvs.ets_recommendation),
                pfc: ok(&tlvs.pfc),
                app: ok(&tlvs.app),
            },
            _ => PeerTlvs::default(),
        };
        let ets = features::ets(d, view);
        self.ets.update(ets, events);
        let pfc = features::pfc(d, local, view);
        self.pfc.update(pfc, events);
        let app = features::app(d, view);
        self.app.update(app, events);
    }

    /// The TLVs this port sends: its operational configuration, as IEEE 802.1Qaz
    /// asks (D.2.9: the ETS Configuration TLV carries what the station runs).
    pub fn advertise(&self, d: &DcbxConfig, headroom_measurement: bool) -> IeeeDcbx {
        d.ieee_tlvs(self.ets.oper, self.pfc.oper, headroom_measurement)
    }
}

fn ok<T: Clone>(slot: &Option<Result<T, lossless_wire::DecodeError>>) -> Option<T> {
    slot.as_ref().and_then(|r| r.as_ref().ok()).cloned()
}
