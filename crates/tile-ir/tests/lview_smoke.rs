mod lview_support;
use lview_support::*;

#[test]
fn mojo_tile_example() {
    let src = "kernel @k(%src: tensor<f32, 2>, %dst: tensor<f32, 2>) {
  %one = constant 1 : i32
  %zero = constant 0 : i32
  %v = layout_view %src <(4,4):(4,1)> : lview<f32, (4,4):(4,1)>
  %t = lview_tile %v [2, 2] [%one, %zero] : lview<f32, (2,2):(4,1)>
  %x = lview_load %t : tile<2x2xf32>
  %w = layout_view %dst <(2,2):(2,1)> : lview<f32, (2,2):(2,1)>
  lview_store %x, %w
}";
    let a = tensor(
        &[4, 4],
        vec![
            1., 2., 3., 4., 2., 3., 4., 5., 5., 4., 3., 2., 1., 1., 1., 1.,
        ],
    );
    let out = run_text(src, vec![a, zeros(&[2, 2])]).unwrap();
    assert_eq!(values(&out, 1), [5., 4., 1., 1.]);
}
