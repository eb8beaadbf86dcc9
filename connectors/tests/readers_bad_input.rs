//! Bad input never panics: each case gives an error naming the file, the 1-based line
//! where there is one, and a reason.

use flowboost_connectors::readers::{DataSource, Format, ReadError, ReadOptions};
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

/// The error of opening `files`, or else the first error of streaming them.
fn first_error(files: &[PathBuf], options: &ReadOptions) -> ReadError {
    let source = match DataSource::open(files, options) {
        Ok(source) => source,
        Err(e) => return e,
    };
    for index in 0..files.len() {
        let examples = match source.examples(index) {
            Ok(examples) => examples,
            Err(e) => return e,
        };
        for example in examples {
            if let Err(e) = example {
                return e;
            }
        }
    }
    panic!("no error for {files:?}");
}

/// [`first_error`] for one file.
fn first_error_of(path: &Path, options: &ReadOptions) -> ReadError {
    first_error(&[path.to_path_buf()], options)
}

fn check(e: &ReadError, path: &Path, line: Option<u64>, reason: &str) {
    assert_eq!(e.path, path, "{e}");
    assert_eq!(e.line, line, "{e}");
    assert!(
        e.reason.contains(reason),
        "`{}` should contain `{reason}`",
        e.reason
    );
    let shown = e.to_string();
    assert!(shown.starts_with(&path.display().to_string()), "{shown}");
}

const ARFF_HEAD: &str = "@relation r\n@attribute x numeric\n@attribute c {a,b}\n@data\n";

fn arff(dir: &Path, data: &str) -> PathBuf {
    write(dir, "bad.arff", &format!("{ARFF_HEAD}{data}"))
}

#[test]
fn missing_file() {
    let p = PathBuf::from("/nonexistent/flowboost/train.csv");
    let e = first_error_of(&p, &ReadOptions::default());
    check(&e, &p, None, "file not found");
    for format in [Format::Arff, Format::Libsvm, Format::Csv] {
        let options = ReadOptions {
            format,
            ..ReadOptions::default()
        };
        check(&first_error_of(&p, &options), &p, None, "file not found");
    }
}

#[test]
fn missing_second_file() {
    let dir = tempfile::tempdir().unwrap();
    let ok = write(dir.path(), "a.csv", "1,2\n");
    let missing = dir.path().join("b.csv");
    let e = first_error(&[ok, missing.clone()], &ReadOptions::default());
    check(&e, &missing, None, "file not found");
}

#[test]
fn no_files() {
    let e = DataSource::open(&[], &ReadOptions::default()).unwrap_err();
    assert!(e.reason.contains("no data file"));
}

#[test]
fn empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "empty.csv", "");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        None,
        "empty file",
    );
    let p = write(dir.path(), "blank.csv", "\n  \n");
    for format in [Format::Auto, Format::Arff, Format::Libsvm, Format::Csv] {
        let options = ReadOptions {
            format,
            ..ReadOptions::default()
        };
        check(&first_error_of(&p, &options), &p, None, "empty file");
    }
}

#[test]
fn header_only_csv_has_no_data() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "h.csv", "a,b,class\n");
    let options = ReadOptions {
        header: flowboost_connectors::readers::Header::Yes,
        ..ReadOptions::default()
    };
    check(&first_error_of(&p, &options), &p, None, "no data");
}

#[test]
fn arff_without_data_rows() {
    let dir = tempfile::tempdir().unwrap();
    let p = arff(dir.path(), "% nothing\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        None,
        "no data",
    );
}

#[test]
fn wrong_format_csv_read_as_arff() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "data.csv", "\nx,y,class\n1,2,a\n");
    let options = ReadOptions {
        format: Format::Arff,
        ..ReadOptions::default()
    };
    check(
        &first_error_of(&p, &options),
        &p,
        Some(2),
        "not an ARFF file",
    );
}

#[test]
fn wrong_format_arff_read_as_csv() {
    let dir = tempfile::tempdir().unwrap();
    let p = arff(dir.path(), "1,a\n");
    let options = ReadOptions {
        format: Format::Csv,
        ..ReadOptions::default()
    };
    check(
        &first_error_of(&p, &options),
        &p,
        Some(1),
        "looks like an ARFF file",
    );
}

#[test]
fn wrong_format_csv_read_as_libsvm() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "data.csv", "x,y\n1,2\n");
    let options = ReadOptions {
        format: Format::Libsvm,
        ..ReadOptions::default()
    };
    // `1,2` reads as a multi-label line (labels 1 and 2, no features); `x,y` does not.
    check(
        &first_error_of(&p, &options),
        &p,
        Some(1),
        "bad label id `x`",
    );
    let p = write(
        dir.path(),
        "data2.csv",
        "x,y
u,v
",
    );
    // No line is valid: the first bad one is named, with the reason and that summary.
    let e = first_error_of(&p, &options);
    check(&e, &p, Some(1), "no valid LIBSVM line");
    assert!(e.reason.contains("bad label id `x`"), "{e}");
}

