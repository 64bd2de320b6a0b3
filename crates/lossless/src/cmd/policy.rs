//! `lossless policy`: check, compile, resolve and explain an OpenSM QoS policy offline.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use lossless_policy::bind::{bind, Bound, Origin};
use lossless_policy::check::{check, Severity};
use lossless_policy::compile::{compile, OsmQos};
use lossless_policy::ethernet::{compile_ethernet, EthOptions};
use lossless_policy::fabric::{lft, topo, Fabric, SmSource};
use lossless_policy::matcher::Request;
use lossless_policy::partitions::{self, Partitions};
use lossless_policy::resolve::{
    describe_mtu, describe_packet_life, describe_rate, find_node, find_sm, sminfo, Matched, Query,
    Resolver,
};
use lossless_policy::Policy;
use serde_json::json;

use crate::error::CliError;
use crate::out::{emit, outln};

pub const AFTER_HELP: &str = "\
Examples:
  lossless policy check qos-policy.conf --fabric ibnetdiscover.out
  lossless policy check qos-policy.xml                 the OFA QoS RFC's XML form (<qos-policy>)
  lossless policy resolve qos-policy.conf --fabric net --partitions partitions.conf \\
      --src Hca1 --dst Hca2 --service-id 0x11234 --json
  lossless policy resolve qos-policy.conf --fabric ibnetdiscover.out --lfts lfts.txt \\
      --src Hca1 --dst 0x100004
  lossless policy resolve qos-policy.conf --fabric ibnetdiscover.out --sm \"$(sminfo)\" \\
      --partitions partitions.conf --src 12 --dst 7
  lossless policy explain qos-policy.conf --fabric net --src Hca1/P1 --dst 0x100004
  lossless policy compile qos-policy.conf --fabric net --opensm-conf opensm.conf
  lossless policy compile qos-policy.conf --ethernet --lossless Storage > losslessd.toml

POLICY is OpenSM's qos-policy.conf or the XML form of the OFA QoS RFC (OpenFabrics
Enhancements for QoS Support, Eitan Zahavi, 2006): a file whose first non-comment token is
`<`. Both read into the same policy.

