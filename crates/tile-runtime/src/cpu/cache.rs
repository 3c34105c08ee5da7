//! When compiled host code streams its stores past the caches.
//!
//! Host code stores a tile with non-temporal stores (`movnt*` on x86-64:
//! full cache lines go straight to memory, without first reading each line
//! for ownership) when the output tensor is at least the *streaming
//! threshold* in bytes and the kernel never reads that tensor. The runtime
//! passes the threshold in the last packet slot; by default it is three
//! quarters of the last-level cache, the point from which an output would
//! evict most of what the cache holds anyway (glibc's `memcpy` streams from
//! a threshold of the same kind, `x86_non_temporal_threshold`).

use std::sync::OnceLock;

/// The last-level cache assumed where the system does not say: 8 MiB.
const FALLBACK_LAST_LEVEL: u64 = 8 << 20;

/// The default streaming threshold of this machine, in bytes: three
/// quarters of its last-level cache (read once from
/// `/sys/devices/system/cpu/cpu0/cache`, else 8 MiB assumed).
pub fn default_stream_threshold() -> u64 {
    static THRESHOLD: OnceLock<u64> = OnceLock::new();
    *THRESHOLD.get_or_init(|| last_level_cache().unwrap_or(FALLBACK_LAST_LEVEL) / 4 * 3)
}

/// The size of the highest-level cache of CPU 0 that Linux describes.
fn last_level_cache() -> Option<u64> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(|entry| {
        let path = entry.ok()?.path();
        let level: u32 = std::fs::read_to_string(path.join("level"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let size = parse_size(&std::fs::read_to_string(path.join("size")).ok()?)?;
        Some((level, size))
    })
    .max()
    .map(|(_, size)| size)
}

/// A cache size as sysfs writes it: `32768K`, `8M`, or bytes.
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = match text.strip_suffix('K') {
        Some(d) => (d, 1 << 10),
        None => match text.strip_suffix('M') {
            Some(d) => (d, 1 << 20),
            None => (text, 1),
        },
    };
    digits.parse::<u64>().ok()?.checked_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_as_sysfs_writes_them() {
        assert_eq!(parse_size("32K\n"), Some(32 << 10));
        assert_eq!(parse_size("8192K"), Some(8 << 20));
        assert_eq!(parse_size("16M"), Some(16 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("big"), None);
    }

    #[test]
    fn the_default_threshold_is_positive() {
        assert!(default_stream_threshold() > 0);
    }
}
