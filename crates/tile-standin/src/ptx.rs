//! What a CUDA driver reads from PTX text before it runs a kernel: the
//! target, each entry with its parameters and launch bounds, and the static
//! shared memory.

use crate::driver::Kernel;
use tile_abi::params::ptx_param_sizes;

/// A PTX module as the driver sees it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PtxModule {
    /// The `sm_XX` number of `.target`.
    pub(crate) sm: u32,
    /// The kernels (each counted with all the module's `.shared` bytes).
    pub(crate) kernels: Vec<Kernel>,
}

impl PtxModule {
    /// Reads `text`, or says what the JIT would reject.
    pub(crate) fn parse(text: &str) -> Result<PtxModule, String> {
        let sm = text
            .lines()
            .find_map(|l| l.trim().strip_prefix(".target "))
            .and_then(|t| t.split([',', ' ']).next())
            .and_then(|t| t.trim().strip_prefix("sm_"))
            .and_then(|n| n.trim_end_matches(['a', 'f']).parse().ok())
            .ok_or("the PTX has no `.target sm_XX`")?;
        let static_shared = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with(".extern "))
            .filter(|l| l.starts_with(".shared ") || l.contains(" .shared "))
            .map(shared_bytes)
            .sum::<Result<usize, String>>()?;
        let mut kernels = Vec::new();
        for (at, _) in text.match_indices(".entry ") {
            let rest = &text[at + ".entry ".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
                .collect();
            let params = ptx_param_sizes(text, &name)?;
            let close = rest
                .find(')')
                .ok_or("an entry's parameters are not closed")?;
            let body = rest[close..]
                .find('{')
                .map_or("", |b| &rest[close..close + b]);
            kernels.push(Kernel {
                required_block: bounds(body, ".reqntid")?,
                max_block: bounds(body, ".maxntid")?,
                max_threads: None,
                static_shared,
                dynamic_needed: 0,
                dynamic_limit: tile_abi::image::NVIDIA_STATIC_SHARED.saturating_sub(static_shared),
                kernarg: None,
                name,
                params,
            });
        }
        Ok(PtxModule { sm, kernels })
    }
}

/// The three extents of the directive `name` (`.reqntid 128, 1, 1`; missing
/// ones are 1) in an entry's performance directives.
fn bounds(directives: &str, name: &str) -> Result<Option<[u32; 3]>, String> {
    let Some(at) = directives.find(name) else {
        return Ok(None);
    };
    let line = directives[at + name.len()..].lines().next().unwrap_or("");
    let mut extents = [1u32; 3];
    for (i, part) in line.split(',').enumerate() {
        let value = part
            .trim()
            .parse()
            .map_err(|_| format!("unreadable `{name}{line}`"))?;
        *extents
            .get_mut(i)
            .ok_or_else(|| format!("`{name}{line}` has more than three extents"))? = value;
    }
    Ok(Some(extents))
}

/// The bytes of a `.shared .align 16 .b8 name[1024];` declaration, of any
/// element type (LLVM declares a shared scalar it demoted into the kernel
/// with its own type: `.shared .align 16 .f32 shared0_$_0;`).
fn shared_bytes(line: &str) -> Result<usize, String> {
    let unreadable = || format!("unreadable shared variable `{line}`");
    let element = line
        .split_whitespace()
        .find_map(|t| {
            let bits = [".b", ".u", ".s", ".f"]
                .iter()
                .find_map(|kind| t.strip_prefix(kind))?;
            bits.parse::<usize>().ok()
        })
        .ok_or_else(unreadable)?;
    let count = match (line.find('['), line.find(']')) {
        (Some(open), Some(close)) if open < close => line[open + 1..close]
            .trim()
            .parse::<usize>()
            .map_err(|_| unreadable())?,
        _ => 1,
    };
    Ok(element / 8 * count)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "\
.version 8.0
.target sm_80
.address_size 64

.shared .align 16 .b8 shared0[1024];
.shared .align 4 .b8 shared1[68];

.visible .entry softmax(
\t.param .u64 .ptr .align 1 softmax_param_0,
\t.param .u32 softmax_param_1,
\t.param .u64 softmax_param_2
)
.reqntid 128, 1, 1
{
\tret;
}
";

    #[test]
    fn entries_bounds_and_shared_memory_are_read() {
        let module = PtxModule::parse(PTX).unwrap();
        assert_eq!(module.sm, 80);
        assert_eq!(
            module.kernels,
            [Kernel {
                name: "softmax".into(),
                params: vec![8, 4, 8],
                required_block: Some([128, 1, 1]),
                max_block: None,
                max_threads: None,
                static_shared: 1092,
                dynamic_needed: 0,
                dynamic_limit: 48 * 1024 - 1092,
                kernarg: None,
            }]
        );
        let demoted = PTX.replace(
            "{\n\tret;",
            "{\n\t.shared .align 16 .f64 shared0_$_0;\n\t.shared .align 4 .s16 s[3];\n\tret;",
        );
        let module = PtxModule::parse(&demoted).unwrap();
        assert_eq!(module.kernels[0].static_shared, 1092 + 8 + 6);
        let no_target = PTX.replace(".target sm_80\n", "");
        assert_eq!(
            PtxModule::parse(&no_target).unwrap_err(),
            "the PTX has no `.target sm_XX`"
        );
    }
}
