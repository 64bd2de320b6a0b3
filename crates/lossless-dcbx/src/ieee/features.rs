//! The decision of each IEEE 802.1Qaz feature from the local settings and the peer's
//! latest TLVs, and the state that reports it.

use std::collections::VecDeque;

use lossless_wire::ieee::{AppPriorityTable, EtsTable, PriorityMap};
use lossless_wire::{DecodeError, DecodeErrorKind, MacAddr};
use serde::Serialize;

use super::PeerView;
use crate::config::DcbxConfig;
use crate::event::{Event, FeatureId};
use crate::reason::Reason;

/// What a feature runs after a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome<C> {
    pub oper: C,
    /// The feature runs (false: disabled locally).
    pub oper_mode: bool,
    pub reason: Reason,
    /// Both ends run what they should: see [`IeeeFeature::agreed`].
    pub agreed: bool,
}

/// One feature's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IeeeFeature<C> {
    /// What the port runs.
    pub oper: C,
    pub oper_mode: bool,
    /// The link does not run what both ends want (see `Reason::is_ieee_error`).
    pub error: bool,
    /// The peer's latest TLV shows what the decision expects of it: for PFC, the
    /// same priorities as ours; for ETS, our recommendation once it takes it (or
    /// nothing, when neither side takes the other's); for APP, a peer at all.
    pub agreed: bool,
    pub reason: Reason,
}

impl<C: Clone + PartialEq> IeeeFeature<C> {
    pub fn new(oper: C) -> Self {
        IeeeFeature {
            oper,
            oper_mode: false,
            error: false,
            agreed: false,
            reason: Reason::DcbxInactive,
        }
    }

    /// Takes a decision and reports what changed.
    pub fn update(&mut self, o: Outcome<C>, events: &mut VecDeque<Event>)
    where
        C: FeatureOf,
    {
        let feature = C::ID;
        let error = o.reason.is_ieee_error();
        if error && !self.error {
            events.push_back(Event::ErrorSet {
                feature,
                reason: o.reason,
            });
        } else if !error && self.error {
            events.push_back(Event::ErrorCleared { feature });
        }
        if o.reason != self.reason {
            match o.reason {
                Reason::PeerDiffers => events.push_back(Event::Incompatible { feature }),
                Reason::PeerFeatureAbsent => {
                    events.push_back(Event::FeatureNotPresentOnPeer { feature })
                }
                _ => {}
            }
        }
        if o.oper_mode != self.oper_mode || o.oper != self.oper {
            events.push_back(Event::OperChanged {
                feature,
                oper_mode: o.oper_mode,
            });
        }
        if o.agreed && !self.agreed {
            events.push_back(Event::Syncd { feature });
        }
        self.oper = o.oper;
        self.oper_mode = o.oper_mode;
        self.error = error;
        self.agreed = o.agreed;
        self.reason = o.reason;
    }
}

/// The feature a configuration type belongs to, for events.
pub trait FeatureOf {
    const ID: FeatureId;
}

impl FeatureOf for EtsTable {
    const ID: FeatureId = FeatureId::Ets;
}

impl FeatureOf for PriorityMap {
    const ID: FeatureId = FeatureId::Pfc;
}

impl FeatureOf for AppPriorityTable {
    const ID: FeatureId = FeatureId::App;
}

/// The reason a peer's TLV that is not usable gives.
fn unusable(e: &DecodeError) -> Reason {
    match e.kind {
        DecodeErrorKind::Duplicate { .. } => Reason::DuplicateTlv,
        _ => Reason::PeerFeatureInvalid,
    }
}

/// Our own configuration runs: no peer, or not taking it.
fn local<C>(oper: C, oper_mode: bool, reason: Reason) -> Outcome<C> {
    Outcome {
        oper,
        oper_mode,
        reason,
        agreed: false,
    }
}

