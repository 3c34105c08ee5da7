//! Keeps the descriptor part of docs/strided-views.md true: every example there is
//! rendered here from the code and must appear in the doc verbatim.

use tile_tensor::descriptor::{DescriptorError, StrideOrder, TensorDescriptor};

use StrideOrder::{Bypass, ColumnMajor, RowMajor};

fn doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/strided-views.md");
    std::fs::read_to_string(path).expect("docs/strided-views.md exists")
}

/// The block the doc shows for `expr`: the descriptor with its sizes, or the error.
fn block(expr: &str, result: Result<TensorDescriptor, DescriptorError>) -> String {
    match result {
        Ok(d) => format!(
            "```text\n{expr}\n=> {d}; element_size {}, element_space_size {}\n```\n",
            d.element_size(),
            d.element_space_size()
        ),
        Err(e) => format!("```text\n{expr}\n=> error: {e}\n```\n"),
    }
}

fn blocks() -> Vec<String> {
    let with = TensorDescriptor::with_strides;
    vec![
        block(
            "packed(&[4, 3], RowMajor)",
            TensorDescriptor::packed(&[4, 3], RowMajor),
        ),
        block(
            "packed(&[2, 4, 3], RowMajor)",
            TensorDescriptor::packed(&[2, 4, 3], RowMajor),
        ),
        block(
            "packed(&[4, 3], ColumnMajor)",
            TensorDescriptor::packed(&[4, 3], ColumnMajor),
        ),
        block(
            "packed(&[2, 4, 3], ColumnMajor)",
            TensorDescriptor::packed(&[2, 4, 3], ColumnMajor),
        ),
        block(
            "with_strides(&[4, 3], &[3, 1], RowMajor)",
            with(&[4, 3], &[3, 1], RowMajor),
        ),
        block(
            "with_strides(&[4, 3], &[5, 1], RowMajor)",
            with(&[4, 3], &[5, 1], RowMajor),
        ),
        block(
            "with_strides(&[4, 3], &[0, 1], RowMajor)",
            with(&[4, 3], &[0, 1], RowMajor),
        ),
        block(
            "with_strides(&[4, 3], &[-1, 2], RowMajor)",
            with(&[4, 3], &[-1, 2], RowMajor),
        ),
        block(
            "with_strides(&[4, 3], &[0, 6], ColumnMajor)",
            with(&[4, 3], &[0, 6], ColumnMajor),
        ),
        block(
            "with_strides(&[2, 4, 3], &[20, 0, 1], RowMajor)",
            with(&[2, 4, 3], &[20, 0, 1], RowMajor),
        ),
        block(
            "with_strides(&[4, 3], &[0, 1], Bypass)",
            with(&[4, 3], &[0, 1], Bypass),
        ),
        block(
            "packed(&[0, 3], RowMajor)",
            TensorDescriptor::packed(&[0, 3], RowMajor),
        ),
        block(
            "packed(&[], RowMajor)",
            TensorDescriptor::packed(&[], RowMajor),
        ),
        block(
            "with_strides(&[4, 3], &[3], RowMajor)",
            with(&[4, 3], &[3], RowMajor),
        ),
        block(
            "packed(&[4, 3], Bypass)",
            TensorDescriptor::packed(&[4, 3], Bypass),
        ),
        block(
            "with_strides(&[2, 4, 3], &[0, 3, 1], RowMajor)",
            with(&[2, 4, 3], &[0, 3, 1], RowMajor),
        ),
        block(
            "with_strides(&[4, 3], &[3, -1], Bypass)",
            with(&[4, 3], &[3, -1], Bypass),
        ),
        block(
            "with_strides(&[4, 3], &[2, 1], RowMajor)",
            with(&[4, 3], &[2, 1], RowMajor),
        ),
        block(
            "with_strides(&[4, 3], &[3, 1], ColumnMajor)",
            with(&[4, 3], &[3, 1], ColumnMajor),
        ),
        block(
            "with_strides(&[2, 2, 4, 3], &[20, 12, 3, 1], RowMajor)",
            with(&[2, 2, 4, 3], &[20, 12, 3, 1], RowMajor),
        ),
        block(
            "with_strides(&[2, 4, 3], &[10, 3, 1], RowMajor)",
            with(&[2, 4, 3], &[10, 3, 1], RowMajor),
        ),
        block(
            "packed(&[usize::MAX, 2], RowMajor)",
            TensorDescriptor::packed(&[usize::MAX, 2], RowMajor),
        ),
    ]
}

#[test]
fn every_example_in_the_doc_matches_the_code() {
    let doc = doc();
    let missing: Vec<String> = blocks()
        .into_iter()
        .filter(|b| !doc.contains(b.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/strided-views.md lacks or misstates these blocks:\n\n{}",
        missing.join("\n")
    );
}

#[test]
fn offsets_in_the_doc() {
    let d = TensorDescriptor::with_strides(&[4, 3], &[5, 1], RowMajor).unwrap();
    let text = format!(
        "```text\nwith_strides(&[4, 3], &[5, 1], RowMajor).offset(&[2, 1])\n=> {}\n.offset(&[4, 0])\n=> error: {}\n```\n",
        d.offset(&[2, 1]).unwrap(),
        d.offset(&[4, 0]).unwrap_err()
    );
    assert!(
        doc().contains(&text),
        "docs/strided-views.md lacks:\n{text}"
    );
}
