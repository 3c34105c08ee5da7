//! `tcgen05.mma … kind::mxf8f6f4.block_scale` as the model has it: the
//! descriptor fields CUTLASS's `InstrDescriptorBlockScaled` names, the
//! scale image of CuTe's `tmem_sf_frg`, and the product's arithmetic.

use tile_hw::tcgen05::{
    block_mma_scaled, read_scales, scale_cell, scale_columns, Qualifier, Tcgen05Kind, M,
};
use tile_hw::wgmma::Major;
use tile_ir::DType;

#[test]
fn scaled_descriptors_carry_the_scale_format_and_bytes() {
    let kind = Tcgen05Kind::new(DType::F8E4M3, 128, Major::K).unwrap();
    // Bit 23 UE8M0, bits 29–30 A's byte, bits 4–5 B's byte, no D format;
    // N >> 3 at 17, M >> 4 at 24 as in the dense form.
    assert_eq!(
        kind.scaled_descriptor(0),
        (1 << 23) | (16 << 17) | (8 << 24)
    );
    assert_eq!(
        kind.scaled_descriptor(3),
        (1 << 23) | (16 << 17) | (8 << 24) | (3 << 4) | (3 << 29)
    );
    let e5m2 = Tcgen05Kind::new(DType::F8E5M2, 64, Major::Mn).unwrap();
    let bits = e5m2.scaled_descriptor(2);
    assert_eq!(bits & (0x3f << 7), (1 << 7) | (1 << 10));
    assert_eq!(bits & (1 << 16), 1 << 16);
    assert_eq!(
        Tcgen05Kind::from_scaled_descriptor(bits),
        Ok((e5m2, [2, 2]))
    );
    // The bytes may differ between the sides.
    let mixed = kind.scaled_descriptor(0) | (1 << 29) | (2 << 4);
    assert_eq!(
        Tcgen05Kind::from_scaled_descriptor(mixed),
        Ok((kind, [1, 2]))
    );
    // UE4M3 scales (bit 23 clear) and K 96 (bit 31) are not modelled.
    for bad in [bits & !(1 << 23), bits | 1 << 31] {
        let err = Tcgen05Kind::from_scaled_descriptor(bad).unwrap_err();
        assert!(err.contains("not a modelled form"), "{err}");
    }
    assert_eq!(Qualifier::Mxf8f6f4.ptx(), "mxf8f6f4.block_scale");
    assert!(kind.takes_block_scales());
    assert!(!Tcgen05Kind::new(DType::F16, 64, Major::Mn)
        .unwrap()
        .takes_block_scales());
}

#[test]
fn an_image_holds_row_r_in_column_r_over_32_of_every_quarter() {
    assert_eq!(scale_columns(128), 4);
    assert_eq!(scale_columns(16), 1);
    assert_eq!(scale_columns(256), 8);
    assert_eq!(scale_cell(0), (0, 0));
    assert_eq!(scale_cell(33), (1, 1));
    assert_eq!(scale_cell(127), (31, 3));
    // Cell (lane, column) holds row `32·column + lane % 32` in byte 2.
    let image = |lane: usize, column: usize| -> Result<u32, String> {
        let row = 32 * (column - 10) + lane % 32;
        Ok((row as u32) << 16 | 0xee)
    };
    let scales = read_scales((M, 10, 2), image).unwrap().unwrap();
    assert_eq!(scales, (0..M as u32).collect::<Vec<_>>());
    // A quarter whose copy differs is an error naming the lanes.
    let broken = |lane: usize, column: usize| -> Result<u32, String> {
        let row = 32 * (column - 10) + lane % 32;
        Ok(((row + usize::from(lane == 69 && column == 11)) as u32) << 16)
    };
    let err = read_scales((M, 10, 2), broken).unwrap().unwrap_err();
    assert!(
        err.contains("row 37 is 0x25 in lane 5 and 0x26 in lane 69"),
        "{err}"
    );
}

#[test]
fn each_product_takes_its_rows_and_columns_scales() {
    let kind = Tcgen05Kind::new(DType::F8E4M3, 16, Major::K).unwrap();
    let a: Vec<f32> = (0..M * 32).map(|e| (e % 5) as f32 - 2.0).collect();
    let b: Vec<f32> = (0..32 * 16).map(|e| (e % 3) as f32 - 1.0).collect();
    // Row `r` scaled by 2^(r % 3), column `c` by 2^-(c % 2); 0xFF is NaN.
    let sa: Vec<u32> = (0..M as u32).map(|r| 127 + r % 3).collect();
    let mut sb: Vec<u32> = (0..16).map(|c| 127 - c % 2).collect();
    let mut d = vec![1.0f32; M * 16];
    block_mma_scaled(kind, (&a, &b), [&sa, &sb], &mut d, true).unwrap();
    let plain = |row: usize, col: usize| -> f32 {
        (0..32).map(|k| a[row * 32 + k] * b[k * 16 + col]).sum()
    };
    for (row, col) in [(0, 0), (4, 1), (127, 15), (65, 8)] {
        let scale = 2f32.powi((row % 3) as i32 - (col % 2) as i32);
        assert_eq!(
            d[row * 16 + col],
            1.0 + scale * plain(row, col),
            "({row}, {col})"
        );
    }
    sb[3] = 0xff;
    block_mma_scaled(kind, (&a, &b), [&sa, &sb], &mut d, false).unwrap();
    assert!(d[3].is_nan() && !d[2].is_nan());
    let err = block_mma_scaled(kind, (&a, &b), [&sa, &sb[..8]], &mut d, false).unwrap_err();
    assert!(err.contains("128 and 8 scales"), "{err}");
    let f16 = Tcgen05Kind::new(DType::F16, 16, Major::K).unwrap();
    assert!(block_mma_scaled(f16, (&a, &b), [&sa, &sb], &mut d, false).is_err());
}
