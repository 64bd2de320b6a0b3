//! `lossless dcbx show|set|reset`: a port's DCBX in the running daemon, changed at
//! runtime. The command line only turns words into the control socket's
//! `FeatureChange`; every value is checked by the daemon, by the rules the
//! configuration file follows, so the file, the CLI and the socket refuse the same
//! things with the same words.

use clap::{Subcommand, ValueEnum};
use lossless_node::config::RuleSelector;
use lossless_node::protocol::{
    AppRuleChange, AppRulesChange, EtsChange, FeatureChange, FeatureName, Request, TcChange,
};
use lossless_wire::ieee::{EtsTable, Tsa};

use lossless_proto::{Changed, DcbxView, Ports};

use crate::cmd::daemon::{call_typed, print_json, PortArgs, SocketArg};
use crate::cmd::{dcbx_show, dscp};
use crate::error::CliError;
use crate::out::emit;

#[derive(Debug, Subcommand)]
pub enum DcbxCommand {
    /// Which DCBX version runs and why, then per feature what we want, what the peer
    /// sends and what runs, with the reason. IEEE 802.1Qaz: ETS, PFC and APP
    /// (admin/peer/oper, agreed, error); CEE DCBX: PG, PFC and APP (desired/peer/oper,
    /// Syncd, SeqNo/AckNo).
    ///
    /// Example: lossless dcbx show eth0 --json | jq '.ports[0].ieee.pfc.oper'
    Show(PortArgs),
    /// Change a port's DCBX settings. The change is persisted in the daemon's state
    /// directory first, then runs, and survives restarts; `dcbx reset` gives the
    /// configuration file's value back. A refused change says what, where and why,
    /// and changes nothing.
    #[command(after_help = SET_EXAMPLES)]
    Set(SetArgs),
    /// Drop the runtime changes (`dcbx set`) of one feature, or of every feature and
    /// the mode, so that the configuration file's values run again. Persisted like a
    /// set.
    ///
    /// Examples:
    ///   lossless dcbx reset eth0 ets      the file's ETS runs again
    ///   lossless dcbx reset eth0          every runtime change of eth0 dropped
    #[command(verbatim_doc_comment)]
    Reset(ResetArgs),
}

const SET_EXAMPLES: &str = "\
Examples:
  lossless dcbx set eth0 pfc --priorities 3 --willing no
  lossless dcbx set eth0 pfc --priorities 3 --mbc no
  lossless dcbx set eth0 ets --prio-tc 0,0,0,1,0,0,2,0 --tc-bw 50,50,0,0,0,0,0,0 \\
        --tsa ets,ets,strict,strict,strict,strict,strict,strict
  lossless dcbx set eth0 ets --tc 0:0,1,2,4,5,7:50 --tc 1:3:50 --tc 2:6:strict
  lossless dcbx set eth0 ets 'tc0 {0,1,2,3,4,5,7} ets 50%; tc3 {6} ets 50%'
  lossless dcbx set eth0 app add dscp 26 3        RoCEv2 data (AF31) on priority 3
  lossless dcbx set eth0 app add udp 4791 3       RoCEv2 by its UDP port
  lossless dcbx set eth0 app del dscp 26
  lossless dcbx set eth0 app --willing no
  lossless dcbx set eth0 mode ieee                IEEE 802.1Qaz only (auto: as the peer speaks)
  lossless dcbx set eth0 mode static              no DCBX: program the configuration (SONiC)
  lossless dcbx set eth0 pg --pgid 0,0,0,1,1,1,15,2 --percent 25,75,0,0,0,0,0,0

pfc, app and the flags serve both CEE DCBX and IEEE 802.1Qaz; pg is CEE DCBX's, ets
and --mbc IEEE 802.1Qaz's. The APP list is one for both versions: a DSCP rule is
sent in IEEE 802.1Qaz only (CEE DCBX has no DSCP selector), tcp/udp/port as CEE
DCBX's TCP/UDP port entry.";

#[derive(Debug, clap::Args)]
pub struct SetArgs {
    /// The port (interface name).
    pub port: String,
    #[command(subcommand)]
    pub what: SetWhat,
    /// Print the port's new DCBX state as JSON (as `dcbx show --json` gives a port).
    #[arg(short = 'j', long, global = true)]
    pub json: bool,
    #[command(flatten)]
    pub socket: SocketArg,
}

