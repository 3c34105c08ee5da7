//! Swizzled layout views (CuTe's `ComposedLayout` of a swizzle, an offset
//! and a layout) in text kernels, against `Swizzle::apply` on dense
//! offsets: the element at `c` is at `swizzle(base + layout(c))`, so the
//! swizzle commutes with `tile`; stores scatter through it; the verifier
//! and the parser name what is wrong.

mod lview_support;
use lview_support::*;

use tile_ir::layout::Swizzle;

fn sw(text: &str) -> Swizzle {
    text.parse().unwrap()
}

#[test]
fn a_swizzled_view_reads_the_swizzled_offsets() {
    for swizzle in ["Sw<2,0,3>", "Sw<1,2,3>", "Sw<2,3,-3>"] {
        let s = sw(swizzle);
        let ops =
            format!("  %r = lview_swizzle %v {swizzle} : lview<f32, {swizzle} o (8,8):(8,1)>");
        let got = offsets_read(512, "(8,8):(8,1)", &ops, &[8, 8]).unwrap();
        assert_eq!(
            got,
            dense(&[8, 8], |i| s.apply((8 * i[0] + i[1]) as i64) as usize),
            "{swizzle}"
        );
    }
}

#[test]
fn the_swizzle_applies_to_the_base_and_commutes_with_tile() {
    // Tile (1, 1) of 4×4 starts at offset 36: its element (r, c) is at
    // sw(36 + 8r + c), whether the swizzle comes before or after the tile.
    let s = sw("Sw<2,0,3>");
    let want = dense(&[4, 4], |i| s.apply((36 + 8 * i[0] + i[1]) as i64) as usize);
    let before = "  %s = lview_swizzle %v Sw<2,0,3> : lview<f32, Sw<2,0,3> o (8,8):(8,1)>
  %r = lview_tile %s [4, 4] [%c1, %c1] : lview<f32, Sw<2,0,3> o (4,4):(8,1)>";
    let after = "  %t = lview_tile %v [4, 4] [%c1, %c1] : lview<f32, (4,4):(8,1)>
  %r = lview_swizzle %t Sw<2,0,3> : lview<f32, Sw<2,0,3> o (4,4):(8,1)>";
    for ops in [before, after] {
        assert_eq!(
            offsets_read(64, "(8,8):(8,1)", ops, &[4, 4]).unwrap(),
            want,
            "{ops}"
        );
    }
}

#[test]
fn a_store_scatters_through_the_swizzle() {
    let src = "kernel @k(%src: tensor<f32, 1>, %dst: tensor<f32, 1>) {
  %v = layout_view %src <32:1> : lview<f32, 32:1>
  %x = lview_load %v : tile<32xf32>
  %w = layout_view %dst <32:1> : lview<f32, 32:1>
  %s = lview_swizzle %w Sw<2,1,2> : lview<f32, Sw<2,1,2> o 32:1>
  lview_store %x, %s
}";
    let out = run_text(src, vec![iota(&[32]), zeros(&[32])]).unwrap();
    let s = sw("Sw<2,1,2>");
    let mut want = vec![0.0f32; 32];
    for i in 0..32 {
        want[s.apply(i) as usize] = i as f32;
    }
    assert_eq!(values(&out, 1), want);
}

#[test]
fn an_offset_swizzled_outside_fails_unmasked_and_pads_masked() {
    // Sw<1,3,-1> moves bit 3 to bit 4: offset 8 of a 16-element tensor
    // becomes 24.
    let kernel = |load: &str| {
        format!(
            "kernel @k(%src: tensor<f32, 1>, %dst: tensor<f32, 1>) {{
  %v = layout_view %src <16:1> : lview<f32, 16:1>
  %s = lview_swizzle %v Sw<1,3,-1> : lview<f32, Sw<1,3,-1> o 16:1>
  %x = {load} : tile<16xf32>
  %w = layout_view %dst <16:1> : lview<f32, 16:1>
  lview_store %x, %w
}}"
        )
    };
    let err = run_text(&kernel("lview_load %s"), vec![iota(&[16]), zeros(&[16])]).unwrap_err();
    assert!(
        err.to_string().contains("element [8] of the layout view 16:1 (base 0) is at offset 24, outside the tensor's element space [0, 16)"),
        "{err}"
    );
    let out = run_text(
        &kernel("lview_load_masked %s pad(-1.0)"),
        vec![iota(&[16]), zeros(&[16])],
    )
    .unwrap();
    let s = sw("Sw<1,3,-1>");
    let want: Vec<f32> = (0..16)
        .map(|i| match s.apply(i) {
            o if o < 16 => o as f32,
            _ => -1.0,
        })
        .collect();
    assert_eq!(values(&out, 1), want);
}

#[test]
fn a_view_takes_one_swizzle_of_valid_bits() {
    let src = "kernel @k(%t: tensor<f32, 1>) {
  %v = layout_view %t <16:1> : lview<f32, 16:1>
  %s = lview_swizzle %v Sw<1,0,1> : lview<f32, Sw<1,0,1> o 16:1>
  %r = lview_swizzle %s Sw<1,0,2> : lview<f32, Sw<1,0,2> o 16:1>
}";
    let func = tile_ir::text::parse_function(src).unwrap();
    let err = tile_ir::verify::verify(&func).unwrap_err().to_string();
    assert!(
        err.contains("a view takes one swizzle, and this one has Sw<1,0,1> already"),
        "{err}"
    );
    let bad = "kernel @k(%t: tensor<f32, 1>) {
  %v = layout_view %t <16:1> : lview<f32, 16:1>
  %s = lview_swizzle %v Sw<3,0,2> : lview<f32, Sw<3,0,2> o 16:1>
}";
    let err = tile_ir::text::parse_function(bad).unwrap_err().to_string();
    assert!(
        err.contains("bad swizzle `Sw<3,0,2>`") && err.contains("|shift| must be at least bits"),
        "{err}"
    );
}
