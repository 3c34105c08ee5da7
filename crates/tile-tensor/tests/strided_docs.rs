//! Keeps docs/strided-views.md true: every worked view example there is rendered here
//! from the code and must appear in the doc verbatim.

mod strided_dense;

use strided_dense::arange;
use tile_tensor::strided::{Index, StridedView, StridedViewError};

fn doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/strided-views.md");
    std::fs::read_to_string(path).expect("docs/strided-views.md exists")
}

/// The block the doc shows for `expr`: the expression, the view and its element map.
fn block(expr: &str, result: Result<StridedView, StridedViewError>) -> String {
    match result {
        Ok(v) => format!("```text\n{expr}\n=> {v}\n{}```\n", v.element_map()),
        Err(e) => format!("```text\n{expr}\n=> error: {e}\n```\n"),
    }
}

fn blocks() -> Vec<String> {
    let s = |start: Option<isize>, stop: Option<isize>, step: Option<isize>| Index::Slice {
        start,
        stop,
        step,
    };
    let split = arange(&[5, 2]).split_every(2, 0).unwrap();
    vec![
        block("arange(2, 3)", Ok(arange(&[2, 3]))),
        block("arange(4).pad([(1, 2)])", arange(&[4]).pad(&[(1, 2)])),
        block(
            "arange(2, 2).pad([(1, 1), (1, 1)])",
            arange(&[2, 2]).pad(&[(1, 1), (1, 1)]),
        ),
        block(
            "arange(3, 4).shrink([(1, 3), (1, 4)])",
            arange(&[3, 4]).shrink(&[(1, 3), (1, 4)]),
        ),
        block(
            "arange(2, 3).permute([1, 0])",
            arange(&[2, 3]).permute(&[1, 0]),
        ),
        block("arange(2, 3).flip([1])", arange(&[2, 3]).flip(&[1])),
        block(
            "arange(3, 1).expand([3, 4])",
            arange(&[3, 1]).expand(&[3, 4]),
        ),
        block(
            "arange(3, 4).stride([2, -1])",
            arange(&[3, 4]).stride(&[2, -1]),
        ),
        block("arange(12).reshape([3, 4])", arange(&[12]).reshape(&[3, 4])),
        block(
            "arange(2, 3, 4).reshape([6, 4])",
            arange(&[2, 3, 4]).reshape(&[6, 4]),
        ),
        block(
            "arange(4).pad([(4, 4)]).reshape([3, 4])",
            arange(&[4]).pad(&[(4, 4)]).unwrap().reshape(&[3, 4]),
        ),
        block(
            "arange(2, 3).pad([(1, 1), (0, 0)]).reshape([12])",
            arange(&[2, 3])
                .pad(&[(1, 1), (0, 0)])
                .unwrap()
                .reshape(&[12]),
        ),
        block(
            "arange(2, 3).permute([1, 0]).reshape([6])",
            arange(&[2, 3]).permute(&[1, 0]).unwrap().reshape(&[6]),
        ),
        block(
            "arange(2, 2).pad([(0, 0), (1, 1)]).reshape([8])",
            arange(&[2, 2])
                .pad(&[(0, 0), (1, 1)])
                .unwrap()
                .reshape(&[8]),
        ),
        block(
            "arange(4).pad([(1, 1)]).reshape([3, 2])",
            arange(&[4]).pad(&[(1, 1)]).unwrap().reshape(&[3, 2]),
        ),
        block(
            "arange(3, 4)[1:, ::-2]",
            arange(&[3, 4]).get(&[s(Some(1), None, None), s(None, None, Some(-2))]),
        ),
        block(
            "arange(3, 4)[-1, None]",
            arange(&[3, 4]).get(&[Index::At(-1), Index::NewAxis]),
        ),
        block(
            "arange(3, 4)[..., 1]",
            arange(&[3, 4]).get(&[Index::Ellipsis, Index::At(1)]),
        ),
        block("arange(3).unsqueeze(0)", arange(&[3]).unsqueeze(0)),
        block(
            "arange(1, 3, 1).squeeze(None)",
            arange(&[1, 3, 1]).squeeze(None),
        ),
        block(
            "arange(2, 3).transpose(0, 1)",
            arange(&[2, 3]).transpose(0, 1),
        ),
        block(
            "arange(2, 2, 2).flatten(1, -1)",
            arange(&[2, 2, 2]).flatten(1, -1),
        ),
        block(
            "arange(6).unflatten(0, [2, -1])",
            arange(&[6]).unflatten(0, &[2, -1]),
        ),
        block(
            "arange(1, 3).repeat([2, 1])",
            arange(&[1, 3]).repeat(&[2, 1]),
        ),
        block("arange(3).repeat([2])", arange(&[3]).repeat(&[2])),
        block("arange(5, 2).split_every(2, 0)[0]", Ok(split[0].clone())),
        block("arange(5, 2).split_every(2, 0)[2]", Ok(split[2].clone())),
        block(
            "arange(7).chunk(3, 0)[2]",
            Ok(arange(&[7]).chunk(3, 0).unwrap()[2].clone()),
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
