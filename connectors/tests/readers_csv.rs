//! CSV / TSV reading on small hand-written files.

use flowboost_connectors::readers::{DataSource, Format, Header, ReadOptions, Target};
use flowboost_operators::data::{Attribute, AttributeKind, Example, Features, Label, Task};
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

fn open(dir: &Path, content: &str, options: &ReadOptions) -> DataSource {
    let p = write(dir, "data.csv", content);
    DataSource::open(&[p], options).unwrap()
}

fn names(source: &DataSource) -> Vec<String> {
    source
        .schema()
        .attributes
        .iter()
        .map(|a| a.name.clone())
        .collect()
}

#[test]
fn header_detected_when_a_numeric_column_has_a_text_first_row() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(
        dir.path(),
        "x,y,label\n1,2,a\n3,4,b\n",
        &ReadOptions::default(),
    );
    assert_eq!(source_rows(&s), 2);
    assert_eq!(names(&s), ["x", "y"]);
    assert_eq!(s.schema().labels, ["a", "b"]);
}

fn source_rows(source: &DataSource) -> usize {
    read_all(source, 0).len()
}

#[test]
fn no_header_when_the_first_row_is_data() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path(), "1,2,a\n3,4,b\n5,6,a\n", &ReadOptions::default());
    assert_eq!(source_rows(&s), 3);
    assert_eq!(names(&s), ["f0", "f1"]);
    // All-text rows: the first row is data unless it names `class` or `target`.
    let s = open(dir.path(), "x,y,a\nu,v,b\n", &ReadOptions::default());
    assert_eq!(source_rows(&s), 2);
    let s = open(
        dir.path(),
        "colour,Class\nred,a\nblue,b\n",
        &ReadOptions::default(),
    );
    assert_eq!(source_rows(&s), 2);
    assert_eq!(names(&s), ["colour"]);
}

#[test]
fn header_settings_and_a_named_target() {
    let dir = tempfile::tempdir().unwrap();
    // Two classes in each candidate target (one label is an error).
    let text = "u,v,w\nx,y,z\nx,z,q\n";
    let yes = ReadOptions {
        header: Header::Yes,
        ..ReadOptions::default()
    };
    assert_eq!(source_rows(&open(dir.path(), text, &yes)), 2);
    let named = ReadOptions {
        target: Target::Name("v".into()),
        ..ReadOptions::default()
    };
    let s = open(dir.path(), text, &named);
    assert_eq!(source_rows(&s), 2);
    assert_eq!(names(&s), ["u", "w"]);
    assert_eq!(s.schema().labels, ["y", "z"]);
    let no = ReadOptions {
        header: Header::No,
        ..ReadOptions::default()
    };
    // A header read as data makes text cells in numeric columns: an error naming the
    // first (it was silently a nominal column), unless the columns are said nominal.
    let path = dir.path().join("no-header.csv");
    std::fs::write(&path, "x,y,label\n1,2,a\n").unwrap();
    let e = DataSource::open(std::slice::from_ref(&path), &no).unwrap_err();
    assert_eq!(e.line, Some(1));
    assert!(e.reason.contains("`x` is not a number"), "{}", e.reason);
    let nominal = ReadOptions {
        nominal: vec!["1".into(), "2".into()],
        ..no
    };
    let s = open(dir.path(), "x,y,label\n1,2,a\n", &nominal);
    assert_eq!(source_rows(&s), 2);
    assert_eq!(s.schema().attributes[0].cardinality(), Some(2));
}

#[test]
fn target_auto_first_last() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(
        dir.path(),
        "a,TARGET,b\n1,0,2\n3,1,4\n",
        &ReadOptions::default(),
    );
    assert_eq!(names(&s), ["a", "b"]);
    assert_eq!(s.schema().task, Task::Binary);
    let s = open(
        dir.path(),
        "Class,a,b\nx,0,2\ny,1,4\nz,1,4\n",
        &ReadOptions::default(),
    );
    assert_eq!(s.schema().labels, ["x", "y", "z"]);
    let first = ReadOptions {
        target: Target::First,
        ..ReadOptions::default()
    };
    let s = open(dir.path(), "T,2,8\nI,5,12\n", &first);
    assert_eq!(s.schema().labels, ["I", "T"]);
    assert_eq!(read_all(&s, 0)[0].label, Some(Label::Class(1)));
    let s = open(
        dir.path(),
        "1,10,2\n3,9,4\n5,1,7\n",
        &ReadOptions::default(),
    );
    assert_eq!(s.schema().labels, ["2", "4", "7"]);
    let last_middle = ReadOptions {
        target: Target::Name("m".into()),
        ..ReadOptions::default()
    };
    let s = open(dir.path(), "l,m,r\n1,10,2\n3,9,4\n5,1,7\n", &last_middle);
    assert_eq!(
        s.schema().labels,
        ["1", "9", "10"],
        "numeric classes sort numerically"
    );
}