#[test]
fn mixed_formats_with_auto() {
    let dir = tempfile::tempdir().unwrap();
    let a = arff(dir.path(), "1,a\n");
    let b = write(dir.path(), "b.svm", "1 1:2\n");
    check(
        &first_error(&[a, b.clone()], &ReadOptions::default()),
        &b,
        None,
        "give the format",
    );
}

#[test]
fn truncated_line_arff() {
    let dir = tempfile::tempdir().unwrap();
    let p = arff(dir.path(), "1,a\n2\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(6),
        "truncated line",
    );
}

#[test]
fn truncated_line_csv() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "t.csv", "x,y,class\n1,2,a\n3,b\n5,6,b\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(3),
        "truncated line",
    );
}

#[test]
fn too_many_fields_csv() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "t.csv", "x,y,class\n1,2,a\n3,4,5,b\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(3),
        "too many fields",
    );
}

#[test]
fn unterminated_sparse_brace() {
    let dir = tempfile::tempdir().unwrap();
    let p = arff(dir.path(), "{0 1, 1 b}\n{0 2, 1 a\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(6),
        "unterminated `{`",
    );
}

#[test]
fn bad_number_arff() {
    let dir = tempfile::tempdir().unwrap();
    let p = arff(dir.path(), "1,a\n1.2.3,b\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(6),
        "bad number `1.2.3`",
    );
}

#[test]
fn bad_number_libsvm() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "l.svm", "+1 1:1\n-1 2:abc\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(2),
        "bad number `abc`",
    );
}

#[test]
fn unknown_nominal_value() {
    let dir = tempfile::tempdir().unwrap();
    let p = arff(dir.path(), "1,a\n2,c\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(6),
        "unknown nominal value `c`",
    );
}

#[test]
fn label_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "ml.svm", "0,1 1:1\n2,3 1:1\n");
    let options = ReadOptions {
        labels: Some(3),
        ..ReadOptions::default()
    };
    check(
        &first_error_of(&p, &options),
        &p,
        Some(2),
        "label out of range",
    );
}

#[test]
fn nan_or_infinity_csv() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "n.csv", "x,y,class\n1,2,a\n3,NaN,b\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(3),
        "NaN or infinity",
    );
}

#[test]
fn nan_or_infinity_arff_and_libsvm() {
    let dir = tempfile::tempdir().unwrap();
    let p = arff(dir.path(), "-inf,a\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(5),
        "NaN or infinity",
    );
    let p = write(dir.path(), "l.svm", "+1 1:1\n-1 2:1e999\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(2),
        "NaN or infinity",
    );
}

#[test]
fn duplicate_or_unsorted_sparse_index() {
    let dir = tempfile::tempdir().unwrap();
    let p = arff(dir.path(), "{0 1, 0 2}\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(5),
        "duplicate or unsorted sparse index 0",
    );
    let p = write(dir.path(), "l.svm", "+1 1:1\n-1 5:1 3:1\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(2),
        "duplicate or unsorted index 3",
    );
}

#[test]
fn index_beyond_declared_dimension() {
    let dir = tempfile::tempdir().unwrap();
    let p = arff(dir.path(), "{0 1}\n{2 1}\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(6),
        "beyond the declared dimension",
    );
}

#[test]
fn libsvm_index_zero() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "l.svm", "+1 1:1\n-1 0:1\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(2),
        "index 0",
    );
}

#[test]
fn arff_without_data_section() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "h.arff", "@relation r\n@attribute x numeric\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        None,
        "no @data",
    );
}

#[test]
fn xml_label_missing_from_arff() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "ml.arff",
        "@relation r\n@attribute x numeric\n@attribute L1 {0,1}\n@data\n1,0\n",
    );
    let xml = write(
        dir.path(),
        "ml.xml",
        "<labels>\n<label name=\"L1\"/>\n<label name=\"L9\"/>\n</labels>\n",
    );
    let options = ReadOptions {
        xml: Some(xml.clone()),
        ..ReadOptions::default()
    };
    check(
        &first_error(&[p], &options),
        &xml,
        Some(3),
        "`L9` is missing",
    );
}

#[test]
fn xml_file_missing() {
    let dir = tempfile::tempdir().unwrap();
    let p = arff(dir.path(), "1,a\n");
    let xml = dir.path().join("none.xml");
    let options = ReadOptions {
        xml: Some(xml.clone()),
        ..ReadOptions::default()
    };
    check(&first_error(&[p], &options), &xml, None, "file not found");
}

#[test]
fn unsupported_arff_attribute_types() {
    let dir = tempfile::tempdir().unwrap();
    for ty in ["string", "date \"yyyy-MM-dd\"", "DATE"] {
        let p = write(
            dir.path(),
            "s.arff",
            &format!("@relation r\n@attribute s {ty}\n@attribute c {{a,b}}\n@data\nx,a\n"),
        );
        check(
            &first_error_of(&p, &ReadOptions::default()),
            &p,
            Some(2),
            "not supported",
        );
    }
}