NODE is a port GUID (0x...), a LID (from ibnetdiscover output or the LFT dump) or a node
description with an optional /P<port>. Routes come from --lfts when given (the output of
`dump_lfts`, `ibroute` on every switch, or OpenSM's opensm-lfts.dump), else min-hop over the
fabric dump; every answer says which.

--sm PORT is where the subnet manager runs (SELF in port groups and partitions, the default
partition's full member): a NODE, or the line sminfo prints. Without it the first node of
an ibsim net file is assumed, and no port for ibnetdiscover output (it does not say); every
command given a fabric prints the SM port it took and why.

compile --ethernet writes the [ports.\"NAME\"] sections of a losslessd configuration file: a
level's SL is its 802.1p priority, port-name entries without /P<port> are interface names,
the SL2VL table of a port gives each priority's group and the VLArb weights the groups'
bandwidth (written twice, as CEE DCBX priority groups, pg.*, and as IEEE 802.1Qaz ETS,
ets.*, traffic class = group, so a port runs them in either version), and levels marked
lossless (`lossless: yes` in the level, <lossless/> in the XML form, or --lossless LEVEL)
get PFC. See docs/policy.md.";

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: PolicyCmd,
}

#[derive(Debug, Subcommand)]
pub enum PolicyCmd {
    /// Report every error and warning in a policy (with --fabric: against that fabric).
    ///
    /// Either form: OpenSM's qos-policy.conf or the OFA QoS RFC's XML form <qos-policy>,
    /// whose mistakes are all reported at once, each with line:column and what was expected.
    Check(CheckArgs),
    /// Per-port SL2VL and VLArb tables for a fabric; with --ethernet, losslessd's DCBX
    /// configuration (priority groups and bandwidth as CEE PG and IEEE ETS, PFC, APP) per
    /// interface.
    ///
    /// Example: lossless policy compile qos-policy.conf --ethernet --ports enp65s0f0
    Compile(CompileArgs),
    /// What PathRecord OpenSM would answer: level, SL, MTU, rate, packet life, P_Key.
    ///
    /// Routes follow --lfts (the switches' programmed tables) when given, else min-hop.
    Resolve(ResolveArgs),
    /// Which rule matched, and for each earlier rule the criterion that failed.
    Explain(ResolveArgs),
}

#[derive(Debug, clap::Args)]
pub struct Inputs {
    /// Policy file: OpenSM's qos-policy.conf or the OFA QoS RFC's XML form (<qos-policy>).
    pub policy: PathBuf,
    /// Fabric: ibnetdiscover output or an ibsim net file (required by resolve, explain and
    /// compile without --ethernet; check without it checks the policy alone).
    #[arg(long)]
    pub fabric: Option<PathBuf>,
    /// OpenSM partitions.conf (partition port groups, P_Keys, partition SLs).
    #[arg(long)]
    pub partitions: Option<PathBuf>,
    /// opensm.conf: its qos_* SL2VL/VLArb options and subnet_timeout.
    #[arg(long)]
    pub opensm_conf: Option<PathBuf>,
    /// MTU capability of every port, as an IB enum (1=256 .. 5=4096); ibnetdiscover does not
    /// report it (default 5 for ibnetdiscover output, ibsim's values for net files).
    #[arg(long)]
    pub mtu_cap: Option<u8>,
    /// The port the subnet manager runs on: SELF in port groups and partitions, and the
    /// default partition's full member. A port GUID, a LID or a node description as --src
    /// takes, or what `sminfo` prints ("sminfo: sm lid 1 sm guid 0x100005, ..."). Without
    /// it: the first node of an ibsim net file (where ibsim attaches OpenSM started without
    /// SIM_HOST), none for ibnetdiscover output; every answer says which port was taken.
    #[arg(long, value_name = "PORT")]
    pub sm: Option<String>,
    /// Machine-readable output.
    #[arg(short = 'j', long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub inputs: Inputs,
}

#[derive(Debug, clap::Args)]
pub struct CompileArgs {
    #[command(flatten)]
    pub inputs: Inputs,
    /// Emit losslessd's per-port DCBX configuration (TOML) for Ethernet instead of IB tables:
    /// CEE priority groups (pg.*) and IEEE 802.1Qaz ETS (ets.*) meaning the same, PFC, APP.
    #[arg(long)]
    pub ethernet: bool,
    /// With --ethernet: interfaces to configure besides the policy's interface names
    /// (port-name entries without /P<port>). Comma-separated.
    #[arg(
        long,
        value_name = "IF,...",
        value_delimiter = ',',
        requires = "ethernet"
    )]
    pub ports: Vec<String>,
    /// With --ethernet: QoS levels whose traffic is lossless (PFC on their priority), besides
    /// those the policy marks. Comma-separated level names.
    #[arg(
        long,
        value_name = "LEVEL,...",
        value_delimiter = ',',
        requires = "ethernet"
    )]
    pub lossless: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct ResolveArgs {
    #[command(flatten)]
    pub inputs: Inputs,
    /// Source port: a port GUID (0x0002c903000010a1), a LID (with --lfts, any LID the dump
    /// names), or a node description with an optional /P<port> ("HCA-1/P1", "sw-leaf-3").
    #[arg(long, value_name = "NODE")]
    pub src: String,
    /// Destination port, in the same forms as --src.
    #[arg(long, value_name = "NODE")]
    pub dst: String,
    /// Service ID the path is for (decimal or 0x hex). Rules and qos-ulps lines with a
    /// service-id criterion match only requests that carry one.
    #[arg(long, value_parser = parse_u64)]
    pub service_id: Option<u64>,
    /// QoS class (the OFA QoS RFC calls it TClass; --tclass is accepted). Rules with a
    /// qos-class criterion match only requests that carry one.
    #[arg(long, visible_alias = "tclass", value_parser = parse_u64)]
    pub qos_class: Option<u64>,
    /// P_Key the path must use (decimal or 0x hex, membership bit ignored). Without it the
    /// level's or the partitions' P_Key is chosen, as OpenSM does.
    #[arg(long, value_parser = parse_u64)]
    pub pkey: Option<u64>,
    /// SL the requester asks for (0-15). A level with another SL, or an SL that the route
    /// maps to VL15, gives no path, with the reason.
    #[arg(long)]
    pub sl: Option<u8>,
    /// The switches' forwarding tables: `dump_lfts` output, `ibroute` of every switch, or
    /// OpenSM's opensm-lfts.dump. Routes follow them instead of min-hop.
    #[arg(long, value_name = "FILE")]
    pub lfts: Option<PathBuf>,
}

