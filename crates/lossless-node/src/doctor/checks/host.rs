//! The checks of the RoCE host settings beyond DCB: RDMA CM's ToS and RoCE mode, ECN,
//! the CNPs' class, link pause, the firmware's LLDP agent.

use super::*;

impl Ctx<'_> {
    /// The RDMA device's words (`mlx5_0 port 1`), or why there is none.
    fn rdma(&self) -> Result<(String, u32), Verdict> {
        match &self.f.host.rdma {
            Some(r) => Ok((r.device.clone(), r.port)),
            None => Err(unknown(
                format!(
                    "{} has no RDMA device ({} has no entry): no RoCE on this port",
                    self.port(),
                    self.path(&format!("class/net/{}/device/infiniband", self.port()))
                ),
                "load the RDMA driver (mlx5_ib, irdma, bnxt_re, hns_roce)",
            )),
        }
    }

    pub(super) fn tos(&self) -> Verdict {
        let Some(c) = &self.class else {
            return unknown(self.no_class.clone(), "see roce_class");
        };
        let Some(dscp) = c.dscp else {
            return unknown(
                format!(
                    "no DSCP maps to RoCE's priority {}: no ToS to compare",
                    c.priority
                ),
                "see app",
            );
        };
        let (dev, n) = match self.rdma() {
            Ok(r) => r,
            Err(v) => return v,
        };
        let want = (dscp << 2) | 2;
        let cm = self.path(&format!("kernel/config/rdma_cm/{dev}"));
        let mut parts = Parts::default();
        match &self.f.host.tos {
            Reading::Value(t) if t >> 2 == dscp => {
                parts.ok(format!("RDMA CM's default ToS on {dev} port {n} is {}", tos_text(*t)))
            }
            Reading::Value(t) => parts.problem(
                format!(
                    "RDMA CM's default ToS on {dev} port {n} is {}, not DSCP {dscp}: RDMA CM's \
                     connections leave lossy",
                    tos_text(*t)
                ),
                match self.d {
                    Some(_) => self.roce_set(&format!("tos={want}")),
                    None => format!(
                        "mkdir -p {cm} && echo {want} > {cm}/ports/{n}/default_roce_tos"
                    ),
                },
            ),
            r => parts.unknown(
                format!("RDMA CM's default ToS {}", reading_why(r)),
                format!("mount configfs (mount -t configfs none {}) and load rdma_cm (modprobe rdma_cm)", self.path("kernel/config")),
            ),
        }
        match &self.f.host.traffic_class {
            Reading::Value(t) if t >> 2 == dscp => {
                parts.ok(format!("the verbs traffic class is {}", tos_text(*t)))
            }
            Reading::Value(t) => parts.problem(
                format!(
                    "the verbs traffic class (mlx5_ib's tc/{n}/traffic_class) is {}, not DSCP \
                     {dscp}",
                    tos_text(*t)
                ),
                match self.d {
                    Some(_) => self.roce_set(&format!("traffic_class={want}")),
                    None => format!(
                        "echo {want} > {}",
                        self.path(&format!("class/infiniband/{dev}/tc/{n}/traffic_class"))
                    ),
                },
            ),
            // The inbox driver has none: verbs applications set their own.
            Reading::NotExposed(_) => {}
            Reading::Failed(e) => parts.unknown(
                format!("the verbs traffic class could not be read: {e}"),
                "run as root",
            ),
        }
        parts.verdict()
    }

    pub(super) fn roce_mode(&self) -> Verdict {
        let (dev, n) = match self.rdma() {
            Ok(r) => r,
            Err(v) => return v,
        };
        let cm = self.path(&format!("kernel/config/rdma_cm/{dev}"));
        match &self.f.host.roce_mode {
            Reading::Value(RoceMode::V2) => ok(format!(
                "RDMA CM's default RoCE mode on {dev} port {n} is RoCE v2"
            )),
            Reading::Value(m) => problem(
                format!(
                    "RDMA CM's default RoCE mode on {dev} port {n} is {}: not routable, not \
                     classified by DSCP",
                    m.kernel_name()
                ),
                match self.d {
                    Some(_) => self.roce_set("roce_mode=v2"),
                    None => format!(
                        "mkdir -p {cm} && echo 'RoCE v2' > {cm}/ports/{n}/default_roce_mode"
                    ),
                },
            ),
            r => unknown(
                format!("RDMA CM's default RoCE mode {}", reading_why(r)),
                format!(
                    "mount configfs (mount -t configfs none {}) and load rdma_cm (modprobe \
                     rdma_cm)",
                    self.path("kernel/config")
                ),
            ),
        }
    }

    pub(super) fn ecn(&self) -> Verdict {
        let Some(c) = &self.class else {
            return unknown(self.no_class.clone(), "see roce_class");
        };
        if let Err(v) = self.rdma() {
            return v;
        }
        let p = c.priority;
        let port = self.port();
        let mut parts = Parts::default();
        for (point, words, r) in [
            (
                "roce_rp",
                "reaction point (rate limiting)",
                &self.f.host.ecn_rp,
            ),
            ("roce_np", "notification point (CNPs)", &self.f.host.ecn_np),
        ] {
            let key = if point == "roce_rp" {
                "ecn_rp"
            } else {
                "ecn_np"
            };
            match r {
                Reading::Value(m) if m.contains(p) => {
                    parts.ok(format!("ECN {words} on {}", priorities(*m)))
                }
                Reading::Value(m) => parts.problem(
                    format!("ECN {words} on {}: not on {p}", priorities(*m)),
                    match self.d {
                        Some(_) => self.roce_set(&format!("{key}={p}")),
                        None => format!(
                            "echo 1 > {}",
                            self.path(&format!("class/net/{port}/ecn/{point}/enable/{p}"))
                        ),
                    },
                ),
                Reading::NotExposed(w) => parts.unknown(
                    format!("ECN {words} per priority is not exposed: {w}"),
                    "with the inbox mlx5 driver DCQCN follows the firmware (mlxconfig's \
                     ROCE_CC_PRIO_MASK_P1); NVIDIA's driver package exposes it per priority",
                ),
                Reading::Failed(e) => {
                    parts.unknown(format!("ECN {words} could not be read: {e}"), "run as root")
                }
            }
        }
        parts.verdict()
    }

    pub(super) fn cnp(&self) -> Verdict {
        let port = self.port();
        let (dscp, prio) = match (&self.f.host.cnp_dscp, &self.f.host.cnp_priority) {
            (Reading::Value(d), Reading::Value(p)) => (*d, *p),
            (d, p) => {
                let r = if d.value().is_none() {
                    reading_why(d)
                } else {
                    reading_why(p)
                };
                return unknown(
                    format!("the CNPs' marking {r}"),
                    "NVIDIA's driver package (ecn/roce_np/cnp_dscp, cnp_802p_prio) or inbox \
                     mlx5's debugfs cc_params expose it; other drivers do not",
                );
            }
        };
        let mut parts = Parts::default();
        parts.ok(format!("CNPs leave with DSCP {dscp} on priority {prio}"));
        match self.ours_pfc() {
            Some((m, _)) if m.contains(prio) => {
                // A priority without PFC: 6 as `lossless profile roce` has it, else the
                // highest free one.
                let free = [6u8, 7, 5, 4, 2, 1, 0, 3]
                    .into_iter()
                    .find(|p| !m.contains(*p))
                    .unwrap_or(6);
                parts.problem(
                    format!(
                        "priority {prio} has PFC (PFC on {}): a CNP waits behind the data PFC \
                         paused",
                        priorities(m)
                    ),
                    match self.d {
                        Some(_) => self.roce_set(&format!("cnp_priority={free}")),
                        None => format!(
                            "echo {free} > {}",
                            self.path(&format!("class/net/{port}/ecn/roce_np/cnp_802p_prio"))
                        ),
                    },
                )
            }
            Some(_) => parts.ok(format!("no PFC on {prio}")),
            None => parts.unknown(
                format!("whether priority {prio} has PFC is not known"),
                "see pfc",
            ),
        }
        match self.classes() {
            Some((cl, whence)) => {
                let (strict, words) = cl.strict(prio);
                if strict {
                    parts.ok(format!("{words} ({whence})"));
                } else {
                    parts.problem(
                        format!("{words} ({whence}): not a strict class"),
                        self.ets_fix(prio),
                    );
                }
            }
            None => parts.unknown(
                format!("priority {prio}'s class is not known: the NIC reports no ETS"),
                "see nic",
            ),
        }
        // The DSCP the CNPs carry, as the APP entries map it (a receiving NIC and the
        // switch classify it so).
        let entries = match self.d {
            Some(d) => Some(class::rule_entries(&d.dcbx.app_rules)),
            None => match &self.f.nic {
                Reading::Value(n) => Some(n.state.apps.clone()),
                _ => None,
            },
        };
        if let Some(entries) = entries {
            let to: Vec<AppPriority> = entries
                .iter()
                .filter(|e| e.selector == Selector::DSCP && e.protocol == u16::from(dscp))
                .copied()
                .collect();
            let pfc = self.ours_pfc().map(|(m, _)| m);
            for e in &to {
                if e.priority != prio {
                    parts.problem(
                        format!(
                            "the APP entries send the CNPs' DSCP elsewhere: {}",
                            app_text(e)
                        ),
                        match self.d {
                            Some(_) => {
                                format!("lossless dcbx set {port} app add dscp {dscp} {prio}")
                            }
                            None => format!("dcb app add dev {port} dscp-prio {dscp}:{prio}"),
                        },
                    );
                } else if pfc.is_some_and(|m| m.contains(e.priority)) {
                    // Named above.
                } else {
                    parts.ok(app_text(e));
                }
            }
        }
        parts.verdict()
    }

    /// The ETS of `lossless profile roce`: RoCE's priority alone in class 1 (ETS 50 %),
    /// the CNPs' `cnp` in class 2 (strict), the others in class 0 (ETS 50 %).
    fn ets_fix(&self, cnp: u8) -> String {
        let port = self.port();
        let roce = self.class.as_ref().map_or(3, |c| c.priority).min(7);
        if roce == cnp {
            return "give the CNPs a priority of their own (see the first part), in a strict \
                    class"
                .to_string();
        }
        let tc = |p: u8| match p {
            p if p == roce => 1,
            p if p == cnp => 2,
            _ => 0,
        };
        if self.d.is_some() {
            let others: Vec<String> = (0..8u8)
                .filter(|p| tc(*p) == 0)
                .map(|p| p.to_string())
                .collect();
            format!(
                "lossless dcbx set {port} ets --tc 0:{}:50 --tc 1:{roce}:50 --tc 2:{cnp}:strict",
                others.join(",")
            )
        } else {
            let prio_tc: Vec<String> = (0..8u8).map(|p| format!("{p}:{}", tc(p))).collect();
            let tsa: Vec<String> = (0..8u8)
                .map(|t| format!("{t}:{}", if t < 2 { "ets" } else { "strict" }))
                .collect();
            let bw: Vec<String> = (0..8u8)
                .map(|t| format!("{t}:{}", if t < 2 { 50 } else { 0 }))
                .collect();
            format!(
                "dcb ets set dev {port} prio-tc {} tc-tsa {} tc-bw {}",
                prio_tc.join(" "),
                tsa.join(" "),
                bw.join(" ")
            )
        }
    }

    pub(super) fn global_pause(&self) -> Verdict {
        let port = self.port();
        match &self.f.host.pause {
            Reading::Value(p) if !p.rx && !p.tx => ok("802.3x link pause off both ways"),
            Reading::Value(p) => {
                let on: Vec<&str> = [("rx", p.rx), ("tx", p.tx)]
                    .iter()
                    .filter(|(_, on)| *on)
                    .map(|(w, _)| *w)
                    .collect();
                problem(
                    format!(
                        "802.3x link pause is on ({}): a pause stops every priority, the \
                         lossy ones too, and defeats PFC",
                        on.join(", ")
                    ),
                    match self.d {
                        Some(_) => self.roce_set("global_pause=off"),
                        None => format!("ethtool -A {port} rx off tx off"),
                    },
                )
            }
            r => unknown(
                format!("802.3x link pause {}", reading_why(r)),
                format!("ethtool -a {port}"),
            ),
        }
    }

    pub(super) fn fw_agent(&self) -> Verdict {
        let port = self.port();
        let mut parts = Parts::default();
        match &self.f.host.fw_agent {
            Reading::Value(None) => parts.ok(format!(
                "the driver ({}) has no firmware LLDP agent flag",
                self.f.host.driver.as_deref().unwrap_or("?")
            )),
            Reading::Value(Some(a)) if !a.on => parts.ok(format!(
                "the firmware LLDP agent is off (private flag {})",
                a.flag
            )),
            Reading::Value(Some(a)) => {
                let flag_fix = if a.flag == "disable-fw-lldp" {
                    format!("ethtool --set-priv-flags {port} disable-fw-lldp on")
                } else {
                    format!("ethtool --set-priv-flags {port} {} off", a.flag)
                };
                parts.problem(
                    format!(
                        "the NIC firmware's LLDP agent is on (private flag {}): it takes the \
                         LLDP frames, so the host's DCBX (losslessd, lldpad) never reaches the \
                         switch",
                        a.flag
                    ),
                    match self.d {
                        Some(_) => {
                            format!("{} (or {flag_fix})", self.roce_set("fw_lldp_agent=off"))
                        }
                        None => flag_fix,
                    },
                );
            }
            r => parts.unknown(
                format!("the firmware LLDP agent's flag {}", reading_why(r)),
                format!("ethtool --show-priv-flags {port}"),
            ),
        }
        match &self.f.nic {
            Reading::Value(n) => match n.state.dcbx {
                Some(m) if m & DCBX_LLD_MANAGED != 0 => parts.problem(
                    format!(
                        "the NIC's firmware runs DCBX (dcbnl DCBX mode {m:#04x}, LLD_MANAGED): \
                         what it negotiates competes with the host's DCBX"
                    ),
                    format!("dcb dcbx set dev {port} host ieee"),
                ),
                Some(m) => parts.ok(format!("the host runs DCBX (dcbnl DCBX mode {m:#04x})")),
                None => {}
            },
            // Without dcbnl there is no firmware DCBX mode to set.
            Reading::NotExposed(_) => {}
            // mlx5's firmware DCBX has no agent flag: only dcbnl says whether it runs.
            r @ Reading::Failed(_) => parts.unknown(
                format!(
                    "whether the NIC's firmware runs DCBX (dcbnl DCBX mode) {}",
                    reading_why(r)
                ),
                self.nic_fix(),
            ),
        }
        parts.verdict()
    }
}
