//! Tensor arrays (`tensors<T, R>` parameters, `get_tensor`, `num_tensors`):
//! the grouped matmul sample against a plain matmul per problem, the text
//! form, the typing rules, the launch checks per element and the fault of an
//! index outside the array.

use tile_ir::interp::{run, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::verify::verify;
use tile_ir::{samples, DType};

/// A `rows × cols` f32 matrix of small integers (exact under every `dot`
/// precision), different per `seed`.
fn matrix(rows: usize, cols: usize, seed: usize) -> Vec<f32> {
    (0..rows * cols)
        .map(|i| ((i * 7 + seed * 13) % 7) as f32 - 3.0)
        .collect()
}

fn tensor(rows: usize, cols: usize, values: Vec<f32>) -> HostTensor {
    HostTensor::from_vec(&[rows, cols], values).unwrap()
}

fn reference(a: &[f32], b: &[f32], (m, n, k): (usize, usize, usize)) -> Vec<f32> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
        }
    }
    c
}

#[test]
fn a_grouped_matmul_multiplies_each_problem_at_its_own_size() {
    let problems = [(20, 9, 12), (5, 33, 30), (1, 1, 1), (16, 16, 0)];
    let func = samples::grouped_matmul(16, 16, 8, DType::F32).unwrap();
    verify(&func).unwrap();
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for (g, &(m, n, k)) in problems.iter().enumerate() {
        a.push(tensor(m, k, matrix(m, k, g)));
        b.push(tensor(k, n, matrix(k, n, g + 5)));
        c.push(tensor(m, n, vec![f32::NAN; m * n]));
    }
    let mut args = vec![Arg::Tensors(a), Arg::Tensors(b), Arg::Tensors(c)];
    run(&func, [2, 3, problems.len() as u32], &mut args).unwrap();
    let Arg::Tensors(c) = &args[2] else {
        panic!("the results are a tensor array")
    };
    for (g, &(m, n, k)) in problems.iter().enumerate() {
        let want = reference(&matrix(m, k, g), &matrix(k, n, g + 5), (m, n, k));
        assert_eq!(c[g].to_vec::<f32>().unwrap(), want, "problem {g}");
    }
}

const COUNT: &str = "\
kernel @count(%xs: tensors<f32, 1, aligned>, %g: i32, %out: tensor<i32, 1>) {
  %0 = num_tensors %xs : i32
  %1 = get_tensor %xs[%g] : tensor<f32, 1, aligned>
  %2 = dim %1 axis 0 : i32
  %3 = partition_view %out [2] : view<i32, [2]>
  %4 = iota : tile<2xi32>
  %5 = constant 0 : i32
  %6 = broadcast %0 to [2] : tile<2xi32>
  %7 = broadcast %2 to [2] : tile<2xi32>
  %8 = broadcast %5 to [2] : tile<2xi32>
  %9 = cmp eq %4, %8 : tile<2xbool>
  %10 = select %9, %6, %7 : tile<2xi32>
  store %10, %3[%5]
}";

/// Runs `COUNT` on tensors of `lengths` at index `g`; `out` or the error.
fn count(lengths: &[usize], g: i32) -> Result<Vec<i32>, String> {
    let func = parse_function(COUNT).unwrap();
    let xs = lengths
        .iter()
        .map(|&n| HostTensor::from_vec(&[n], vec![0f32; n]).unwrap())
        .collect();
    let mut args = vec![
        Arg::Tensors(xs),
        Arg::Scalar(tile_ir::Scalar::I32(g)),
        Arg::Tensor(HostTensor::from_vec(&[2], vec![0i32; 2]).unwrap()),
    ];
    run(&func, [1, 1, 1], &mut args).map_err(|e| e.to_string())?;
    let Arg::Tensor(out) = &args[2] else {
        panic!("out is a tensor")
    };
    Ok(out.to_vec::<i32>().unwrap())
}

#[test]
fn the_text_form_round_trips_and_the_ops_read_the_array() {
    let func = parse_function(COUNT).unwrap();
    verify(&func).unwrap();
    assert_eq!(func.to_string(), COUNT);
    assert_eq!(count(&[4, 8, 12], 2), Ok(vec![3, 12]));
    assert_eq!(count(&[4], 0), Ok(vec![1, 4]));
}

#[test]
fn an_index_outside_the_array_is_a_fault() {
    let err = count(&[4, 8, 12], 3).unwrap_err();
    assert!(
        err.contains("tensor index 3 is outside the tensor array of 3 tensors"),
        "{err}"
    );
    let err = count(&[4], -1).unwrap_err();
    assert!(
        err.contains("tensor index -1 is outside the tensor array of 1 tensors"),
        "{err}"
    );
    let err = count(&[], 0).unwrap_err();
    assert!(
        err.contains("outside the tensor array of 0 tensors"),
        "{err}"
    );
}

#[test]
fn every_element_is_checked_at_launch() {
    // Element 1 breaks the alignment promise: 6 f32 rows are 24 bytes.
    let err = count(&[4, 6], 0).unwrap_err();
    assert!(
        err.contains("tensor 1: tensor<f32, 1> of shape [6]")
            && err.contains("its rows are 6 elements (24 bytes), not a multiple of 16 bytes"),
        "{err}"
    );
    let func = parse_function(COUNT).unwrap();
    let mut args = vec![
        Arg::Tensors(vec![HostTensor::from_vec(&[4], vec![0i32; 4]).unwrap()]),
        Arg::Scalar(tile_ir::Scalar::I32(0)),
        Arg::Tensor(HostTensor::from_vec(&[2], vec![0i32; 2]).unwrap()),
    ];
    let err = run(&func, [1, 1, 1], &mut args).unwrap_err().to_string();
    assert!(err.contains("tensors<f32, 1, aligned>"), "{err}");
}

#[test]
fn the_rules_name_what_is_wrong() {
    let wrong = |body: &str| {
        let text =
            format!("kernel @k(%xs: tensors<f32, 2>, %x: tensor<f32, 2>, %f: f32) {{\n{body}\n}}");
        parse_function(&text)
            .map_err(|e| e.to_string())
            .and_then(|f| verify(&f).map_err(|e| e.to_string()))
            .unwrap_err()
    };
    let err = wrong("  %0 = get_tensor %x[%f] : tensor<f32, 2>");
    assert!(
        err.contains("the operand must be a tensor array, found tensor<f32, 2>"),
        "{err}"
    );
    let err = wrong("  %0 = get_tensor %xs[%f] : tensor<f32, 2>");
    assert!(
        err.contains("the index must be an integer scalar, found f32"),
        "{err}"
    );
    let err = wrong("  %0 = num_tensors %x : i32");
    assert!(
        err.contains("the operand must be a tensor array, found tensor<f32, 2>"),
        "{err}"
    );
}
