//! The DCB Feature state machine (CEE DCBX specification §2.4.3; its Figure 11
//! rebuilt from the text, Tables 3 and 4, and lldpad's run_feature_protocol for
//! CEE). One instance per feature; PG, PFC and APP differ only in
//! [`FeatureKind`].
//!
//! Order of the checks, as the figure's labels and lldpad have them:
//! not advertised (F4) -> peer absent/expired (F6, F8) -> wait for our
//! SeqNo's ack -> duplicate TLVs (F9) -> feature version -> either side
//! disabled (F15) -> local willing, peer not (F17) -> local not willing, peer
//! willing (F19) -> equal willing and Compatible (F21) -> otherwise the
//! configurations mismatch (CfgNotCompatible: Error set).

use std::collections::VecDeque;

use lossless_wire::cee::{AppConfig, AppEntry, FeatureHeader, FeatureTlv, PfcConfig, PgConfig};
use lossless_wire::DecodeError;
use serde::Serialize;

use crate::config::FeatureAdmin;
use crate::event::{Event, FeatureId};
use crate::reason::Reason;

/// What distinguishes one feature from another.
pub trait FeatureKind: Clone + PartialEq + std::fmt::Debug + Serialize {
    const ID: FeatureId;

    /// The feature's Compatible method: may two not-differently-willing peers
    /// run with their own configurations?
    fn compatible(local: &Self, peer: &Self) -> bool;

    /// SetCfg(cfg, FALSE): what the hardware runs when OperMode is false.
    /// `None` means the feature is disabled in hardware.
    fn set_cfg_false(desired: &Self) -> Option<Self>;
}

/// Priority Groups: nothing needs to match (CEE DCBX specification Table 6);
/// SetCfg FALSE applies the local configuration, feature enabled (§3.1.4).
impl FeatureKind for PgConfig {
    const ID: FeatureId = FeatureId::Pg;
    fn compatible(_: &Self, _: &Self) -> bool {
        true
    }
    fn set_cfg_false(desired: &Self) -> Option<Self> {
        Some(*desired)
    }
}

/// PFC: compatible when both enable bitmaps are equal (the CEE DCBX
/// specification's §3.2.3 is empty; this is what deployed peers do); SetCfg
/// FALSE disables PFC (§3.2.4).
impl FeatureKind for PfcConfig {
    const ID: FeatureId = FeatureId::Pfc;
    fn compatible(local: &Self, peer: &Self) -> bool {
        local.priorities == peer.priorities
    }
    fn set_cfg_false(_: &Self) -> Option<Self> {
        None
    }
}

/// APP: compatible when both map the same applications to the same
/// priorities, in any order (lldpad compares the priority map per protocol).
/// SetCfg FALSE keeps classifying with the local table.
impl FeatureKind for AppConfig {
    const ID: FeatureId = FeatureId::App;
    fn compatible(local: &Self, peer: &Self) -> bool {
        fn key(e: &AppEntry) -> (u8, u16, u8) {
            (e.selector.0, e.protocol, e.priorities.0)
        }
        let mut a: Vec<_> = local.entries.iter().map(key).collect();
        let mut b: Vec<_> = peer.entries.iter().map(key).collect();
        a.sort_unstable();
        a.dedup();
        b.sort_unstable();
        b.dedup();
        a == b
    }
    fn set_cfg_false(desired: &Self) -> Option<Self> {
        Some(desired.clone())
    }
}

/// What the peer tells this feature machine.
#[derive(Debug, Clone, Copy)]
pub enum PeerView<'a, C> {
    /// DCBX is not running locally.
    Inactive,
    /// No peer DCBX; `reason` says which kind of absence.
    Absent(Reason),
    /// The peer's DCBX TLV (with a Control sub-TLV).
    Present {
        /// Control versions agree (else the feature waits).
        versions_agree: bool,
        /// The peer sent its Control sub-TLV twice: an error for all features.
        duplicate_control: bool,
        /// This feature's sub-TLV was duplicated.
        duplicate: bool,
        tlv: Option<&'a Result<FeatureTlv<C>, DecodeError>>,
    },
}