/// ETS (IEEE 802.1Q-2018 D.3.2, asymmetric).
pub(super) fn ets(d: &DcbxConfig, view: PeerView<'_>) -> Outcome<EtsTable> {
    let admin = &d.ieee.ets;
    let ours = admin.cfg.table;
    if !admin.enable {
        return local(ours, false, Reason::LocalDisabled);
    }
    if !admin.advertise {
        return local(ours, true, Reason::NotAdvertised);
    }
    let tlvs = match view {
        PeerView::Inactive => return local(ours, true, Reason::DcbxInactive),
        PeerView::Static(_) => return local(ours, true, Reason::Static),
        PeerView::Absent(r) => return local(ours, true, r),
        PeerView::Present { tlvs, .. } => tlvs,
    };
    // A willing port runs the peer's recommendation, whatever its configuration TLV.
    if admin.willing {
        match &tlvs.ets_recommendation {
            Some(Ok(rec)) => {
                return Outcome {
                    oper: rec.table,
                    oper_mode: true,
                    reason: Reason::AdoptedRecommendation,
                    agreed: true,
                }
            }
            Some(Err(e)) => return local(ours, true, unusable(e)),
            None => {}
        }
    }
    let peer = match &tlvs.ets_config {
        None => {
            let reason = if admin.willing {
                Reason::NoRecommendation
            } else {
                Reason::PeerFeatureAbsent
            };
            return local(ours, true, reason);
        }
        Some(Err(e)) => return local(ours, true, unusable(e)),
        Some(Ok(c)) => c,
    };
    // The peer takes our recommendation when it is willing and we send one: agreed
    // once it runs it; otherwise each runs its own, which ETS allows.
    let they_take = peer.willing && admin.cfg.recommends(admin.willing);
    let reason = if admin.willing {
        Reason::NoRecommendation
    } else {
        Reason::NotWilling
    };
    Outcome {
        oper: ours,
        oper_mode: true,
        reason,
        agreed: !they_take || peer.table == ours,
    }
}

/// PFC (IEEE 802.1Q-2018 D.3.3, symmetric).
pub(super) fn pfc(d: &DcbxConfig, local_mac: MacAddr, view: PeerView<'_>) -> Outcome<PriorityMap> {
    let admin = &d.pfc;
    let ours = admin.cfg.priorities;
    if !admin.enable {
        return local(PriorityMap::NONE, false, Reason::LocalDisabled);
    }
    if !admin.advertise {
        return local(ours, true, Reason::NotAdvertised);
    }
    let (tlvs, peer_mac) = match view {
        PeerView::Inactive => return local(ours, true, Reason::DcbxInactive),
        PeerView::Static(_) => return local(ours, true, Reason::Static),
        PeerView::Absent(r) => return local(ours, true, r),
        PeerView::Present { tlvs, mac } => (tlvs, mac),
    };
    let peer = match &tlvs.pfc {
        None => return local(ours, true, Reason::PeerFeatureAbsent),
        Some(Err(e)) => return local(ours, true, unusable(e)),
        Some(Ok(p)) => p,
    };
    let (oper, reason) = match (admin.willing, peer.willing) {
        (true, false) => (peer.enabled, Reason::AdoptedPeer),
        // The lower MAC takes the peer's.
        (true, true) if local_mac.0 < peer_mac.0 => (peer.enabled, Reason::TieBreakAdopted),
        (true, true) if local_mac.0 > peer_mac.0 => (ours, Reason::TieBreakKept),
        (false, true) => (ours, Reason::PeerWilling),
        // Neither willing, or both with the same MAC (a misconfiguration no rule
        // decides; lldpad has both take the other's, and two such ends would swap
        // configurations at every exchange for ever): each keeps its own.
        _ if peer.enabled == ours => (ours, Reason::Compatible),
        _ => (ours, Reason::PeerDiffers),
    };
    Outcome {
        oper,
        oper_mode: true,
        reason,
        agreed: peer.enabled == oper,
    }
}

/// APP: our entries, then (when willing) the peer's for selectors and protocols we
/// do not name.
pub(super) fn app(d: &DcbxConfig, view: PeerView<'_>) -> Outcome<AppPriorityTable> {
    let admin = &d.app;
    let ours = d.ieee.app.clone();
    if !admin.enable {
        return local(AppPriorityTable::new(), false, Reason::LocalDisabled);
    }
    if !admin.advertise {
        return local(ours, true, Reason::NotAdvertised);
    }
    let tlvs = match view {
        PeerView::Inactive => return local(ours, true, Reason::DcbxInactive),
        PeerView::Static(_) => return local(ours, true, Reason::Static),
        PeerView::Absent(r) => return local(ours, true, r),
        PeerView::Present { tlvs, .. } => tlvs,
    };
    let agreed = |o: Outcome<AppPriorityTable>| Outcome { agreed: true, ..o };
    let peer = match &tlvs.app {
        None => return agreed(local(ours, true, Reason::PeerFeatureAbsent)),
        Some(Err(e)) => return local(ours, true, unusable(e)),
        Some(Ok(t)) => t,
    };
    if !admin.willing {
        return agreed(local(ours, true, Reason::NotWilling));
    }
    let mut oper = ours;
    for e in peer.iter() {
        let named = oper
            .iter()
            .any(|o| o.selector == e.selector && o.protocol == e.protocol);
        // A table full of our entries keeps them; the peer's overflow is dropped.
        if !named && oper.push(*e).is_err() {
            break;
        }
    }
    Outcome {
        oper,
        oper_mode: true,
        reason: Reason::Merged,
        agreed: true,
    }
}
