//! The running kernel's own enum values, read from its BTF
//! (`/sys/kernel/btf/vmlinux`, `CONFIG_DEBUG_INFO_BTF`): an oracle for the
//! dcbnl attributes newer than the installed uapi headers (Debian bookworm
//! ships Linux 6.1's, without the selector trust table).
//!
//! Layout (`linux/btf.h`): a header `{ magic u16 = 0xeb9f, version u8,
//! flags u8, hdr_len u32, type_off u32, type_len u32, str_off u32, str_len
//! u32 }`, then the type section, each type `{ name_off u32, info u32,
//! size_or_type u32 }` (kind = info bits 24..28, vlen = bits 0..15) followed
//! by kind-specific data; enumerators are `{ name_off u32, val i32 }`
//! (`BTF_KIND_ENUM`, 6) or `{ name_off, lo32, hi32 }` (`BTF_KIND_ENUM64`,
//! 19). All in host byte order.

use std::collections::HashMap;

pub const VMLINUX: &str = "/sys/kernel/btf/vmlinux";

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn name(strings: &[u8], off: u32) -> Option<String> {
    let s = strings.get(off as usize..)?;
    let end = s.iter().position(|&c| c == 0)?;
    Some(String::from_utf8_lossy(&s[..end]).into_owned())
}

/// Every enumerator of every enum in `btf`, by name. `None` if the data is
/// not BTF or a type of unknown kind is met.
pub fn enumerators(btf: &[u8]) -> Option<HashMap<String, i64>> {
    if btf.get(..2)? != 0xeb9fu16.to_ne_bytes() {
        return None;
    }
    let hdr_len = u32_at(btf, 4)? as usize;
    let (type_off, type_len) = (u32_at(btf, 8)? as usize, u32_at(btf, 12)? as usize);
    let (str_off, str_len) = (u32_at(btf, 16)? as usize, u32_at(btf, 20)? as usize);
    let types = btf.get(hdr_len + type_off..hdr_len + type_off + type_len)?;
    let strings = btf.get(hdr_len + str_off..hdr_len + str_off + str_len)?;
    let mut out = HashMap::new();
    let mut at = 0;
    while at < types.len() {
        let info = u32_at(types, at + 4)?;
        let (kind, vlen, signed) = (
            (info >> 24) & 0x1f,
            (info & 0xffff) as usize,
            info >> 31 == 1,
        );
        at += 12;
        let extra = match kind {
            2 | 7..=12 | 16 | 18 => 0,
            1 | 14 | 17 => 4,
            3 => 12,
            4 | 5 | 15 => 12 * vlen,
            13 => 8 * vlen,
            6 => {
                for i in 0..vlen {
                    let e = at + 8 * i;
                    let raw = u32_at(types, e + 4)?;
                    let v = if signed {
                        i64::from(raw as i32)
                    } else {
                        i64::from(raw)
                    };
                    out.insert(name(strings, u32_at(types, e)?)?, v);
                }
                8 * vlen
            }
            19 => {
                for i in 0..vlen {
                    let e = at + 12 * i;
                    let v =
                        u64::from(u32_at(types, e + 4)?) | u64::from(u32_at(types, e + 8)?) << 32;
                    out.insert(name(strings, u32_at(types, e)?)?, v as i64);
                }
                12 * vlen
            }
            _ => return None,
        };
        at += extra;
    }
    Some(out)
}

/// The running kernel's enumerators, if it exposes BTF.
pub fn running_kernel() -> Option<HashMap<String, i64>> {
    enumerators(&std::fs::read(VMLINUX).ok()?)
}
