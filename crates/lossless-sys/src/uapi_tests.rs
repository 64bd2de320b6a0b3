//! Every kernel constant, size and offset this crate writes by hand, checked
//! against the Linux uapi headers: a C program including them prints each
//! value (compiled with gcc; Debian packages gcc and linux-libc-dev).

use std::process::Command;

use crate::dcbnl::{self as d, DcbCmd};
use crate::{ethtool_nl as e, link as l, netlink as n, packet as p};

fn checks() -> Vec<(&'static str, i64)> {
    let mut v: Vec<(&'static str, i64)> = vec![
        // netlink.h
        ("NLMSG_HDRLEN", n::NLMSG_HDRLEN as i64),
        ("sizeof(struct nlmsghdr)", n::NLMSG_HDRLEN as i64),
        ("NLA_HDRLEN", n::NLA_HDRLEN as i64),
        ("NLMSG_NOOP", n::NLMSG_NOOP.into()),
        ("NLMSG_ERROR", n::NLMSG_ERROR.into()),
        ("NLMSG_DONE", n::NLMSG_DONE.into()),
        ("NLM_F_REQUEST", n::NLM_F_REQUEST.into()),
        ("NLM_F_DUMP", n::NLM_F_DUMP.into()),
        ("NLM_F_DUMP_INTR", n::NLM_F_DUMP_INTR.into()),
        ("(unsigned short)NLA_TYPE_MASK", n::NLA_TYPE_MASK.into()),
        // rtnetlink.h, if_link.h, if.h, if_arp.h
        ("RTM_NEWLINK", l::RTM_NEWLINK.into()),
        ("RTM_DELLINK", l::RTM_DELLINK.into()),
        ("RTM_GETLINK", l::RTM_GETLINK.into()),
        ("RTMGRP_LINK", l::RTMGRP_LINK.into()),
        ("sizeof(struct ifinfomsg)", l::IFINFOMSG_LEN as i64),
        ("offsetof(struct ifinfomsg, ifi_family)", 0),
        ("offsetof(struct ifinfomsg, ifi_type)", 2),
        ("offsetof(struct ifinfomsg, ifi_index)", 4),
        ("offsetof(struct ifinfomsg, ifi_flags)", 8),
        ("AF_UNSPEC", l::AF_UNSPEC.into()),
        ("IFLA_ADDRESS", l::IFLA_ADDRESS.into()),
        ("IFLA_IFNAME", l::IFLA_IFNAME.into()),
        ("IFLA_MTU", l::IFLA_MTU.into()),
        ("IFLA_OPERSTATE", l::IFLA_OPERSTATE.into()),
        ("IF_OPER_UP", l::IF_OPER_UP.into()),
        ("IFF_UP", l::IFF_UP.into()),
        ("IFF_RUNNING", l::IFF_RUNNING.into()),
        ("ARPHRD_ETHER", l::ARPHRD_ETHER.into()),
        ("IFNAMSIZ", d::IFNAMSIZ as i64),
        // if_ether.h, if_packet.h, filter.h, pkt_sched.h
        ("ETH_P_ALL", p::ETH_P_ALL.into()),
        ("ETH_P_8021Q", p::ETH_P_8021Q.into()),
        ("ETH_P_LLDP", p::ETH_P_LLDP.into()),
        ("ETH_P_PAUSE", p::ETH_P_MAC_CONTROL.into()),
        ("ETH_HLEN", p::ETH_HLEN as i64),
        ("PACKET_IGNORE_OUTGOING", p::PACKET_IGNORE_OUTGOING.into()),
        ("PACKET_OUTGOING", p::PACKET_OUTGOING.into()),
        ("BPF_LD | BPF_H | BPF_ABS", crate::cbpf::BPF_LD_H_ABS.into()),
        ("BPF_JMP | BPF_JEQ | BPF_K", crate::cbpf::BPF_JEQ_K.into()),
        ("BPF_RET | BPF_K", crate::cbpf::BPF_RET_K.into()),
        ("TC_PRIO_CONTROL", p::SOCKET_PRIORITY.into()),
        ("sizeof(struct sock_filter)", 8),
        // dcbnl.h
        ("RTM_GETDCB", d::RTM_GETDCB.into()),
        ("RTM_SETDCB", d::RTM_SETDCB.into()),
        ("sizeof(struct dcbmsg)", d::DCBMSG_LEN as i64),
        ("offsetof(struct dcbmsg, cmd)", 1),
        ("DCB_ATTR_IFNAME", d::DCB_ATTR_IFNAME.into()),
        ("DCB_ATTR_STATE", d::DCB_ATTR_STATE.into()),
        ("DCB_ATTR_PFC_STATE", d::DCB_ATTR_PFC_STATE.into()),
        ("DCB_ATTR_PFC_CFG", d::DCB_ATTR_PFC_CFG.into()),
        ("DCB_ATTR_PG_CFG", d::DCB_ATTR_PG_CFG.into()),
        ("DCB_ATTR_SET_ALL", d::DCB_ATTR_SET_ALL.into()),
        ("DCB_PFC_UP_ATTR_0", d::DCB_PFC_UP_ATTR_0.into()),
        ("DCB_PFC_UP_ATTR_7", (d::DCB_PFC_UP_ATTR_0 + 7).into()),
        ("DCB_PFC_UP_ATTR_ALL", d::DCB_PFC_UP_ATTR_ALL.into()),
        ("DCB_PG_ATTR_TC_0", d::DCB_PG_ATTR_TC_0.into()),
        ("DCB_PG_ATTR_TC_7", (d::DCB_PG_ATTR_TC_0 + 7).into()),
        ("DCB_PG_ATTR_TC_ALL", d::DCB_PG_ATTR_TC_ALL.into()),
        ("DCB_PG_ATTR_BW_ID_0", d::DCB_PG_ATTR_BW_ID_0.into()),
        ("DCB_PG_ATTR_BW_ID_7", (d::DCB_PG_ATTR_BW_ID_0 + 7).into()),
        ("DCB_PG_ATTR_BW_ID_ALL", d::DCB_PG_ATTR_BW_ID_ALL.into()),
        ("DCB_TC_ATTR_PARAM_PGID", d::DCB_TC_ATTR_PARAM_PGID.into()),
        (
            "DCB_TC_ATTR_PARAM_UP_MAPPING",
            d::DCB_TC_ATTR_PARAM_UP_MAPPING.into(),
        ),
        (
            "DCB_TC_ATTR_PARAM_STRICT_PRIO",
            d::DCB_TC_ATTR_PARAM_STRICT_PRIO.into(),
        ),
        (
            "DCB_TC_ATTR_PARAM_BW_PCT",
            d::DCB_TC_ATTR_PARAM_BW_PCT.into(),
        ),
        ("DCB_TC_ATTR_PARAM_ALL", d::DCB_TC_ATTR_PARAM_ALL.into()),
        ("DCB_ATTR_IEEE", d::DCB_ATTR_IEEE.into()),
        ("DCB_ATTR_IEEE_PFC", d::DCB_ATTR_IEEE_PFC.into()),
        ("DCB_ATTR_DCB_BUFFER", d::DCB_ATTR_DCB_BUFFER.into()),
        ("sizeof(struct ieee_pfc)", d::IEEE_PFC_LEN as i64),
        ("offsetof(struct ieee_pfc, pfc_cap)", 0),
        ("offsetof(struct ieee_pfc, pfc_en)", 1),
        ("offsetof(struct ieee_pfc, mbc)", 2),
        ("offsetof(struct ieee_pfc, delay)", d::IEEE_PFC_DELAY as i64),
        (
            "offsetof(struct ieee_pfc, requests)",
            d::IEEE_PFC_REQUESTS as i64,
        ),
        (
            "offsetof(struct ieee_pfc, indications)",
            d::IEEE_PFC_INDICATIONS as i64,
        ),
        ("IEEE_8021QAZ_MAX_TCS", 8),
        ("sizeof(struct dcbnl_buffer)", d::DCB_BUFFER_LEN as i64),
        ("offsetof(struct dcbnl_buffer, prio2buffer)", 0),
        (
            "offsetof(struct dcbnl_buffer, buffer_size)",
            d::DCB_BUFFER_SIZES as i64,
        ),
        (
            "offsetof(struct dcbnl_buffer, total_size)",
            d::DCB_BUFFER_TOTAL as i64,
        ),
        ("IEEE_8021Q_MAX_PRIORITIES", 8),
        ("DCB_ATTR_DCBX", d::DCB_ATTR_DCBX.into()),
        ("DCB_ATTR_IEEE_ETS", d::DCB_ATTR_IEEE_ETS.into()),
        ("DCB_ATTR_IEEE_APP_TABLE", d::DCB_ATTR_IEEE_APP_TABLE.into()),
        ("DCB_ATTR_IEEE_PEER_ETS", d::DCB_ATTR_IEEE_PEER_ETS.into()),
        ("DCB_ATTR_IEEE_PEER_PFC", d::DCB_ATTR_IEEE_PEER_PFC.into()),
        ("DCB_ATTR_IEEE_PEER_APP", d::DCB_ATTR_IEEE_PEER_APP.into()),
        ("DCB_ATTR_IEEE_MAXRATE", d::DCB_ATTR_IEEE_MAXRATE.into()),
        ("DCB_ATTR_IEEE_APP", d::DCB_ATTR_IEEE_APP.into()),
        // DCB_ATTR_DCB_APP_TRUST_TABLE, DCB_ATTR_DCB_APP and DCB_APP_SEL_PCP
        // are newer than bookworm's headers (Linux 6.1): tests/dcbnl_oracle.rs
        // checks the first two against the running kernel's BTF.
        ("sizeof(struct ieee_ets)", d::IEEE_ETS_LEN as i64),
        ("offsetof(struct ieee_ets, willing)", 0),
        ("offsetof(struct ieee_ets, ets_cap)", 1),
        ("offsetof(struct ieee_ets, cbs)", 2),
        (
            "offsetof(struct ieee_ets, tc_tx_bw)",
            d::IEEE_ETS_TABLES[0] as i64,
        ),
        (
            "offsetof(struct ieee_ets, tc_rx_bw)",
            d::IEEE_ETS_TABLES[1] as i64,
        ),
        (
            "offsetof(struct ieee_ets, tc_tsa)",
            d::IEEE_ETS_TABLES[2] as i64,
        ),
        (
            "offsetof(struct ieee_ets, prio_tc)",
            d::IEEE_ETS_TABLES[3] as i64,
        ),
        (
            "offsetof(struct ieee_ets, tc_reco_bw)",
            d::IEEE_ETS_TABLES[4] as i64,
        ),
        (
            "offsetof(struct ieee_ets, tc_reco_tsa)",
            d::IEEE_ETS_TABLES[5] as i64,
        ),
        (
            "offsetof(struct ieee_ets, reco_prio_tc)",
            d::IEEE_ETS_TABLES[6] as i64,
        ),
        ("sizeof(struct ieee_maxrate)", d::IEEE_MAXRATE_LEN as i64),
        ("sizeof(struct dcb_app)", d::DCB_APP_LEN as i64),
        ("offsetof(struct dcb_app, selector)", 0),
        ("offsetof(struct dcb_app, priority)", 1),
        ("offsetof(struct dcb_app, protocol)", 2),
        ("IEEE_8021QAZ_MAX_TCS", d::MAX_TCS as i64),
        ("IEEE_8021QAZ_TSA_STRICT", d::Tsa::STRICT.0.into()),
        ("IEEE_8021QAZ_TSA_CB_SHAPER", d::Tsa::CB_SHAPER.0.into()),
        ("IEEE_8021QAZ_TSA_ETS", d::Tsa::ETS.0.into()),
        ("IEEE_8021QAZ_TSA_VENDOR", d::Tsa::VENDOR.0.into()),
        (
            "IEEE_8021QAZ_APP_SEL_ETHERTYPE",
            d::AppSelector::ETHERTYPE.0.into(),
        ),
        (
            "IEEE_8021QAZ_APP_SEL_STREAM",
            d::AppSelector::STREAM.0.into(),
        ),
        ("IEEE_8021QAZ_APP_SEL_DGRAM", d::AppSelector::DGRAM.0.into()),
        ("IEEE_8021QAZ_APP_SEL_ANY", d::AppSelector::ANY.0.into()),
        ("IEEE_8021QAZ_APP_SEL_DSCP", d::AppSelector::DSCP.0.into()),
        ("DCB_CAP_DCBX_HOST", d::DcbxMode::HOST.0.into()),
        (
            "DCB_CAP_DCBX_LLD_MANAGED",
            d::DcbxMode::LLD_MANAGED.0.into(),
        ),
        ("DCB_CAP_DCBX_VER_CEE", d::DcbxMode::VER_CEE.0.into()),
        ("DCB_CAP_DCBX_VER_IEEE", d::DcbxMode::VER_IEEE.0.into()),
        ("DCB_CAP_DCBX_STATIC", d::DcbxMode::STATIC.0.into()),
        ("DCBX_MAX_BUFFERS", d::MAX_BUFFERS as i64),
        // netlink.h, genetlink.h, ethtool_netlink.h, ethtool.h (ethtool_nl)
        ("NLM_F_ACK", e::NLM_F_ACK.into()),
        ("NLM_F_CAPPED", e::NLM_F_CAPPED.into()),
        ("NLM_F_ACK_TLVS", e::NLM_F_ACK_TLVS.into()),
        ("NLA_F_NESTED", e::NLA_F_NESTED.into()),
        ("NLMSGERR_ATTR_MSG", e::NLMSGERR_ATTR_MSG.into()),
        ("SOL_NETLINK", e::SOL_NETLINK.into()),
        ("NETLINK_EXT_ACK", e::NETLINK_EXT_ACK.into()),
        ("NETLINK_CAP_ACK", e::NETLINK_CAP_ACK.into()),
        ("GENL_HDRLEN", e::GENL_HDRLEN as i64),
        ("GENL_ID_CTRL", e::GENL_ID_CTRL.into()),
        ("CTRL_CMD_GETFAMILY", e::CTRL_CMD_GETFAMILY.into()),
        ("CTRL_CMD_NEWFAMILY", e::CTRL_CMD_NEWFAMILY.into()),
        ("CTRL_ATTR_FAMILY_ID", e::CTRL_ATTR_FAMILY_ID.into()),
        ("CTRL_ATTR_FAMILY_NAME", e::CTRL_ATTR_FAMILY_NAME.into()),
        (
            "sizeof(ETHTOOL_GENL_NAME) - 1",
            e::ETHTOOL_GENL_NAME.len() as i64,
        ),
        ("ETHTOOL_GENL_VERSION", e::ETHTOOL_GENL_VERSION.into()),
        (
            "ETHTOOL_MSG_PRIVFLAGS_GET",
            e::ETHTOOL_MSG_PRIVFLAGS_GET.into(),
        ),
        (
            "ETHTOOL_MSG_PRIVFLAGS_SET",
            e::ETHTOOL_MSG_PRIVFLAGS_SET.into(),
        ),
        ("ETHTOOL_MSG_PAUSE_GET", e::ETHTOOL_MSG_PAUSE_GET.into()),
        ("ETHTOOL_MSG_PAUSE_SET", e::ETHTOOL_MSG_PAUSE_SET.into()),
        (
            "ETHTOOL_MSG_PRIVFLAGS_GET_REPLY",
            e::ETHTOOL_MSG_PRIVFLAGS_GET_REPLY.into(),
        ),
        (
            "ETHTOOL_MSG_PAUSE_GET_REPLY",
            e::ETHTOOL_MSG_PAUSE_GET_REPLY.into(),
        ),
        (
            "ETHTOOL_A_HEADER_DEV_NAME",
            e::ETHTOOL_A_HEADER_DEV_NAME.into(),
        ),
        ("ETHTOOL_A_PAUSE_HEADER", e::ETHTOOL_A_HEADER.into()),
        ("ETHTOOL_A_PRIVFLAGS_HEADER", e::ETHTOOL_A_HEADER.into()),
        ("ETHTOOL_A_PAUSE_AUTONEG", e::ETHTOOL_A_PAUSE_AUTONEG.into()),
        ("ETHTOOL_A_PAUSE_RX", e::ETHTOOL_A_PAUSE_RX.into()),
        ("ETHTOOL_A_PAUSE_TX", e::ETHTOOL_A_PAUSE_TX.into()),
        (
            "ETHTOOL_A_PRIVFLAGS_FLAGS",
            e::ETHTOOL_A_PRIVFLAGS_FLAGS.into(),
        ),
        ("ETHTOOL_A_BITSET_NOMASK", e::ETHTOOL_A_BITSET_NOMASK.into()),
        ("ETHTOOL_A_BITSET_SIZE", e::ETHTOOL_A_BITSET_SIZE.into()),
        ("ETHTOOL_A_BITSET_BITS", e::ETHTOOL_A_BITSET_BITS.into()),
        ("ETHTOOL_A_BITSET_VALUE", e::ETHTOOL_A_BITSET_VALUE.into()),
        ("ETHTOOL_A_BITSET_MASK", e::ETHTOOL_A_BITSET_MASK.into()),
        (
            "ETHTOOL_A_BITSET_BITS_BIT",
            e::ETHTOOL_A_BITSET_BITS_BIT.into(),
        ),
        (
            "ETHTOOL_A_BITSET_BIT_INDEX",
            e::ETHTOOL_A_BITSET_BIT_INDEX.into(),
        ),
        (
            "ETHTOOL_A_BITSET_BIT_NAME",
            e::ETHTOOL_A_BITSET_BIT_NAME.into(),
        ),
        (
            "ETHTOOL_A_BITSET_BIT_VALUE",
            e::ETHTOOL_A_BITSET_BIT_VALUE.into(),
        ),
        ("ETH_GSTRING_LEN", e::ETH_GSTRING_LEN as i64),
    ];
    for cmd in [
        DcbCmd::GetState,
        DcbCmd::SetState,
        DcbCmd::PgTxGetCfg,
        DcbCmd::PgTxSetCfg,
        DcbCmd::PgRxGetCfg,
        DcbCmd::PgRxSetCfg,
        DcbCmd::PfcGetCfg,
        DcbCmd::PfcSetCfg,
        DcbCmd::SetAll,
        DcbCmd::PfcGetState,
        DcbCmd::PfcSetState,
        DcbCmd::IeeeSet,
        DcbCmd::IeeeGet,
        DcbCmd::GetDcbx,
        DcbCmd::SetDcbx,
        DcbCmd::IeeeDel,
    ] {
        v.push((cmd.name(), cmd.code().into()));
    }
    v
}

