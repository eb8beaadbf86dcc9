//! ARFF and MULAN reading on small hand-written files.

use flowboost_connectors::readers::{DataSource, Format, ReadOptions, Target};
use flowboost_operators::data::{Attribute, Example, Features, Label, Task};
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

const WEATHER: &str = "% the weather data\n\
@RELATION weather\n\
\n\
@ATTRIBUTE outlook {sunny, overcast, 'light rain'}\n\
@attribute temperature REAL\n\
@Attribute humidity integer\n\
@attribute 'wind speed' numeric\n\
@attribute play {no,yes}\n\
\n\
@DATA\n\
sunny,85,85,1.5,no\n\
% a comment inside the data\n\
'light rain', 70.5 , ?, 0 ,yes\r\n\
overcast,64,65,-2e1,?\n";

#[test]
fn dense_single_label_binary() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "weather.arff", WEATHER);
    let source = DataSource::open(&[p], &ReadOptions::default()).unwrap();
    assert_eq!(source.format(), Format::Arff);
    let schema = source.schema();
    assert_eq!(schema.task, Task::Binary);
    assert_eq!(schema.labels, ["no", "yes"]);
    assert_eq!(
        schema.attributes,
        vec![
            Attribute::nominal(
                "outlook",
                vec!["sunny".into(), "overcast".into(), "light rain".into()]
            ),
            Attribute::numeric("temperature"),
            Attribute::numeric("humidity"),
            Attribute::numeric("wind speed"),
        ]
    );
    let rows = read_all(&source, 0);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].id, 0);
    assert_eq!(
        rows[0].features,
        Features::Dense(vec![0.0, 85.0, 85.0, 1.5])
    );
    assert_eq!(rows[0].label, Some(Label::Class(0)));
    let Features::Dense(x) = &rows[1].features else {
        panic!("dense expected")
    };
    assert_eq!(x[0], 2.0);
    assert_eq!(x[1], 70.5);
    assert!(x[2].is_nan(), "? is a missing value");
    assert_eq!(rows[1].label, Some(Label::Class(1)));
    assert_eq!(rows[2].id, 2);
    assert_eq!(
        rows[2].features,
        Features::Dense(vec![1.0, 64.0, 65.0, -20.0])
    );
    assert_eq!(
        rows[2].label, None,
        "a missing class is an unlabeled example"
    );
}

#[test]
fn target_first_or_by_name_and_ignore() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "weather.arff", WEATHER);
    let options = ReadOptions {
        target: Target::First,
        ignore: vec!["humidity".into(), "5".into()],
        ..ReadOptions::default()
    };
    let source = DataSource::open(std::slice::from_ref(&p), &options).unwrap();
    assert_eq!(source.schema().task, Task::Multiclass);
    assert_eq!(source.schema().labels, ["sunny", "overcast", "light rain"]);
    let names: Vec<&str> = source
        .schema()
        .attributes
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(names, ["temperature", "wind speed"]);
    let rows = read_all(&source, 0);
    assert_eq!(rows[1].features, Features::Dense(vec![70.5, 0.0]));
    assert_eq!(rows[1].label, Some(Label::Class(2)));

    let options = ReadOptions {
        target: Target::Name("OUTLOOK".into()),
        ..ReadOptions::default()
    };
    let source = DataSource::open(&[p], &options).unwrap();
    assert_eq!(source.schema().labels.len(), 3);
    assert_eq!(source.schema().dim(), 4);
}

#[test]
fn sparse_rows_with_nominal_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "sparse.arff",
        "@relation s\n@attribute a numeric\n@attribute b {x,y,z}\n@attribute c numeric\n\
         @attribute d numeric\n@attribute class {neg,pos}\n@data\n\
         {0 1.5, 2 -3, 4 pos}\n{ }\n{1 z,3 ?}\n{1 'y'}\n0,x,0,0,neg\n",
    );
    let source = DataSource::open(&[p], &ReadOptions::default()).unwrap();
    assert_eq!(source.schema().task, Task::Binary);
    let rows = read_all(&source, 0);
    assert_eq!(
        rows[0].features,
        Features::Sparse {
            indices: vec![0, 2],
            values: vec![1.5, -3.0],
            dim: 4
        }
    );
    assert_eq!(rows[0].label, Some(Label::Class(1)));
    assert_eq!(
        rows[1].features,
        Features::Sparse {
            indices: vec![],
            values: vec![],
            dim: 4
        }
    );
    // An absent nominal value is its first value: the class is `neg`.
    assert_eq!(rows[1].label, Some(Label::Class(0)));
    let Features::Sparse {
        indices, values, ..
    } = &rows[2].features
    else {
        panic!("sparse expected")
    };
    assert_eq!(indices, &[1, 3]);
    assert_eq!(values[0], 2.0);
    assert!(values[1].is_nan());
    assert_eq!(rows[3].features.get(1), 1.0);
    // Dense and sparse rows may mix.
    assert_eq!(rows[4].features, Features::Dense(vec![0.0, 0.0, 0.0, 0.0]));
}