#[test]
fn categories_are_consistent_across_train_and_test() {
    let dir = tempfile::tempdir().unwrap();
    let train = write(
        dir.path(),
        "train.csv",
        "colour,size,y\nred,1,no\nblue,2,yes\n",
    );
    let test = write(
        dir.path(),
        "test.csv",
        "colour,size,y\ngreen,3,no\nred,4,maybe\n",
    );
    let source = DataSource::open(&[train, test], &ReadOptions::default()).unwrap();
    let schema = source.schema();
    assert_eq!(
        schema.attributes,
        vec![
            Attribute::nominal("colour", vec!["blue".into(), "green".into(), "red".into()]),
            Attribute::numeric("size"),
        ]
    );
    assert_eq!(schema.labels, ["maybe", "no", "yes"]);
    let train_rows = read_all(&source, 0);
    let test_rows = read_all(&source, 1);
    assert_eq!(train_rows[0].features, Features::Dense(vec![2.0, 1.0]));
    assert_eq!(test_rows[1].features, Features::Dense(vec![2.0, 4.0]));
    assert_eq!(test_rows[0].features, Features::Dense(vec![1.0, 3.0]));
    assert_eq!(test_rows[1].label, Some(Label::Class(0)));
    assert_eq!(train_rows[1].label, Some(Label::Class(2)));
}

#[test]
fn adult_style_comma_space_trailing_dot_and_comment_line() {
    let dir = tempfile::tempdir().unwrap();
    let train = write(
        dir.path(),
        "adult.data",
        "39, State-gov, 77516, <=50K\n50, ?, 83311, >50K\n\n",
    );
    let test = write(
        dir.path(),
        "adult.test",
        "|1x3 Cross validator\n25, Private, 226802, <=50K.\n38, Private, 89814, >50K.\n",
    );
    let source = DataSource::open(&[train, test], &ReadOptions::default()).unwrap();
    assert_eq!(source.format(), Format::Csv);
    assert_eq!(source.schema().task, Task::Binary);
    assert_eq!(source.schema().labels, ["<=50K", ">50K"]);
    assert_eq!(
        source.schema().attributes[1].kind,
        AttributeKind::Nominal(vec!["Private".into(), "State-gov".into()])
    );
    let train_rows = read_all(&source, 0);
    let Features::Dense(x) = &train_rows[1].features else {
        panic!()
    };
    assert!(x[1].is_nan(), "`?` is missing");
    let test_rows = read_all(&source, 1);
    assert_eq!(test_rows.len(), 2);
    assert_eq!(test_rows[0].id, 0);
    assert_eq!(test_rows[0].label, Some(Label::Class(0)));
    assert_eq!(test_rows[1].label, Some(Label::Class(1)));
    assert_eq!(
        test_rows[1].features,
        Features::Dense(vec![38.0, 0.0, 89814.0])
    );
}

#[test]
fn tsv_gzip_without_gz_extension() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("pmlb.tsv");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(b"a b\tc\ttarget\n1.5\t2\t0\n3\t4\t1\n")
        .unwrap();
    std::fs::write(&p, enc.finish().unwrap()).unwrap();
    let source = DataSource::open(&[p], &ReadOptions::default()).unwrap();
    assert_eq!(names(&source), ["a b", "c"]);
    assert_eq!(
        read_all(&source, 0)[0].features,
        Features::Dense(vec![1.5, 2.0])
    );
}