#[test]
fn constants_match_the_linux_uapi_headers() {
    let checks = checks();
    let mut c = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include <sys/socket.h>\n\
         #include <linux/netlink.h>\n#include <linux/rtnetlink.h>\n\
         #include <linux/if_link.h>\n#include <linux/if.h>\n#include <linux/if_arp.h>\n\
         #include <linux/if_ether.h>\n#include <linux/if_packet.h>\n\
         #include <linux/filter.h>\n#include <linux/pkt_sched.h>\n\
         #include <linux/dcbnl.h>\n#include <linux/genetlink.h>\n\
         #include <linux/ethtool.h>\n#include <linux/ethtool_netlink.h>\nint main(void) {\n",
    );
    for (expr, _) in &checks {
        c.push_str(&format!("  printf(\"%ld\\n\", (long)({expr}));\n"));
    }
    c.push_str("  return 0;\n}\n");

    let dir = std::env::temp_dir().join(format!("lsys-uapi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let src = dir.join("uapi.c");
    let exe = dir.join("uapi");
    std::fs::write(&src, c).expect("write uapi.c");
    let out = Command::new("gcc")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| {
            panic!("gcc is needed to check constants against the uapi headers (Debian packages gcc, linux-libc-dev): {e}")
        });
    assert!(
        out.status.success(),
        "gcc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&exe).output().expect("run uapi check");
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout);
    let got: Vec<&str> = text.lines().collect();
    assert_eq!(got.len(), checks.len());
    let wrong: Vec<String> = checks
        .iter()
        .zip(got)
        .filter(|((_, ours), theirs)| ours.to_string() != *theirs)
        .map(|((expr, ours), theirs)| format!("{expr}: ours {ours}, header {theirs}"))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}