const MULAN: &str = "@relation ml\n\
@attribute f1 numeric\n\
@attribute 'f 2' {lo,hi}\n\
@attribute 'Swainson\\'s Thrush' {0,1}\n\
@attribute \"Class \\\"B\\\"\" {0,1}\n\
@attribute C {0, 1}\n\
@data\n\
0.5,hi,1,0,1\n\
1.5,lo,0,0,0\n\
{0 2, 3 1}\n\
{2 1,3 1,4 1}\n";

#[test]
fn mulan_by_label_count_dense_and_sparse() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "ml.arff", MULAN);
    let options = ReadOptions {
        labels: Some(3),
        ..ReadOptions::default()
    };
    let source = DataSource::open(&[p], &options).unwrap();
    let schema = source.schema();
    assert_eq!(schema.task, Task::Multilabel);
    assert_eq!(schema.labels, ["Swainson's Thrush", "Class \"B\"", "C"]);
    assert_eq!(schema.dim(), 2);
    let rows = read_all(&source, 0);
    let labels: Vec<Label> = rows.iter().map(|r| r.label.clone().unwrap()).collect();
    assert_eq!(
        labels,
        [
            Label::Set(vec![0, 2]),
            Label::Set(vec![]),
            Label::Set(vec![1]),
            Label::Set(vec![0, 1, 2])
        ]
    );
    assert_eq!(rows[0].features, Features::Dense(vec![0.5, 1.0]));
    assert_eq!(
        rows[2].features,
        Features::Sparse {
            indices: vec![0],
            values: vec![2.0],
            dim: 2
        }
    );
}

#[test]
fn mulan_by_xml_matches_names_in_arff_order() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "ml.arff", MULAN);
    // Shuffled order, an entity for the quote, nested labels.
    let xml = write(
        dir.path(),
        "ml.xml",
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
         <labels xmlns=\"http://mulan.sourceforge.net/labels\">\n\
         <label name=\"C\">\n<label name='Class \"B\"'></label>\n</label>\n\
         <label name=\"Swainson&apos;s Thrush\"/>\n</labels>\n",
    );
    let options = ReadOptions {
        xml: Some(xml),
        ..ReadOptions::default()
    };
    let source = DataSource::open(&[p], &options).unwrap();
    assert_eq!(
        source.schema().labels,
        ["Swainson's Thrush", "Class \"B\"", "C"]
    );
    let rows = read_all(&source, 0);
    assert_eq!(rows[0].label, Some(Label::Set(vec![0, 2])));
}

#[test]
fn mulan_labels_need_not_be_last() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "ml.arff",
        "@relation ml\n@attribute L1 {0,1}\n@attribute x numeric\n@attribute L2 {0,1}\n@data\n1,3,0\n0,4,1\n",
    );
    let xml = write(
        dir.path(),
        "ml.xml",
        "<labels><label name=\"L2\"/><label name=\"L1\"/></labels>",
    );
    let options = ReadOptions {
        xml: Some(xml),
        ..ReadOptions::default()
    };
    let source = DataSource::open(&[p], &options).unwrap();
    assert_eq!(source.schema().labels, ["L1", "L2"]);
    let rows = read_all(&source, 0);
    assert_eq!(rows[0].features, Features::Dense(vec![3.0]));
    assert_eq!(rows[0].label, Some(Label::Set(vec![0])));
    assert_eq!(rows[1].label, Some(Label::Set(vec![1])));
}

#[test]
fn train_and_test_share_one_schema() {
    let dir = tempfile::tempdir().unwrap();
    let train = write(dir.path(), "train.arff", WEATHER);
    let test = write(
        dir.path(),
        "test.arff",
        &WEATHER
            .replace("% the weather data\n", "")
            .replace("RELATION weather", "relation other"),
    );
    let source = DataSource::open(&[train, test.clone()], &ReadOptions::default()).unwrap();
    assert_eq!(source.files().len(), 2);
    assert_eq!(read_all(&source, 1).len(), 3);

    let other = write(
        dir.path(),
        "other.arff",
        &WEATHER.replace("{no,yes}", "{yes,no}"),
    );
    let e = DataSource::open(&[test, other.clone()], &ReadOptions::default()).unwrap_err();
    assert_eq!(e.path, other);
    assert!(e.reason.contains("differs"), "{e}");
}

#[test]
fn gzip_arff_is_detected_by_magic_bytes() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("weather.data");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(WEATHER.as_bytes()).unwrap();
    std::fs::write(&p, enc.finish().unwrap()).unwrap();
    let source = DataSource::open(&[p], &ReadOptions::default()).unwrap();
    assert_eq!(source.format(), Format::Arff);
    assert_eq!(read_all(&source, 0).len(), 3);
}

#[test]
fn examples_can_be_streamed_again() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "weather.arff", WEATHER);
    let source = DataSource::open(&[p], &ReadOptions::default()).unwrap();
    let first = read_all(&source, 0);
    let second = read_all(&source, 0);
    assert_eq!(format!("{first:?}"), format!("{second:?}"));
    assert!(source.examples(1).is_err());
}