#[test]
fn numeric_arff_target() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "n.arff",
        "@relation r\n@attribute c {a,b}\n@attribute x numeric\n@data\na,1\n",
    );
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        None,
        "is numeric",
    );
}

#[test]
fn unknown_target_and_ignore_columns() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "t.csv", "x,y,class\n1,2,a\n");
    let options = ReadOptions {
        target: flowboost_connectors::readers::Target::Name("label".into()),
        ..ReadOptions::default()
    };
    check(&first_error_of(&p, &options), &p, None, "`label` not found");
    let options = ReadOptions {
        ignore: vec!["z".into()],
        ..ReadOptions::default()
    };
    check(&first_error_of(&p, &options), &p, None, "no column `z`");
    let options = ReadOptions {
        ignore: vec!["class".into()],
        ..ReadOptions::default()
    };
    check(&first_error_of(&p, &options), &p, None, "is the target");
}

#[test]
fn unterminated_quote() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "q.csv", "x,y,class\n1,2,a\n3,\"4,b\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(3),
        "unterminated",
    );
    let p = arff(dir.path(), "1,'a\n");
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(5),
        "unterminated quote",
    );
}

#[test]
fn invalid_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("u.csv");
    std::fs::write(&p, b"x,y,class\n1,2,a\n3,4,\xff\n").unwrap();
    check(
        &first_error_of(&p, &ReadOptions::default()),
        &p,
        Some(3),
        "UTF-8",
    );
}

#[test]
fn corrupt_gzip_ends_the_stream_with_an_error() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut text = String::from("x,y,class\n");
    for i in 0..5000 {
        text.push_str(&format!("{i},{},c{}\n", i * 7 % 13, i % 2));
    }
    enc.write_all(text.as_bytes()).unwrap();
    let mut bytes = enc.finish().unwrap();
    let half = bytes.len() / 2;
    bytes.truncate(half);
    let p = dir.path().join("cut.csv.gz");
    std::fs::write(&p, bytes).unwrap();
    let e = first_error_of(&p, &ReadOptions::default());
    assert_eq!(e.path, p);
    assert!(e.reason.contains("read error"), "{e}");
}

#[test]
fn a_bad_record_does_not_stop_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let p = arff(dir.path(), "1,a\n2,zzz\n3,b\n");
    let source = DataSource::open(&[p], &ReadOptions::default()).unwrap();
    let results: Vec<_> = source.examples(0).unwrap().collect();
    assert_eq!(results.len(), 3);
    assert!(results[1].is_err());
    assert_eq!(
        results[2].as_ref().unwrap().id,
        2,
        "ids count bad records too"
    );
}

/// A tiny deterministic generator for the mutation test.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

#[test]
fn mutated_files_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let seeds: [(&str, &str, ReadOptions); 5] = [
        (
            "a.arff",
            "@relation r\n@attribute 'x y' numeric\n@attribute c {a,'b c'}\n@data\n1,a\n{0 2,1 'b c'}\n-3e2,?\n",
            ReadOptions::default(),
        ),
        (
            "m.arff",
            "@relation r\n@attribute x numeric\n@attribute L1 {0,1}\n@attribute L2 {0,1}\n@data\n1,0,1\n{0 3,2 1}\n",
            ReadOptions {
                labels: Some(2),
                ..ReadOptions::default()
            },
        ),
        (
            "l.svm",
            "+1 1:0.5 3:1 # c\n-1 2:1\n1,2 4:1\n",
            ReadOptions::default(),
        ),
        (
            "c.csv",
            "x,\"y z\",class\n1,\"a,b\",p.\n2,?,n\n|c\n3,c,p\n",
            ReadOptions::default(),
        ),
        (
            "t.tsv",
            "a\tb\ttarget\n1\t2\t0\n\t4\t1\n",
            ReadOptions::default(),
        ),
    ];
    let alphabet = b",{}'\" :\n?%@#|.-1aA\t\\";
    let mut rng = Lcg(42);
    for (name, text, options) in &seeds {
        for round in 0..300 {
            let mut bytes = text.as_bytes().to_vec();
            match round % 3 {
                0 => bytes.truncate(rng.next() as usize % (bytes.len() + 1)),
                1 => {
                    let i = rng.next() as usize % bytes.len();
                    bytes[i] = alphabet[rng.next() as usize % alphabet.len()];
                }
                _ => {
                    let i = rng.next() as usize % bytes.len();
                    bytes.insert(i, alphabet[rng.next() as usize % alphabet.len()]);
                    let j = rng.next() as usize % bytes.len();
                    bytes.remove(j);
                }
            }
            let p = dir.path().join(name);
            std::fs::write(&p, &bytes).unwrap();
            for format in [Format::Auto, Format::Arff, Format::Libsvm, Format::Csv] {
                let options = ReadOptions {
                    format,
                    ..options.clone()
                };
                if let Ok(source) = DataSource::open(std::slice::from_ref(&p), &options) {
                    for example in source.examples(0).unwrap().flatten() {
                        assert_eq!(example.features.dim(), source.schema().dim());
                    }
                }
            }
        }
    }
}
