//! What a manager sees of a port: the agent's status snapshot.

use crate::cee::feature::{Feature, FeatureKind};
use crate::config::FeatureAdmin;
use crate::reason::Reason;
use crate::status::{
    FeatureStatus, HeadroomCapability, IeeeFeatureStatus, IeeeStatus, ModeStatus, PortStatus,
};

use super::Agent;

impl Agent {
    /// Everything a manager shows about this port.
    pub fn status(&self) -> PortStatus {
        let d = &self.cfg.dcbx;
        PortStatus {
            link_up: self.link_up,
            admin_status: self.cfg.admin_status,
            dcbx_enabled: d.enabled,
            dcbx_active: self.dcbx_active(),
            mode: ModeStatus {
                configured: self.mode.configured(),
                running: self.mode.running(),
                reason: self.mode.reason(),
                reason_text: self.mode.reason().describe(),
            },
            peer_present: self.peer_dcbx,
            all_syncd: self.peer_dcbx && self.all_syncd(),
            any_error: self.any_error(),
            control: self.cee.control,
            pg: self.cee_status(feature_status(&self.cee.pg, &d.pg)),
            pfc: self.cee_status(feature_status(&self.cee.pfc, &d.pfc)),
            app: self.cee_status(feature_status(&self.cee.app, &d.app)),
            ieee: self.ieee_status(),
            discarded_msaps: self.mib.discarded(),
            neighbors: self
                .mib
                .neighbors()
                .iter()
                .map(|n| n.summary(self.now, self.cfg.neighbor_hold()))
                .collect(),
            lldp: self.lldp_stats,
            dcbx: self.dcbx_stats,
            headroom_measurement: HeadroomCapability {
                local: d.headroom_measurement,
                peer: self.peer_headroom_measurement(),
            },
        }
    }

    /// A CEE feature's status; on a port running IEEE 802.1Qaz (DCBX on, not static)
    /// it says so, not that DCBX is not running.
    fn cee_status<T>(&self, mut s: FeatureStatus<T>) -> FeatureStatus<T> {
        if self.dcbx_active()
            && !self.static_mode()
            && self.mode.running() == crate::mode::Version::Ieee
            && s.reason == Reason::DcbxInactive
        {
            s.reason = Reason::IeeeRunning;
            s.reason_text = Reason::IeeeRunning.describe().into();
        }
        s
    }

    fn ieee_status(&self) -> IeeeStatus {
        let d = &self.cfg.dcbx;
        let m = &self.ieee;
        let p = &m.peer;
        IeeeStatus {
            ets: IeeeFeatureStatus {
                enable: d.ieee.ets.enable,
                willing: d.ieee.ets.willing,
                advertise: d.ieee.ets.advertise,
                admin: d.ieee.ets.cfg.table,
                peer: p.ets_config.map(|c| c.table),
                peer_willing: p.ets_config.map(|c| c.willing),
                oper: m.ets.oper,
                oper_mode: m.ets.oper_mode,
                agreed: m.ets.agreed,
                error: m.ets.error,
                reason: m.ets.reason,
                reason_text: m.ets.reason.describe().into(),
            },
            pfc: IeeeFeatureStatus {
                enable: d.pfc.enable,
                willing: d.pfc.willing,
                advertise: d.pfc.advertise,
                admin: d.pfc.cfg.priorities,
                peer: p.pfc.map(|c| c.enabled),
                peer_willing: p.pfc.map(|c| c.willing),
                oper: m.pfc.oper,
                oper_mode: m.pfc.oper_mode,
                agreed: m.pfc.agreed,
                error: m.pfc.error,
                reason: m.pfc.reason,
                reason_text: m.pfc.reason.describe().into(),
            },
            app: IeeeFeatureStatus {
                enable: d.app.enable,
                willing: d.app.willing,
                advertise: d.app.advertise,
                admin: d.ieee.app.clone(),
                peer: p.app.clone(),
                peer_willing: None,
                oper: m.app.oper.clone(),
                oper_mode: m.app.oper_mode,
                agreed: m.app.agreed,
                error: m.app.error,
                reason: m.app.reason,
                reason_text: m.app.reason.describe().into(),
            },
            ets_recommend: d.ieee.ets.cfg.recommends(d.ieee.ets.willing),
            peer_tlvs: p.clone(),
        }
    }
}

fn feature_status<C: FeatureKind>(f: &Feature<C>, admin: &FeatureAdmin<C>) -> FeatureStatus<C> {
    FeatureStatus {
        enable: admin.enable,
        willing: admin.willing,
        advertise: admin.advertise,
        desired: admin.cfg.clone(),
        peer: f.peer.as_ref().map(|p| p.cfg.clone()),
        peer_enable: f.peer.as_ref().map(|p| p.header.enable),
        peer_willing: f.peer.as_ref().map(|p| p.header.willing),
        peer_error: f.peer.as_ref().map(|p| p.header.error),
        oper: f.oper_cfg.clone(),
        oper_mode: f.oper_mode,
        syncd: f.syncd,
        error: f.error,
        feature_seq: f.feature_seq,
        oper_version: f.oper_version,
        applied: f.applied(admin),
        reason: f.reason,
        reason_text: f.reason.describe().into(),
    }
}