fn parse_u64(s: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|e| format!("`{s}`: {e}"))
}

fn read(p: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(p).map_err(|e| CliError::input(format!("reading {}", p.display()), e))
}

struct Loaded {
    file: String,
    policy: Policy,
    fabric: Option<Fabric>,
    parts: Option<Partitions>,
    osm: OsmQos,
    lfts: Option<lft::Lfts>,
}

/// Parse the policy; every error on stderr, the first in the returned error.
fn parse(file: &str, src: &str) -> Result<Policy, CliError> {
    lossless_policy::parse_policy_all(file, src).map_err(|errs| {
        for e in errs.iter().skip(1) {
            eprintln!("{e}");
        }
        let more = match errs.len() {
            0 | 1 => String::new(),
            n => format!(" (and {} more above)", n - 1),
        };
        match errs.first() {
            Some(e) => CliError::input("policy", format!("{e}{more}")),
            None => CliError::input("policy", "unreadable"),
        }
    })
}

/// Read the inputs; `lfts`: the LFT dump, which also maps LIDs to ports (for `--sm`).
fn load(i: &Inputs, lfts: Option<&Path>) -> Result<Loaded, CliError> {
    let file = i.policy.display().to_string();
    let policy = parse(&file, &read(&i.policy)?)?;
    let mut fabric = match &i.fabric {
        Some(f) => {
            let mut fab = topo::parse(&f.display().to_string(), &read(f)?)
                .map_err(|e| CliError::input("fabric", e))?;
            if let Some(m) = i.mtu_cap {
                fab.set_mtu_cap(m);
            }
            Some(fab)
        }
        None => None,
    };
    let lfts = match (lfts, &fabric) {
        (Some(p), Some(f)) => Some(
            lft::parse(&p.display().to_string(), &read(p)?, f)
                .map_err(|e| CliError::input("--lfts", e))?,
        ),
        _ => None,
    };
    match (&i.sm, &mut fabric) {
        (Some(sm), Some(f)) => {
            let port = find_sm(f, sm)
                .or_else(|e| sm_by_lid(sm, lfts.as_ref()).ok_or(e))
                .map_err(|e| CliError::input("--sm", e))?;
            f.set_sm_port(port);
        }
        (Some(_), None) => {
            return Err(CliError::input(
                "--sm",
                "names a port of the fabric: give --fabric too",
            ))
        }
        _ => {}
    }
    let conf = match &i.partitions {
        Some(p) => Some(
            partitions::parse(&p.display().to_string(), &read(p)?)
                .map_err(|e| CliError::input("partitions", e))?,
        ),
        None => None,
    };
    let parts = fabric.as_ref().map(|f| Partitions::build(conf.as_ref(), f));
    let osm = match &i.opensm_conf {
        Some(p) => {
            let osm = OsmQos::parse(&read(p)?);
            // What OpenSM programs otherwise than the file says, whatever the command: never a
            // silently different table.
            for d in &osm.diags {
                eprintln!("{}:{}: warning: {}", p.display(), d.line, d.message);
            }
            if let Some(f) = &fabric {
                for d in osm.fabric_diags(f) {
                    eprintln!("{}:{}: warning: {}", p.display(), d.line, d.message);
                }
            }
            osm
        }
        None => OsmQos::default(),
    };
    Ok(Loaded {
        file,
        policy,
        fabric,
        parts,
        osm,
        lfts,
    })
}

/// The port of the SM's LID (`--sm 4`, or sminfo's line on a fabric dump without LIDs) in
/// the LFT dump.
fn sm_by_lid(sm: &str, lfts: Option<&lft::Lfts>) -> Option<lossless_policy::fabric::PortRef> {
    let lid = match sminfo(sm) {
        Some((lid, _)) => lid?,
        None => sm.trim().parse().ok()?,
    };
    lfts?.lids.get(&lid).copied()
}

/// Where the SM is taken to run, for the output; not given, how to say.
fn sm_line(f: &Fabric) -> String {
    match f.sm_source {
        SmSource::Given => f.sm_text(),
        _ => format!(
            "{}; give --sm (a GUID, LID or node description, or sminfo's output) to say where \
             it runs",
            f.sm_text()
        ),
    }
}