#[test]
fn semicolons_quotes_missing_values_and_ignore() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(
        dir.path(),
        "id;\"name; full\";v;cls\n7;\"Doe; \"\"J\"\"\";;x\n8;Roe;1.5;\n9;Poe;2;y\n",
        &ReadOptions {
            ignore: vec!["id".into()],
            ..ReadOptions::default()
        },
    );
    assert_eq!(names(&s), ["name; full", "v"]);
    assert_eq!(
        s.schema().attributes[0].kind,
        AttributeKind::Nominal(vec!["Doe; \"J\"".into(), "Poe".into(), "Roe".into()])
    );
    let rows = read_all(&s, 0);
    let Features::Dense(x) = &rows[0].features else {
        panic!()
    };
    assert_eq!(x[0], 0.0);
    assert!(x[1].is_nan(), "an empty field is missing");
    assert_eq!(
        rows[1].label, None,
        "a missing class is an unlabeled example"
    );
    assert_eq!(s.schema().labels, ["x", "y"]);
    // Ignore by 1-based column number, without a header.
    let s = open(
        dir.path(),
        "1,2,3,a\n4,5,6,b\n",
        &ReadOptions {
            ignore: vec!["2".into()],
            ..ReadOptions::default()
        },
    );
    assert_eq!(read_all(&s, 0)[1].features, Features::Dense(vec![4.0, 6.0]));
}

#[test]
fn a_column_turning_to_text_after_many_numbers_keeps_every_value() {
    // As the target: 1,500 numeric class values (each twice: a distinct value in every
    // row is not a class column), then a text one; every value is kept (a second pass
    // collects them).
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..3000 {
        text.push_str(&format!("{},c{},{}\n", i % 7, i % 3, i % 1500));
    }
    text.push_str("1,c0,many\n");
    let s = open(dir.path(), &text, &ReadOptions::default());
    assert_eq!(s.schema().labels.len(), 1501);
    let rows = read_all(&s, 0);
    assert_eq!(rows.len(), 3001);
    let Some(Label::Class(last)) = rows.last().unwrap().label else {
        panic!("no class");
    };
    assert_eq!(s.schema().labels[last as usize], "many");
    assert_eq!(s.schema().attributes[0].kind, AttributeKind::Numeric);
    // As a feature, one text cell after 3,000 numbers is a mistake, not a category: an
    // error naming it.
    let mut text = String::new();
    for i in 0..3000 {
        text.push_str(&format!("{i},{},c{}\n", i % 7, i % 3));
    }
    text.push_str("many,1,c0\n");
    let p = write(dir.path(), "turning.csv", &text);
    let e = DataSource::open(std::slice::from_ref(&p), &ReadOptions::default()).unwrap_err();
    assert_eq!(e.line, Some(3001), "{e}");
    assert!(e.reason.contains("`many` is not a number"), "{e}");
    // Said nominal, its 3,001 values are over the nominal limit (1,024): an error naming
    // the line where the column passed it: its 1,025th distinct value, on line 1,025.
    let nominal = ReadOptions {
        nominal: vec!["1".into()],
        ..ReadOptions::default()
    };
    let e = DataSource::open(&[p], &nominal).unwrap_err();
    assert_eq!(e.line, Some(1025), "{e}");
    assert!(e.reason.contains("3001 distinct values"), "{e}");
}

/// The count the schema scan takes of each file is what its stream yields, bad records
/// included: comments, blank lines, a header, a short row, CRLF endings, no final newline,
/// a gzip-compressed file without a header. (A line that is not UTF-8 fails the scan: no
/// count is needed then.)
#[test]
fn the_scan_counts_the_records_the_stream_yields() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("a.csv");
    let mut bytes = b"| a comment\nx,y,label\n| another\n1,2,a\n\n3,4,b\n5,6\n".to_vec();
    bytes.extend_from_slice(b"7,8,a\r\n   \n9,10,b");
    std::fs::write(&first, bytes).unwrap();
    let second = write(dir.path(), "b.csv", "x,y,label\n11,12,b\n");
    let third = dir.path().join("c.csv.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&third).unwrap(),
        flate2::Compression::default(),
    );
    gz.write_all(b"13,14,a\n| c\n15,16,b\n").unwrap();
    gz.finish().unwrap();
    let source = DataSource::open(&[first, second, third], &ReadOptions::default()).unwrap();
    let counts: Vec<(Option<u64>, u64)> = (0..3)
        .map(|i| {
            let streamed = source.examples(i).unwrap().count() as u64;
            (source.records(i), streamed)
        })
        .collect();
    assert_eq!(
        counts,
        [(Some(5), 5), (Some(1), 1), (Some(2), 2)],
        "(the scan's count, the stream's)"
    );
    // One of the first file's records is bad (a short row).
    assert_eq!(
        source.examples(0).unwrap().filter(|e| e.is_err()).count(),
        1
    );
    assert_eq!(source.records(3), None, "no fourth file");
}