/// One feature's DCBX state (CEE DCBX specification Table 4 plus Error and
/// Oper_Version).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Feature<C> {
    pub oper_version: u8,
    pub error: bool,
    pub syncd: bool,
    /// FeatureSeqNo: the SeqNo whose acknowledgement makes Syncd true.
    pub feature_seq: u32,
    pub oper_mode: bool,
    /// OperCfg: derived from DesiredCfg or PeerCfg.
    pub oper_cfg: C,
    /// PeerCfg with the peer's flags, as last received.
    pub peer: Option<FeatureTlv<C>>,
    pub peer_willing: bool,
    pub reason: Reason,
    /// The sub-TLV content FeatureSeqNo was issued for (None: not advertised).
    #[serde(skip)]
    marked: Option<Option<FeatureTlv<C>>>,
}

impl<C: FeatureKind> Feature<C> {
    pub fn new(admin: &FeatureAdmin<C>, max_version: u8) -> Self {
        Feature {
            oper_version: max_version,
            error: false,
            syncd: !admin.advertise,
            feature_seq: 1,
            oper_mode: false,
            oper_cfg: admin.cfg.clone(),
            peer: None,
            peer_willing: false,
            reason: Reason::DcbxInactive,
            marked: None,
        }
    }

    /// Back to the link-up state: Control reset to SeqNo 0, so this feature's
    /// configuration is due with SeqNo 1.
    pub fn reset(&mut self, admin: &FeatureAdmin<C>, max_version: u8) {
        let reason = self.reason;
        *self = Feature::new(admin, max_version);
        self.reason = reason;
    }

    /// The sub-TLV this feature puts in our DCBX TLV now (None: not advertised).
    /// `flags` are the header's reserved bits 4..0 (see `FLAG_HEADROOM_MEASUREMENT`).
    pub fn content(
        &self,
        admin: &FeatureAdmin<C>,
        max_version: u8,
        flags: u8,
    ) -> Option<FeatureTlv<C>> {
        admin.advertise.then(|| FeatureTlv {
            header: FeatureHeader {
                oper_version: self.oper_version,
                max_version,
                enable: admin.enable,
                willing: admin.willing,
                error: self.error,
                reserved_flags: flags,
                subtype: 0,
            },
            cfg: admin.cfg.clone(),
        })
    }

    /// LocalParameterChange: when the content we advertise differs from the
    /// one FeatureSeqNo was issued for, it is due with the next SeqNo.
    /// Returns true when the feature became pending.
    pub fn mark_if_changed(
        &mut self,
        admin: &FeatureAdmin<C>,
        max_version: u8,
        flags: u8,
        seq: u32,
    ) -> bool {
        let live = self.content(admin, max_version, flags);
        if self.marked.as_ref() == Some(&live) {
            return false;
        }
        self.marked = Some(live);
        self.feature_seq = seq.wrapping_add(1).max(1);
        self.syncd = false;
        true
    }

    /// A SeqNo was issued: features that do not advertise have nothing to sync.
    pub fn on_seq_issued(&mut self, admin: &FeatureAdmin<C>, events: &mut VecDeque<Event>) {
        if !admin.advertise && !self.syncd {
            self.syncd = true;
            events.push_back(Event::Syncd { feature: C::ID });
        }
    }

    /// RcvdAckNo changed: Syncd once the peer acknowledged FeatureSeqNo.
    pub fn on_ack(&mut self, rcvd_ack: u32, events: &mut VecDeque<Event>) {
        if !self.syncd && rcvd_ack == self.feature_seq {
            self.syncd = true;
            events.push_back(Event::Syncd { feature: C::ID });
        }
    }

    /// What the hardware should run now: SetCfg(OperCfg, OperMode).
    pub fn applied(&self, admin: &FeatureAdmin<C>) -> Option<C> {
        if self.oper_mode {
            Some(self.oper_cfg.clone())
        } else if admin.enable {
            C::set_cfg_false(&admin.cfg)
        } else {
            None
        }
    }

    /// Runs the machine with the peer's current information.
    pub fn evaluate(
        &mut self,
        admin: &FeatureAdmin<C>,
        max_version: u8,
        peer: PeerView<'_, C>,
        events: &mut VecDeque<Event>,
    ) {
        let before = (
            self.oper_mode,
            self.oper_cfg.clone(),
            self.error,
            self.reason,
        );
        self.step(admin, max_version, peer);
        let (oper_mode, oper_cfg, error, reason) = before;
        if self.error && !error {
            events.push_back(Event::ErrorSet {
                feature: C::ID,
                reason: self.reason,
            });
        } else if !self.error && error {
            events.push_back(Event::ErrorCleared { feature: C::ID });
        }
        if self.reason != reason {
            match self.reason {
                Reason::Incompatible => events.push_back(Event::Incompatible { feature: C::ID }),
                Reason::PeerFeatureAbsent => {
                    events.push_back(Event::FeatureNotPresentOnPeer { feature: C::ID })
                }
                _ => {}
            }
        }
        if self.oper_mode != oper_mode || self.oper_cfg != oper_cfg {
            events.push_back(Event::OperChanged {
                feature: C::ID,
                oper_mode: self.oper_mode,
            });
        }
    }