fn sm_json(f: &Fabric) -> serde_json::Value {
    json!({
        "port": f.sm_port.map(|r| f.label(r)),
        "source": f.sm_source,
        "text": f.sm_text(),
    })
}

fn print_json(v: &serde_json::Value) -> Result<(), CliError> {
    let s = serde_json::to_string_pretty(v).map_err(|e| CliError::failure("json", e))?;
    outln!("{s}")?;
    Ok(())
}

pub fn run(args: Args) -> Result<(), CliError> {
    match args.cmd {
        PolicyCmd::Check(a) => run_check(a),
        PolicyCmd::Compile(a) => run_compile(a),
        PolicyCmd::Resolve(a) => run_resolve(a, false),
        PolicyCmd::Explain(a) => run_resolve(a, true),
    }
}

fn run_check(a: CheckArgs) -> Result<(), CliError> {
    let file = a.inputs.policy.display().to_string();
    let src = read(&a.inputs.policy)?;
    let policy = match lossless_policy::parse_policy_all(&file, &src) {
        Ok(p) => p,
        Err(errs) => {
            if a.inputs.json {
                let diags: Vec<serde_json::Value> = errs
                    .iter()
                    .map(|e| json!({ "severity": "error", "code": "syntax", "file": file, "loc": e.loc(), "message": e.to_string(), "error": e }))
                    .collect();
                print_json(
                    &json!({ "ok": false, "errors": errs.len(), "warnings": 0, "diagnostics": diags }),
                )?;
            } else {
                for e in &errs {
                    outln!("{e}")?;
                }
                outln!("{file}: {} error(s), 0 warning(s)", errs.len())?;
            }
            return Err(CliError::failure(
                "policy check",
                format!("{} error(s)", errs.len()),
            ));
        }
    };
    if a.inputs.sm.is_some() && a.inputs.fabric.is_none() {
        return Err(CliError::input(
            "--sm",
            "names a port of the fabric: give --fabric too",
        ));
    }
    let l = load(&a.inputs, None).map(Some).or_else(|e| {
        if a.inputs.fabric.is_some() {
            Err(e)
        } else {
            Ok(None)
        }
    })?;
    let ctx = l
        .as_ref()
        .and_then(|l| Some((l.fabric.as_ref()?, l.parts.as_ref()?, &l.osm)));
    let diags = check(&file, &policy, ctx);
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diags.len() - errors;
    let fabric = ctx.map(|(f, _, _)| f);
    if a.inputs.json {
        let mut v = json!({ "ok": errors == 0, "errors": errors, "warnings": warnings, "diagnostics": diags });
        if let (Some(f), Some(o)) = (fabric, v.as_object_mut()) {
            o.insert("sm".into(), sm_json(f));
        }
        print_json(&v)?;
    } else {
        for d in &diags {
            outln!("{d}")?;
        }
        if let Some(f) = fabric {
            outln!("SM port: {}", sm_line(f))?;
        }
        outln!("{file}: {errors} error(s), {warnings} warning(s)")?;
    }
    if errors > 0 {
        return Err(CliError::failure(
            "policy check",
            format!("{errors} error(s)"),
        ));
    }
    Ok(())
}

fn need_fabric(l: &Loaded) -> Result<(&Fabric, &Partitions), CliError> {
    match (&l.fabric, &l.parts) {
        (Some(f), Some(p)) => Ok((f, p)),
        _ => Err(CliError::input(
            "policy",
            "--fabric is required for this command",
        )),
    }
}

fn bound(l: &Loaded) -> Result<Bound, CliError> {
    let (f, p) = need_fabric(l)?;
    bind(&l.file, &l.policy, f, p).map_err(|e| CliError::input("policy", e))
}

