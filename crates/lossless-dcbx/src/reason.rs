//! Why a feature is in the state it is in: the label of the branch its machine took
//! last, for CEE DCBX and IEEE 802.1Qaz alike. Shown in `dcbx show` and the lab's
//! tables, counted in metrics.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// DCBX is not running on the port (disabled, LLDP rx or tx off, link down).
    DcbxInactive,
    /// Advertise is off: local configuration, peer's ignored.
    NotAdvertised,
    /// No DCBX peer has been heard since link up.
    NoPeer,
    /// The neighbour sends LLDP without a DCBX TLV of the version this port runs.
    PeerNoDcbx,
    /// The neighbour sends the older CIN DCBX TLV, which is not negotiated.
    PeerCin,
    /// The neighbour sends only CEE DCBX TLVs and this port runs IEEE 802.1Qaz only
    /// (`mode = "ieee"`).
    PeerCeeOnly,
    /// The neighbour sends only IEEE 802.1Qaz TLVs and this port runs CEE only
    /// (`mode = "cee"`).
    PeerIeeeOnly,
    /// The peer's DCBX went away: TTL expiry, shutdown or withdrawal.
    PeerLost,
    /// More than one LLDP neighbour: the peer's DCBX TLVs are treated as absent.
    MultiplePeers,
    /// The peer's DCBX TLV lacks this feature's sub-TLV (CEE) or TLV (IEEE).
    PeerFeatureAbsent,
    /// The peer's sub-TLV or TLV for this feature is malformed; treated as absent.
    PeerFeatureInvalid,
    /// The peer sent this feature's sub-TLV, or its Control sub-TLV, twice.
    DuplicateTlv,
    /// Our DesiredCfg has not been acknowledged yet (Syncd false).
    WaitingForAck,
    /// The feature versions have not converged yet.
    VersionMismatch,
    /// Enable is off locally.
    LocalDisabled,
    /// The peer has the feature disabled.
    PeerDisabled,
    /// The peer reports an error for the feature.
    PeerError,
    /// Willing, peer not: running the peer's configuration.
    AdoptedPeer,
    /// Not willing, peer willing: running our own configuration.
    PeerWilling,
    /// Equal Willing and compatible configurations.
    Compatible,
    /// Equal Willing and incompatible configurations: mismatch.
    Incompatible,
    /// IEEE ETS, willing: running the peer's ETS Recommendation.
    AdoptedRecommendation,
    /// IEEE ETS, willing, but the peer sends no ETS Recommendation: our configuration.
    NoRecommendation,
    /// IEEE ETS or PFC, not willing: our configuration (the peer's may differ; for
    /// ETS that is allowed, IEEE 802.1Q-2018 D.3.2).
    NotWilling,
    /// IEEE PFC, both willing, our MAC lower: running the peer's PFC (the symmetric
    /// rule of IEEE 802.1Q-2018 D.3.3; the higher MAC's configuration runs on both).
    TieBreakAdopted,
    /// IEEE PFC, both willing, our MAC higher: our PFC, which the peer adopts.
    TieBreakKept,
    /// IEEE PFC: neither side takes the other's configuration and the two differ:
    /// the link runs two PFC configurations (mismatch).
    PeerDiffers,
    /// IEEE APP, willing: our entries, then the peer's.
    Merged,
    /// `mode = "static"`: the configuration runs, nothing is negotiated.
    Static,
    /// The port runs IEEE 802.1Qaz: the CEE DCBX features are not in use (their
    /// state is in the port's `ieee` view).
    IeeeRunning,
}

impl Reason {
    pub fn describe(self) -> &'static str {
        match self {
            Reason::DcbxInactive => "DCBX is not running on this port",
            Reason::NotAdvertised => "not advertised: local configuration, peer ignored",
            Reason::NoPeer => "no DCBX peer heard since link up",
            Reason::PeerNoDcbx => "the LLDP neighbour sends no DCBX TLV",
            Reason::PeerCin => "the neighbour speaks CIN DCBX (subtype 1), not negotiated",
            Reason::PeerCeeOnly => {
                "the neighbour speaks CEE DCBX only and this port runs IEEE only"
            }
            Reason::PeerIeeeOnly => {
                "the neighbour speaks IEEE DCBX only and this port runs CEE only"
            }
            Reason::PeerLost => "the peer's DCBX went away (TTL expiry, shutdown or withdrawal)",
            Reason::MultiplePeers => "more than one LLDP neighbour: peer DCBX treated as absent",
            Reason::PeerFeatureAbsent => "the peer does not advertise this feature",
            Reason::PeerFeatureInvalid => "the peer's TLV for this feature is malformed",
            Reason::DuplicateTlv => "the peer sent duplicate sub-TLVs",
            Reason::WaitingForAck => "waiting for the peer to acknowledge our configuration",
            Reason::VersionMismatch => "waiting for the feature versions to agree",
            Reason::LocalDisabled => "disabled locally",
            Reason::PeerDisabled => "disabled on the peer",
            Reason::PeerError => "the peer reports an error for this feature",
            Reason::AdoptedPeer => "willing: running the peer's configuration",
            Reason::PeerWilling => "peer is willing: running our configuration",
            Reason::Compatible => "configurations compatible",
            Reason::Incompatible => "configurations incompatible (mismatch)",
            Reason::AdoptedRecommendation => "willing: running the peer's ETS recommendation",
            Reason::NoRecommendation => {
                "willing, but the peer recommends nothing: running our configuration"
            }
            Reason::NotWilling => "not willing: running our configuration",
            Reason::TieBreakAdopted => {
                "both willing, our MAC is lower: running the peer's configuration"
            }
            Reason::TieBreakKept => {
                "both willing, our MAC is higher: running ours (the peer takes it)"
            }
            Reason::PeerDiffers => {
                "neither side takes the other's configuration and they differ (mismatch)"
            }
            Reason::Merged => "running our entries plus the peer's",
            Reason::Static => "static mode: running the configuration, not negotiated",
            Reason::IeeeRunning => {
                "the port runs IEEE 802.1Qaz: CEE DCBX is not in use (see the ieee features)"
            }
        }
    }

    /// CEE: the branches that set the feature's Error flag (CEE DCBX 2.4.3).
    pub fn is_cee_error(self) -> bool {
        matches!(
            self,
            Reason::PeerLost
                | Reason::MultiplePeers
                | Reason::PeerFeatureAbsent
                | Reason::PeerFeatureInvalid
                | Reason::DuplicateTlv
                | Reason::Incompatible
        )
    }

    /// IEEE 802.1Qaz has no Error flag on the wire; these are the states reported as
    /// an error because the link does not run what both ends want: a malformed or
    /// duplicated TLV, more than one neighbour, two different PFC configurations.
    /// A peer that does not send a TLV (ETS Recommendation and APP are optional) is
    /// not an error.
    pub fn is_ieee_error(self) -> bool {
        matches!(
            self,
            Reason::MultiplePeers
                | Reason::PeerFeatureInvalid
                | Reason::DuplicateTlv
                | Reason::PeerDiffers
        )
    }
}