    /// Local configuration in operation, OperMode as given.
    fn use_local(&mut self, admin: &FeatureAdmin<C>, oper_mode: bool, reason: Reason) {
        self.oper_cfg = admin.cfg.clone();
        self.oper_mode = oper_mode;
        self.error = reason.is_cee_error();
        self.reason = reason;
    }

    fn step(&mut self, admin: &FeatureAdmin<C>, max_version: u8, peer: PeerView<'_, C>) {
        // F4: not advertised -> local configuration, OperMode = Enable; received TLVs ignored.
        if !admin.advertise {
            self.peer = None;
            return self.use_local(admin, admin.enable, Reason::NotAdvertised);
        }
        let (versions_agree, duplicate_control, duplicate, tlv) = match peer {
            PeerView::Inactive => return self.use_local(admin, false, Reason::DcbxInactive),
            PeerView::Absent(reason) => {
                self.peer = None;
                self.oper_version = max_version;
                return self.use_local(admin, false, reason);
            }
            PeerView::Present {
                versions_agree,
                duplicate_control,
                duplicate,
                tlv,
            } => (versions_agree, duplicate_control, duplicate, tlv),
        };
        // F8: the peer's TLV lacks this feature (or it is malformed).
        let tlv = match tlv {
            None => {
                self.peer = None;
                return self.use_local(admin, false, Reason::PeerFeatureAbsent);
            }
            Some(Err(_)) => {
                self.peer = None;
                return self.use_local(admin, false, Reason::PeerFeatureInvalid);
            }
            Some(Ok(tlv)) => tlv,
        };
        self.peer = Some(tlv.clone());
        if !versions_agree {
            self.reason = Reason::VersionMismatch;
            return;
        }
        // Syncd false: our DesiredCfg is not acknowledged yet; wait (keep OperCfg).
        if !self.syncd {
            self.reason = Reason::WaitingForAck;
            return;
        }
        // F9: duplicate TLVs are a configuration error for the feature.
        if duplicate || duplicate_control {
            return self.use_local(admin, false, Reason::DuplicateTlv);
        }
        // Feature version: run the highest both support; wait for the peer to follow.
        let agreed = tlv.header.max_version.min(max_version);
        if self.oper_version != agreed {
            self.oper_version = agreed;
            self.reason = Reason::VersionMismatch;
            return;
        }
        if self.oper_version != tlv.header.oper_version {
            self.reason = Reason::VersionMismatch;
            return;
        }
        self.peer_willing = tlv.header.willing;
        // F15: disabled on either side.
        if !admin.enable {
            return self.use_local(admin, false, Reason::LocalDisabled);
        }
        if !tlv.header.enable {
            return self.use_local(admin, false, Reason::PeerDisabled);
        }
        let peer_ok = !tlv.header.error;
        // F17: we are willing and the peer is not: take its configuration.
        if admin.willing && !tlv.header.willing {
            if peer_ok {
                self.oper_cfg = tlv.cfg.clone();
                self.oper_mode = true;
                self.error = false;
                self.reason = Reason::AdoptedPeer;
                return;
            }
            return self.use_local(admin, false, Reason::PeerError);
        }
        // F19: we are not willing and the peer is: keep ours.
        if !admin.willing && tlv.header.willing {
            let reason = if peer_ok {
                Reason::PeerWilling
            } else {
                Reason::PeerError
            };
            return self.use_local(admin, peer_ok, reason);
        }
        // F21: same Willing: our configuration, if compatible.
        if C::compatible(&admin.cfg, &tlv.cfg) {
            let reason = if peer_ok {
                Reason::Compatible
            } else {
                Reason::PeerError
            };
            return self.use_local(admin, peer_ok, reason);
        }
        // CfgNotCompatible: Error explicitly set.
        self.use_local(admin, false, Reason::Incompatible)
    }
}