fn run_compile(a: CompileArgs) -> Result<(), CliError> {
    if a.ethernet {
        return run_compile_ethernet(a);
    }
    let l = load(&a.inputs, None)?;
    let b = bound(&l)?;
    let (f, _) = need_fabric(&l)?;
    let (tables, diags) = compile(f, &l.osm, Some(&l.policy), Some(&b));
    if a.inputs.json {
        return print_json(&json!({ "ports": tables, "diagnostics": diags, "sm": sm_json(f) }));
    }
    outln!("SM port: {}", sm_line(f))?;
    for t in &tables {
        outln!("{} ({})", t.port, t.guid)?;
        outln!("  VLArb high {}", vl_weights(&t.vlarb_high))?;
        outln!("  VLArb low  {}", vl_weights(&t.vlarb_low))?;
        outln!("  VL high limit {}", t.vl_high_limit)?;
        for (inp, tbl) in &t.sl2vl {
            let row: Vec<String> = tbl.iter().map(|v| format!("{v:>2}")).collect();
            outln!("  in {inp:>3}: SL->VL {}", row.join(" "))?;
        }
    }
    for d in &diags {
        outln!(
            "{}:{}: {}: {}",
            l.file,
            d.loc,
            if d.warning { "warning" } else { "error" },
            d.message
        )?;
    }
    Ok(())
}

