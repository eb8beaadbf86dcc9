//! LIBSVM / SVMlight reading on small hand-written files.

use flowboost_connectors::readers::{DataSource, Format, ReadOptions};
use flowboost_operators::data::{Example, Features, Label, Task};
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

fn read_all(source: &DataSource, index: usize) -> Vec<Example> {
    source
        .examples(index)
        .unwrap()
        .map(|e| e.unwrap())
        .collect()
}

fn classes(source: &DataSource, index: usize) -> Vec<u32> {
    read_all(source, index)
        .iter()
        .map(|e| e.label.as_ref().unwrap().class().unwrap())
        .collect()
}

#[test]
fn binary_encodings_make_the_larger_label_positive() {
    let dir = tempfile::tempdir().unwrap();
    for (content, names) in [
        ("+1 1:1\n-1 2:1\n", ["-1", "+1"]),
        ("1 1:1\n0 2:1\n", ["0", "1"]),
        ("2 1:1\n1 2:1\n", ["1", "2"]),
        ("1.0 1:1\n-1.0 2:1\n1 3:1\n", ["-1.0", "1"]),
    ] {
        let p = write(dir.path(), "b.txt", content);
        let source = DataSource::open(&[p], &ReadOptions::default()).unwrap();
        assert_eq!(source.format(), Format::Libsvm);
        assert_eq!(source.schema().task, Task::Binary, "{content}");
        assert_eq!(source.schema().labels, names, "{content}");
        assert_eq!(classes(&source, 0)[..2], [1, 0], "{content}");
    }
}

#[test]
fn features_are_sparse_and_zero_based_with_comments_and_qid() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "r.svm",
        "# a comment line\n+1 qid:3 2:0.5 7:-1e-2 # trailing comment\n\n-1 1:1\n",
    );
    let source = DataSource::open(&[p], &ReadOptions::default()).unwrap();
    assert_eq!(source.schema().dim(), 7);
    let rows = read_all(&source, 0);
    assert_eq!(rows.len(), 2);
    assert_eq!(
        rows[0].features,
        Features::Sparse {
            indices: vec![1, 6],
            values: vec![0.5, -0.01],
            dim: 7
        }
    );
    assert_eq!(rows[1].id, 1);
    assert_eq!(rows[1].label, Some(Label::Class(0)));
}

#[test]
fn dimension_and_classes_span_train_and_test() {
    let dir = tempfile::tempdir().unwrap();
    let train = write(dir.path(), "train", "10 1:1\n2 3:1\n");
    let test = write(dir.path(), "test", "1 9:1\n2 2:1\n");
    let source = DataSource::open(&[train, test], &ReadOptions::default()).unwrap();
    assert_eq!(source.schema().dim(), 9);
    assert_eq!(source.schema().task, Task::Multiclass);
    assert_eq!(source.schema().labels, ["1", "2", "10"]);
    assert_eq!(classes(&source, 0), [2, 1]);
    assert_eq!(classes(&source, 1), [0, 1]);
    assert_eq!(read_all(&source, 0)[0].features.dim(), 9);
}

#[test]
fn comma_labels_make_a_multilabel_task() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "ml", "1,4 3:0.5\n0 1:1\n 2:1\n4,1,1 1:2\n");
    let source = DataSource::open(std::slice::from_ref(&p), &ReadOptions::default()).unwrap();
    assert_eq!(source.schema().task, Task::Multilabel);
    assert_eq!(source.schema().labels, ["0", "1", "2", "3", "4"]);
    let labels: Vec<Label> = read_all(&source, 0)
        .into_iter()
        .map(|e| e.label.unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            Label::Set(vec![1, 4]),
            Label::Set(vec![0]),
            Label::Set(vec![]),
            Label::Set(vec![1, 4])
        ]
    );
    // A given label count fixes k.
    let options = ReadOptions {
        labels: Some(8),
        ..ReadOptions::default()
    };
    let source = DataSource::open(&[p], &options).unwrap();
    assert_eq!(source.schema().num_labels(), 8);
}

#[test]
fn an_empty_label_field_alone_makes_a_multilabel_task() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "ml", "2 1:1\n3:1 4:1\n");
    let source = DataSource::open(&[p], &ReadOptions::default()).unwrap();
    assert_eq!(source.schema().task, Task::Multilabel);
    assert_eq!(source.schema().num_labels(), 3);
    let rows = read_all(&source, 0);
    assert_eq!(rows[1].label, Some(Label::Set(vec![])));
    assert_eq!(
        rows[1].features,
        Features::Sparse {
            indices: vec![2, 3],
            values: vec![1.0, 1.0],
            dim: 4
        }
    );
}

#[test]
fn label_count_forces_multilabel() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "ml", "2 1:1\n0 2:1\n");
    let options = ReadOptions {
        format: Format::Libsvm,
        labels: Some(3),
        ..ReadOptions::default()
    };
    let source = DataSource::open(&[p], &options).unwrap();
    assert_eq!(source.schema().task, Task::Multilabel);
    assert_eq!(read_all(&source, 0)[0].label, Some(Label::Set(vec![2])));
}

#[test]
fn gzip_libsvm() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(b"-1 3:1\n+1 5:1").unwrap();
    std::fs::write(&p, enc.finish().unwrap()).unwrap();
    let source = DataSource::open(&[p], &ReadOptions::default()).unwrap();
    assert_eq!(source.format(), Format::Libsvm);
    assert_eq!(classes(&source, 0), [0, 1]);
}
