//! `lossless decode FILE [--json]`: every frame of a capture, decoded.

use std::io::{self, Read, Write};
use std::path::PathBuf;

use lossless::capture;

use crate::error::CliError;

mod names;
mod record;
mod text;
mod tunnel;

pub const LONG_ABOUT: &str = "\
Decode every frame of a pcap or pcapng capture: LLDP (mandatory and optional TLVs), \
CEE DCBX (Control, PG, PFC, APP, with every flag), IEEE 802.1Qaz DCBX (ETS \
Configuration and Recommendation, PFC Configuration, Application Priority with DSCP \
and port entries named), PFC and 802.3x PAUSE frames, and the PFC relay's tunnels \
(draft-he-rtgwg-wan-pfc-00: SRv6 with or without SRH, VXLAN over IPv4 or IPv6, SR-MPLS) \
with the frame inside. CIN DCBX (the pre-CEE layout) is reported as such; other \
organizationally specific TLVs and unknown TLVs are shown in hex; other Ethertypes are \
listed as \"other\". FILE `-` is standard input, decoded frame by frame as it arrives.

A malformed frame is reported with the field, the offset (from the frame's first \
byte) and the reason, and decoding goes on with the next frame. A file that is not \
a capture, or is cut short, is an error (exit status 2) after the frames before the \
damage have been printed.";

pub const AFTER_HELP: &str = "\
Examples:
  lossless decode lldpad.pcapng
  lossless decode lldpad.pcapng --json | jq 'select(.type == \"lldp\") | .dcbx.control'
  lossless decode lldpad.pcapng --json | jq -c 'select(.ieee_dcbx.pfc) | [.src, .ieee_dcbx.pfc.enabled]'
  tcpdump -i eth0 -w dcbx.pcap ether proto 0x88cc or ether proto 0x8808
  lossless decode dcbx.pcap
  tcpdump -i eth0 -w - ether proto 0x88cc | lossless decode -
  lossless decode wan.pcap --json | jq -c 'select(.inner.type == \"pfc\") | [.tunnel.kind, .inner.priorities]'

The JSON fields are documented in docs/decode.md.";

/// Arguments of `lossless decode`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Capture to decode, pcap or pcapng (told apart by their magic numbers); `-` reads
    /// standard input, frame by frame as it arrives.
    ///
    /// Example: tcpdump -i eth0 -w - 'ether proto 0x88cc' | lossless decode -
    #[arg(value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub file: PathBuf,

    /// One JSON object per frame, one per line (JSON Lines), instead of text.
    ///
    /// Example: lossless decode f.pcap --json | jq .dcbx.pfc.priorities
    #[arg(short = 'j', long)]
    pub json: bool,

    /// UDP destination port of VXLAN, as the relay's `tunnel.port` (IANA: 4789; Linux's
    /// vxlan device without dstport: 8472).
    #[arg(long, value_name = "PORT", default_value_t = 4789)]
    pub vxlan_port: u16,

    /// SR-MPLS pseudowires carry no control word (the relay's `control_word = false`);
    /// nothing on the wire says, so both ends and the decoder must agree.
    #[arg(long)]
    pub no_control_word: bool,
}

impl Args {
    fn tunnel_options(&self) -> lossless_wire::tunnel::ParseOptions {
        lossless_wire::tunnel::ParseOptions {
            vxlan_port: self.vxlan_port,
            control_word: !self.no_control_word,
        }
    }
}

pub fn run(args: Args) -> Result<(), CliError> {
    if args.file.as_os_str() == "-" {
        // A live writer's frames are printed as they come: flushed one by one.
        return decode_from(io::stdin().lock(), "standard input", "input", &args, true);
    }
    let name = args.file.display().to_string();
    let file = std::fs::File::open(&args.file)
        .map_err(|e| CliError::input(&name, format!("cannot read: {e}")))?;
    decode_from(file, &name, "file", &args, false)
}

/// Decodes every frame of `src` to stdout; `name` is what errors call it.
fn decode_from(
    src: impl Read,
    name: &str,
    noun: &'static str,
    args: &Args,
    live: bool,
) -> Result<(), CliError> {
    let frames = capture::Capture::open(src, noun).map_err(|e| CliError::input(name, e))?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let result = decode_all(frames, args, live, &mut out);
    let flushed = out.flush();
    match result {
        Ok(Ok(())) => {}
        Ok(Err((e, decoded))) => {
            return Err(CliError::input(
                name,
                format!("{e} ({decoded} frame(s) before it decoded)"),
            ))
        }
        Err(e) => return Err(crate::out::failed("writing output", e)),
    }
    flushed.map_err(|e| crate::out::failed("writing output", e))
}

/// Writes every frame, flushing each when `live`; the outer error is a failed
/// write, the inner one the capture breaking off after some number of frames.
fn decode_all(
    frames: capture::Capture<impl Read>,
    args: &Args,
    live: bool,
    out: &mut impl Write,
) -> io::Result<Result<(), (capture::CaptureError, usize)>> {
    let mut buf = String::new();
    let opts = args.tunnel_options();
    for (i, packet) in frames.enumerate() {
        let packet = match packet {
            Ok(p) => p,
            Err(e) => return Ok(Err((e, i))),
        };
        let decoded = record::decode(i + 1, &packet, &opts);
        if args.json {
            let rec = record::Record::new(&decoded);
            serde_json::to_writer(&mut *out, &rec).map_err(io::Error::from)?;
            out.write_all(b"\n")?;
        } else {
            buf.clear();
            text::render(&decoded, &mut buf);
            out.write_all(buf.as_bytes())?;
        }
        if live {
            out.flush()?;
        }
    }
    Ok(Ok(()))
}