#[derive(Debug, Subcommand)]
pub enum SetWhat {
    /// CEE DCBX priority groups: --pgid, --percent.
    ///
    /// Example: lossless dcbx set eth0 pg --pgid 0,0,0,1,0,0,15,0 --percent 50,50,0,0,0,0,0,0
    Pg(PgArgs),
    /// Priority-based Flow Control (both versions): --priorities; IEEE 802.1Qaz: --mbc.
    ///
    /// Example: lossless dcbx set eth0 pfc --priorities 3 --mbc no --willing yes
    Pfc(PfcArgs),
    /// Application priorities: add, del, replace or clear rules; the flags.
    ///
    /// Example: lossless dcbx set eth0 app add dscp 26 3
    App(AppArgs),
    /// IEEE 802.1Qaz ETS: the table as `dcbx show` prints it ('tc0 {0,1,2} ets 50%; ...'),
    /// the three tables (--prio-tc, --tc-bw, --tsa) or per traffic class (--tc),
    /// --max-tcs, --cbs, --recommend.
    ///
    /// Example: lossless dcbx set eth0 ets --tc 0:0,1,2,4,5,7:50 --tc 1:3:50 --tc 2:6:strict
    Ets(EtsArgs),
    /// Which DCBX version the port runs: auto (IEEE 802.1Qaz, CEE DCBX for a peer
    /// that speaks only that), ieee, cee, or static (no negotiation: the
    /// configuration is programmed as written, for switches without DCBX such as
    /// SONiC; a neighbour's differing DCBX TLVs are reported).
    ///
    /// Example: lossless dcbx set eth0 mode ieee
    Mode {
        #[arg(value_enum)]
        mode: ModeArg,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum YesNo {
    Yes,
    No,
}

impl From<YesNo> for bool {
    fn from(v: YesNo) -> bool {
        matches!(v, YesNo::Yes)
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModeArg {
    Auto,
    Ieee,
    Cee,
    /// No DCBX negotiation: the configuration runs as written.
    Static,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Recommend {
    Yes,
    No,
    /// Send it when not willing (the default).
    Auto,
}

/// The three flags every feature has.
#[derive(Debug, Default, clap::Args)]
pub struct Flags {
    /// Turn the feature on or off locally.
    #[arg(long, value_name = "yes|no")]
    pub enable: Option<YesNo>,
    /// Accept the configuration of a not-willing peer.
    #[arg(long, value_name = "yes|no")]
    pub willing: Option<YesNo>,
    /// Send this feature to the peer (and look at the peer's).
    #[arg(long, value_name = "yes|no")]
    pub advertise: Option<YesNo>,
}

#[derive(Debug, clap::Args)]
pub struct PgArgs {
    #[command(flatten)]
    pub flags: Flags,
    /// PGID of priorities 0..7 (0..7, or 15 for strict priority).
    #[arg(long, value_name = "8 PGIDS", value_delimiter = ',')]
    pub pgid: Option<Vec<u8>>,
    /// Bandwidth percentage of PGs 0..7, summing to 100.
    #[arg(long, value_name = "8 PERCENTS", value_delimiter = ',')]
    pub percent: Option<Vec<u8>>,
}

#[derive(Debug, clap::Args)]
pub struct PfcArgs {
    #[command(flatten)]
    pub flags: Flags,
    /// The priorities with PFC on, e.g. 3,4 ("none" for no priority).
    #[arg(long, value_name = "LIST")]
    pub priorities: Option<String>,
    /// IEEE 802.1Qaz: the MACsec bypass capability bit.
    #[arg(long, value_name = "yes|no")]
    pub mbc: Option<YesNo>,
}

#[derive(Debug, clap::Args)]
pub struct AppArgs {
    #[command(flatten)]
    pub flags: Flags,
    #[command(subcommand)]
    pub action: Option<AppAction>,
}

#[derive(Debug, Subcommand)]
pub enum AppAction {
    /// Add a rule; a rule for the same selector and protocol gains the priorities
    /// (a DSCP's priority is replaced: a DSCP maps to one).
    ///
    /// Example: lossless dcbx set eth0 app add dscp af31 3
    Add(RuleArgs),
    /// Remove the priorities given from a rule, or the whole rule without them.
    ///
    /// Example: lossless dcbx set eth0 app del udp 4791
    Del(RuleArgs),
    /// Replace the whole list with these rules, each SELECTOR:PROTOCOL:PRIORITIES.
    ///
    /// Example: lossless dcbx set eth0 app replace dscp:26:3 dscp:48:6 udp:4791:3
    Replace {
        #[arg(value_name = "RULE", required = true)]
        rules: Vec<String>,
    },
    /// Remove every rule.
    Clear,
}

#[derive(Debug, clap::Args)]
pub struct RuleArgs {
    /// What the protocol number is.
    #[arg(value_enum)]
    pub selector: SelectorArg,
    /// An Ethertype (0x8906), a TCP/UDP port (4791), or a DSCP by number or name
    /// (26, af31, ef, cs6).
    pub protocol: String,
    /// The priorities, e.g. 3 or 3,4.
    pub priorities: Option<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SelectorArg {
    /// An Ethertype (CEE DCBX and IEEE 802.1Qaz).
    Ethertype,
    /// A TCP (or SCTP) port (IEEE 802.1Qaz; CEE DCBX: its TCP/UDP port entry).
    Tcp,
    /// A UDP (or DCCP) port (IEEE 802.1Qaz; CEE DCBX: its TCP/UDP port entry).
    Udp,
    /// A TCP, SCTP, UDP or DCCP port (both versions).
    Port,
    /// A DSCP, 0..63 (IEEE 802.1Qaz only).
    Dscp,
}

impl SelectorArg {
    fn rule(self) -> RuleSelector {
        match self {
            SelectorArg::Ethertype => RuleSelector::Ethertype,
            SelectorArg::Tcp => RuleSelector::Tcp,
            SelectorArg::Udp => RuleSelector::Udp,
            SelectorArg::Port => RuleSelector::Port,
            SelectorArg::Dscp => RuleSelector::Dscp,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct EtsArgs {
    #[command(flatten)]
    pub flags: Flags,
    /// The whole table in the notation `dcbx show` prints, quoted: each traffic class
    /// with its priorities, TSA and share, e.g. 'tc0 {0,1,2,3,4,5,7} ets 50%; tc3 {6}
    /// ets 50%'. Every priority is in one class; a class not written is strict, 0 %.
    #[arg(
        value_name = "TABLE",
        value_parser = EtsTable::parse,
        conflicts_with_all = ["prio_tc", "tc_bw", "tsa", "tc"]
    )]
    pub table: Option<EtsTable>,
    /// The traffic class of priorities 0..7.
    #[arg(long, value_name = "8 TCS", value_delimiter = ',')]
    pub prio_tc: Option<Vec<u8>>,
    /// The bandwidth share of traffic classes 0..7, summing to 100 (or all 0 when no
    /// class uses ETS).
    #[arg(long, value_name = "8 PERCENTS", value_delimiter = ',')]
    pub tc_bw: Option<Vec<u8>>,
    /// The selection algorithm of traffic classes 0..7: strict, cbs, ets or vendor.
    #[arg(long, value_name = "8 TSAS", value_delimiter = ',')]
    pub tsa: Option<Vec<String>>,
    /// One traffic class, TC:PRIORITIES[:PERCENT][:TSA]; repeat for each class
    /// (replaces the three tables). Priorities not listed stay on class 0; a class
    /// with a share is ets unless a TSA follows, one without is strict.
    #[arg(long, value_name = "TC:PRIOS[:BW][:TSA]")]
    pub tc: Vec<String>,
    /// Traffic classes the station supports, 1..=8.
    #[arg(long, value_name = "N")]
    pub max_tcs: Option<u8>,
    /// The station supports the credit-based shaper.
    #[arg(long, value_name = "yes|no")]
    pub cbs: Option<YesNo>,
    /// Send the table as an ETS Recommendation for a willing peer (auto: when not
    /// willing).
    #[arg(long, value_name = "yes|no|auto")]
    pub recommend: Option<Recommend>,
}

#[derive(Debug, clap::Args)]
pub struct ResetArgs {
    /// The port (interface name).
    pub port: String,
    /// Only this feature (pfc also drops a runtime --mbc); without it, everything.
    #[arg(value_enum)]
    pub feature: Option<ResetFeature>,
    /// Print the port's DCBX state afterwards as JSON.
    #[arg(short = 'j', long)]
    pub json: bool,
    #[command(flatten)]
    pub socket: SocketArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ResetFeature {
    Pg,
    Pfc,
    App,
    Ets,
    Mode,
}

pub fn run(cmd: DcbxCommand) -> Result<(), CliError> {
    match cmd {
        DcbxCommand::Show(args) => {
            let (v, show): (_, Ports<DcbxView>) = call_typed(
                &args.socket.path,
                "dcbx show",
                &Request::DcbxShow {
                    port: args.port.clone(),
                },
            )?;
            if args.json {
                return print_json(&v);
            }
            let text: String = show.ports.iter().map(dcbx_show::render).collect();
            emit(&text)
        }
        DcbxCommand::Set(args) => {
            let change = change(&args.what)?;
            let port = args.port.clone();
            let socket = &args.socket.path;
            let (v, view): (_, Changed<DcbxView>) =
                call_typed(socket, "dcbx set", &Request::DcbxSet { port, change })?;
            if args.json {
                return print_json(&v);
            }
            emit(&dcbx_show::render(&view.view))
        }
        DcbxCommand::Reset(args) => {
            let feature = args.feature.map(|f| match f {
                ResetFeature::Pg => FeatureName::Pg,
                ResetFeature::Pfc => FeatureName::Pfc,
                ResetFeature::App => FeatureName::App,
                ResetFeature::Ets => FeatureName::Ets,
                ResetFeature::Mode => FeatureName::Mode,
            });
            let port = args.port.clone();
            let socket = &args.socket.path;
            let (v, view): (_, Changed<DcbxView>) =
                call_typed(socket, "dcbx reset", &Request::DcbxReset { port, feature })?;
            if args.json {
                return print_json(&v);
            }
            emit(&dcbx_show::render(&view.view))
        }
    }
}

/// The socket's change for the words of `dcbx set PORT ...`.
pub fn change(what: &SetWhat) -> Result<FeatureChange, CliError> {
    let c = match what {
        SetWhat::Pg(a) => FeatureChange {
            pgid: a.pgid.clone(),
            percent: a.percent.clone(),
            ..flags(FeatureName::Pg, &a.flags)
        },
        SetWhat::Pfc(a) => FeatureChange {
            priorities: a
                .priorities
                .as_deref()
                .map(|p| priority_list("--priorities", p))
                .transpose()?,
            mbc: a.mbc.map(bool::from),
            ..flags(FeatureName::Pfc, &a.flags)
        },
        SetWhat::App(a) => {
            let mut c = flags(FeatureName::App, &a.flags);
            match &a.action {
                None => {}
                Some(AppAction::Add(r)) => {
                    c.app_rules = Some(Box::new(AppRulesChange {
                        add: Some(vec![app_rule("app add", r)?]),
                        del: None,
                    }))
                }
                Some(AppAction::Del(r)) => {
                    c.app_rules = Some(Box::new(AppRulesChange {
                        add: None,
                        del: Some(vec![app_rule("app del", r)?]),
                    }))
                }
                Some(AppAction::Replace { rules }) => {
                    let entries = rules
                        .iter()
                        .map(|r| colon_rule(r))
                        .collect::<Result<Vec<_>, _>>()?;
                    c.app = Some(
                        serde_json::from_value(serde_json::json!({
                            "entries": entries
                        }))
                        .map_err(|e| CliError::input("app replace", e))?,
                    );
                }
                Some(AppAction::Clear) => c.app = Some(Default::default()),
            }
            c
        }
        SetWhat::Ets(a) => FeatureChange {
            ets: Some(Box::new(EtsChange {
                prio_tc: a.table.map(|t| t.prio_tc.to_vec()).or(a.prio_tc.clone()),
                tc_bw: a.table.map(|t| t.tc_bw.to_vec()).or(a.tc_bw.clone()),
                tsa: match a.table {
                    Some(t) => Some(t.tsa.to_vec()),
                    None => a
                        .tsa
                        .as_ref()
                        .map(|v| v.iter().map(|t| tsa("--tsa", t)).collect())
                        .transpose()?,
                },
                tcs: if a.tc.is_empty() {
                    None
                } else {
                    Some(a.tc.iter().map(|t| tc(t)).collect::<Result<_, _>>()?)
                },
                max_tcs: a.max_tcs,
                cbs: a.cbs.map(bool::from),
                recommend: a.recommend.map(|r| match r {
                    Recommend::Yes => Some(true),
                    Recommend::No => Some(false),
                    Recommend::Auto => None,
                }),
            }))
            .filter(|e| **e != EtsChange::default()),
            ..flags(FeatureName::Ets, &a.flags)
        },
        SetWhat::Mode { mode } => FeatureChange {
            mode: Some(match mode {
                ModeArg::Auto => lossless_dcbx::DcbxMode::Auto,
                ModeArg::Ieee => lossless_dcbx::DcbxMode::Ieee,
                ModeArg::Cee => lossless_dcbx::DcbxMode::Cee,
                ModeArg::Static => lossless_dcbx::DcbxMode::Static,
            }),
            ..FeatureChange {
                feature: FeatureName::Mode,
                ..FeatureChange::default()
            }
        },
    };
    if c == (FeatureChange {
        feature: c.feature,
        ..FeatureChange::default()
    }) {
        return Err(CliError::input(
            "dcbx set",
            format!(
                "nothing to change: give --enable, --willing, --advertise or {}'s values \
                 (lossless dcbx set PORT {} --help)",
                c.feature.name(),
                c.feature.name()
            ),
        ));
    }
    Ok(c)
}

fn flags(feature: FeatureName, f: &Flags) -> FeatureChange {
    FeatureChange {
        feature,
        enable: f.enable.map(bool::from),
        willing: f.willing.map(bool::from),
        advertise: f.advertise.map(bool::from),
        ..FeatureChange::default()
    }
}

/// `3,4`, `3` or `none`, by the daemon's rule for a list of priorities
/// ([`lossless_node::config::priority_text`]: each 0..=7, none twice, not empty).
pub fn priority_list(what: &str, text: &str) -> Result<Vec<u8>, CliError> {
    lossless_node::config::priority_text(text).map_err(|reason| CliError::input(what, reason))
}

/// A rule's protocol: a number (decimal or 0x hex) or, for a DSCP, a name.
fn protocol(what: &str, selector: SelectorArg, text: &str) -> Result<u16, CliError> {
    let n = match selector {
        SelectorArg::Dscp => dscp::parse(text),
        _ => dscp::parse_number(text),
    };
    let Some(n) = n else {
        let expected = match selector {
            SelectorArg::Dscp => format!("a DSCP, 0..63 or one of {}", dscp::names()),
            SelectorArg::Ethertype => "an Ethertype such as 0x8906".to_string(),
            _ => "a port number, 0..65535".to_string(),
        };
        return Err(CliError::input(
            what.to_string(),
            format!("{text:?} is not {expected}"),
        ));
    };
    u16::try_from(n).map_err(|_| {
        CliError::input(
            what.to_string(),
            format!("{n} does not fit a protocol field (0..65535)"),
        )
    })
}

fn app_rule(what: &str, r: &RuleArgs) -> Result<AppRuleChange, CliError> {
    Ok(AppRuleChange {
        selector: r.selector.rule(),
        protocol: protocol(what, r.selector, &r.protocol)?,
        priorities: match &r.priorities {
            Some(p) => priority_list(what, p)?,
            None => Vec::new(),
        },
        oui: None,
    })
}

/// `dscp:26:3` as a rule of the file's shape.
fn colon_rule(text: &str) -> Result<serde_json::Value, CliError> {
    let what = format!("app replace {text}");
    let parts: Vec<&str> = text.split(':').collect();
    let [sel, proto, prios] = parts[..] else {
        return Err(CliError::input(
            what,
            "a rule is SELECTOR:PROTOCOL:PRIORITIES, e.g. dscp:26:3 or udp:4791:3",
        ));
    };
    let selector = SelectorArg::from_str(sel, true).map_err(|_| {
        CliError::input(
            what.clone(),
            format!("unknown selector {sel:?}: ethertype, tcp, udp, port or dscp"),
        )
    })?;
    Ok(serde_json::json!({
        "selector": selector.rule(),
        "protocol": protocol(&what, selector, proto)?,
        "priorities": priority_list(&what, prios)?,
    }))
}

fn tsa(what: &str, text: &str) -> Result<Tsa, CliError> {
    let t = text.trim();
    Tsa::from_name(t)
        .or_else(|| t.parse::<u8>().ok().map(Tsa))
        .ok_or_else(|| {
            CliError::input(
                what.to_string(),
                format!("{t:?} is not a TSA: strict, cbs, ets or vendor"),
            )
        })
}

/// `--tc TC:PRIOS[:BW][:TSA]`.
fn tc(text: &str) -> Result<TcChange, CliError> {
    let what = format!("--tc {text}");
    let mut parts = text.split(':');
    let (Some(tc), Some(prios)) = (parts.next(), parts.next()) else {
        return Err(CliError::input(
            what,
            "a traffic class is TC:PRIORITIES[:PERCENT][:TSA], e.g. 1:3:50 or 2:6:strict",
        ));
    };
    let tc = tc.trim().parse::<u8>().map_err(|_| {
        CliError::input(
            what.clone(),
            format!("{tc:?} is not a traffic class (0..7)"),
        )
    })?;
    let mut out = TcChange {
        tc,
        priorities: priority_list(&what, prios)?,
        bandwidth: 0,
        tsa: None,
    };
    for p in parts {
        let n = p.trim().trim_end_matches('%');
        if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
            out.bandwidth = n.parse::<u8>().map_err(|_| {
                CliError::input(what.clone(), format!("bandwidth {n} is more than 100 %"))
            })?;
        } else {
            out.tsa = Some(tsa(&what, p)?);
        }
    }
    Ok(out)
}
