//! `for k in pipelined(lo..hi, stages)`: the loop's own pipeline stages in
//! the IR (`stages(n)`), the same results as a plain loop, and bad stage
//! counts as errors at their span's text.

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::Scalar;

fn lower(src: &str) -> Result<tile_ir::Function, String> {
    let item: syn::ItemFn = syn::parse_str(src).expect("kernel parses");
    let lowered = tile_frontend::translate_kernel(proc_macro2::TokenStream::new(), &item)
        .map_err(|e| e.to_string())?;
    let (_, mut f) = lowered.into_iter().next().expect("one specialization");
    tile_codegen::driver::optimize(&mut f).expect("passes");
    Ok(f)
}

#[test]
fn a_pipelined_loop_keeps_its_stages_and_its_meaning() {
    let src = |iterated: &str| {
        format!(
            r#"
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>, n: i32) {{
    let v = partition_view(x, [4]);
    let mut acc = zeros::<f32>([4]);
    for j in {iterated} {{
        acc = acc + v.load(j);
    }}
    partition_view(out, [4]).store(acc, 0);
}}
"#
        )
    };
    let run = |f: &tile_ir::Function| {
        let mut args = vec![
            Arg::Tensor(HostTensor::from_vec(&[12], (0..12).map(|v| v as f32).collect()).unwrap()),
            Arg::Tensor(HostTensor::from_vec(&[4], vec![0.0f32; 4]).unwrap()),
            Arg::Scalar(Scalar::I32(3)),
        ];
        interp::run(f, [1, 1, 1], &mut args).unwrap();
        args
    };
    let plain = lower(&src("0..n")).unwrap();
    for iterated in ["pipelined(0..n, 3)", "pipelined((0..n).step_by(1), 3)"] {
        let staged = lower(&src(iterated)).unwrap();
        let text = staged.to_string();
        assert!(text.contains(" stages(3)"), "{text}");
        assert!(!plain.to_string().contains("stages("));
        assert_eq!(
            tile_ir::text::parse_function(&text).unwrap().to_string(),
            text
        );
        assert_eq!(format!("{:?}", run(&staged)), format!("{:?}", run(&plain)));
    }
}

#[test]
fn stage_counts_are_checked() {
    let error = |iterated: &str| {
        lower(&format!(
            "fn k(out: &mut Tensor<f32>, n: i32) {{ for j in {iterated} {{ }} }}"
        ))
        .unwrap_err()
    };
    assert_eq!(
        error("pipelined(0..n, 9)"),
        "a loop's stages are 1 to 8, found 9"
    );
    assert_eq!(
        error("pipelined(0..n, n)"),
        "the number of stages must be a compile-time integer (literals, const parameters and arithmetic on them), found i32"
    );
    assert_eq!(
        error("pipelined(0..n)"),
        "`pipelined(lo..hi, stages)` takes 2 argument(s), found 1"
    );
}