/// A VL arbitration table as OpenSM's configuration writes one (`qos_vlarb_high`):
/// `VL:weight` pairs, `0:4,1:0,...`; `(empty)` for none.
fn vl_weights(table: &[(u8, u8)]) -> String {
    if table.is_empty() {
        return "(empty)".into();
    }
    table
        .iter()
        .map(|(vl, w)| format!("{vl}:{w}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn run_compile_ethernet(a: CompileArgs) -> Result<(), CliError> {
    let what = "policy compile --ethernet";
    if a.inputs.fabric.is_some()
        || a.inputs.partitions.is_some()
        || a.inputs.mtu_cap.is_some()
        || a.inputs.sm.is_some()
    {
        return Err(CliError::input(
            what,
            "--fabric, --partitions, --mtu-cap and --sm describe an InfiniBand subnet; Ethernet \
             ports are the policy's interface names (port-name: enp65s0f0) and --ports",
        ));
    }
    let file = a.inputs.policy.display().to_string();
    let policy = parse(&file, &read(&a.inputs.policy)?)?;
    let opts = EthOptions {
        ports: a.ports.clone(),
        lossless: a.lossless.clone(),
    };
    let (cfg, diags) = compile_ethernet(&file, &policy, &opts);
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let Some(cfg) = cfg else {
        if a.inputs.json {
            print_json(&json!({ "ok": false, "diagnostics": diags }))?;
        } else {
            for d in &diags {
                eprintln!("{d}");
            }
        }
        return Err(CliError::input(what, format!("{errors} error(s)")));
    };
    if a.inputs.json {
        return print_json(
            &json!({ "ok": true, "levels": cfg.levels, "ports": cfg.ports, "diagnostics": diags }),
        );
    }
    for d in &diags {
        eprintln!("{d}");
    }
    emit(&cfg.to_toml(&file, &diags))?;
    Ok(())
}

fn origin_text(o: &Origin) -> String {
    match o {
        Origin::MatchRule { number, loc } => format!("qos-match-rule {number} (line {})", loc.line),
        Origin::QosUlps { loc, .. } => format!("qos-ulps line {}", loc.line),
    }
}

fn run_resolve(a: ResolveArgs, explain: bool) -> Result<(), CliError> {
    let l = load(&a.inputs, a.lfts.as_deref())?;
    let b = bound(&l)?;
    let (f, parts) = need_fabric(&l)?;
    let lfts = &l.lfts;
    // With an LFT dump, LIDs work on any fabric dump (the dump maps them to ports).
    let lid_node = |s: &str| {
        let lid: u16 = s.trim().parse().ok()?;
        lfts.as_ref()?.lids.get(&lid).copied()
    };
    let src = find_node(f, &a.src)
        .or_else(|e| lid_node(&a.src).ok_or(e))
        .map_err(|e| CliError::input("--src", e))?;
    let dst = find_node(f, &a.dst)
        .or_else(|e| lid_node(&a.dst).ok_or(e))
        .map_err(|e| CliError::input("--dst", e))?;
    let pkey = a
        .pkey
        .map(|p| u16::try_from(p).map_err(|_| CliError::input("--pkey", "must fit in 16 bits")))
        .transpose()?;
    let qos_class = a
        .qos_class
        .map(|p| {
            u16::try_from(p).map_err(|_| CliError::input("--qos-class", "must fit in 16 bits"))
        })
        .transpose()?;
    if a.sl.is_some_and(|s| s > 15) {
        return Err(CliError::input("--sl", "must be 0-15"));
    }
    let q = Query {
        requester: None,
        src,
        dst,
        request: Request {
            service_id: a.service_id,
            qos_class,
            pkey,
        },
        sl: a.sl,
    };
    let mut r = Resolver::new(f, parts, &l.osm, Some((&l.policy, &b)));
    if let Some(t) = &lfts {
        r = r.with_lfts(t);
    }
    let answer = r.resolve(&q);
    let steps = if explain { r.explain(&q) } else { vec![] };
    let steps_json: Vec<serde_json::Value> = steps
        .iter()
        .filter_map(|(i, miss)| {
            let rule = b.rules.get(*i)?;
            let level = b.levels.get(rule.level).map(|l| l.name.clone());
            Some(json!({ "rule": origin_text(&rule.origin), "use": rule.use_, "level": level, "matched": miss.is_none(), "failed": miss.as_ref().map(|m| m.to_string()) }))
        })
        .collect();
    let matched_text = |m: &Matched| match m {
        Matched::Rule { origin, .. } => origin_text(origin),
        Matched::Default => "no rule matched: default level".into(),
        Matched::NoPolicy => "no policy".into(),
    };
    if a.inputs.json {
        let mut v = match &answer {
            Ok(p) => json!({
                "level": p.level, "sl": p.sl,
                "mtu": p.mtu, "mtu_bytes": describe_mtu(p.mtu).parse::<u32>().ok(),
                "rate": p.rate, "rate_decoded": describe_rate(p.rate),
                "mtu_limit": p.mtu_limit, "rate_limit": p.rate_limit,
                "packet_life": p.packet_life, "packet_life_decoded": describe_packet_life(p.packet_life),
                "path_bits": p.path_bits, "pkey": format!("{:#06x}", p.pkey),
                "matched": matched_text(&p.matched), "routing": p.routing, "hops": p.hops,
                "sm": sm_json(f),
            }),
            Err(n) => {
                json!({ "no_path": true, "reason": n.reason, "opensm_code": n.opensm_code, "level": n.level, "matched": n.matched.as_ref().map(matched_text), "routing": r.routing(), "sm": sm_json(f) })
            }
        };
        if explain {
            if let Some(o) = v.as_object_mut() {
                o.insert("rules".into(), json!(steps_json));
            }
        }
        return print_json(&v);
    }
    if explain {
        for s in &steps_json {
            let ok = s["matched"].as_bool().unwrap_or(false);
            outln!(
                "{} {} -> {}: {}",
                if ok { "MATCH" } else { "  no " },
                s["rule"].as_str().unwrap_or(""),
                s["level"].as_str().unwrap_or(""),
                if ok {
                    "all criteria hold".to_string()
                } else {
                    s["failed"].as_str().unwrap_or("").to_string()
                }
            )?;
        }
    }
    match &answer {
        Ok(p) => {
            outln!(
                "{} -> {}: level {} ({})",
                a.src,
                a.dst,
                p.level.as_deref().unwrap_or("-"),
                matched_text(&p.matched)
            )?;
            outln!(
                "  SL {}  MTU {} ({})  rate {} ({})  packet life {} ({})  P_Key {:#06x}",
                p.sl,
                p.mtu,
                describe_mtu(p.mtu),
                p.rate,
                describe_rate(p.rate),
                p.packet_life,
                describe_packet_life(p.packet_life),
                p.pkey
            )?;
            if p.mtu_limit.is_some() || p.rate_limit.is_some() {
                let limit = |v: Option<u8>, describe: fn(u8) -> String| match v {
                    Some(v) => format!("{v} ({})", describe(v)),
                    None => "none".to_string(),
                };
                outln!(
                    "  level limits: MTU {}  rate {}",
                    limit(p.mtu_limit, describe_mtu),
                    limit(p.rate_limit, describe_rate)
                )?;
            }
            let route: Vec<String> = p
                .hops
                .iter()
                .map(|h| format!("{}[{}->{}]", h.node, h.in_port, h.out_port))
                .collect();
            outln!("  route ({}): {}", p.routing, route.join(" "))?;
        }
        Err(n) => {
            outln!("{} -> {}: no path: {}", a.src, a.dst, n.reason)?;
            outln!("  routing: {}", r.routing())?;
            if let Some(c) = n.opensm_code {
                outln!("  (OpenSM logs ERR {c})")?;
            }
        }
    }
    outln!("  SM port: {}", sm_line(f))?;
    Ok(())
}
