//! The floors of the four crates: each crate's top-level modules stand on floors, and a
//! module imports only from floors below its own (never from its floor's other modules,
//! never from a floor above). This test reads every source file of `operators/src`,
//! `connectors/src`, `model/src` and `src` and fails on any `crate::` path (or `super::` path that
//! climbs to the crate root) naming a module of the same or a higher floor, with file and
//! line. Comments are not read (a doc link may point anywhere); `$crate::` (a macro's own
//! paths) is not either.
//!
//! To add a top-level module, add it to the floor it belongs on below.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One crate's floors, lowest first.
struct Floors {
    /// The crate's source folder, from the workspace root.
    src: &'static str,
    /// The top-level modules of each floor, lowest first.
    floors: &'static [&'static [&'static str]],
    /// Exported macros (`crate::name!`) and items re-exported at the crate root
    /// (`crate::Name`), by the module that defines them.
    macros: &'static [(&'static str, &'static str)],
}

/// `flowboost-operators`: names and random streams; the data model, the drift detectors,
/// Hedge, metrics, potentials and the top-k rules; the weak learners and the threshold learners; the
/// stage engine (records, terminal, the feedback join's rules, the sequential runner);
/// the boosters (stages and their registry); the timely dataflow operators.
const OPERATORS: Floors = Floors {
    src: "operators/src",
    floors: &[
        &["named", "rng"],
        &["topk"],
        &["data", "drift", "hedge", "metrics", "potentials"],
        &["learners", "thresholding"],
        &["engine"],
        &["boosters"],
        &["dataflow"],
    ],
    macros: &[("named_values", "named"), ("model_options", "boosters")],
};

/// `flowboost-connectors`: the readers of files and datasets; the generators (a click
/// log is made from a read dataset); the Kafka clients and codecs.
const CONNECTORS: Floors = Floors {
    src: "connectors/src",
    floors: &[&["readers"], &["generators"], &["kafka"]],
    macros: &[],
};

/// `flowboost-model`: the errors, the header, the scorer and the schema map; the body;
/// the older bodies; the file framing; the saved model; the `Model` API, inspection, the
/// writer and the start chains; the snapshot plan.
const MODEL: Floors = Floors {
    src: "model/src",
    floors: &[
        &["columns", "error", "header", "scorer", "schema_map"],
        &["body"],
        &["legacy"],
        &["file"],
        &["saved"],
        &["api", "inspect", "writer", "start_chains"],
        &["plan"],
    ],
    macros: &[
        ("ModelError", "error"),
        ("EncodeError", "error"),
        ("Compression", "header"),
        ("SourceOffset", "header"),
        ("Scorer", "scorer"),
        ("FeedbackRun", "body"),
        ("Progress", "body"),
        ("SavedModel", "saved"),
        ("ModelWriter", "writer"),
    ],
};

/// `flowboost`: the example sources; evaluation; the Kafka job; the command line; the
/// fuzz harness (drives the command line). The model layer is the crate
/// `flowboost-model` (`crate::model` re-exports it).
const FLOWBOOST: Floors = Floors {
    src: "src",
    floors: &[
        &["source"],
        &["model"],
        &["eval"],
        &["kafka"],
        &["serve"],
        &["cli"],
        &["fuzz"],
    ],
    macros: &[],
};

#[test]
fn no_module_imports_from_its_own_floor_or_above() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    for krate in [&OPERATORS, &CONNECTORS, &MODEL, &FLOWBOOST] {
        problems.extend(check_crate(root, krate));
    }
    assert!(
        problems.is_empty(),
        "imports that break the floors (see tests/floors.rs):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_checker_finds_upward_paths() {
    let floors = Floors {
        src: "",
        floors: &[&["low"], &["mid", "side"], &["high"]],
        macros: &[("m", "low")],
    };
    let source = "\
use crate::low::A; // crate::high in a comment
use crate::{low::B, side::C};
/// [`X`](crate::high::X)
fn f() -> crate::high::Y { crate::m!(); \"crate::high\" }
mod inner {
    use super::super::super::high::Z;
}
";
    let found = check_source(&floors, Path::new("mid/a.rs"), "mid/a.rs", source);
    assert_eq!(
        found,
        [
            "mid/a.rs:2: `side` (floor 2) from `mid` (floor 2)",
            "mid/a.rs:4: `high` (floor 3) from `mid` (floor 2)",
            "mid/a.rs:6: `high` (floor 3) from `mid` (floor 2)",
        ]
    );
}

/// Every import against the floors in the crate's files.
fn check_crate(root: &Path, floors: &Floors) -> Vec<String> {
    let src = root.join(floors.src);
    let mut problems = Vec::new();
    for file in rust_files(&src) {
        let rel = file.strip_prefix(&src).unwrap_or(&file).to_path_buf();
        if rel == Path::new("lib.rs") || rel == Path::new("main.rs") {
            continue;
        }
        let source = std::fs::read_to_string(&file).expect("a readable source file");
        let shown = Path::new(floors.src).join(&rel);
        problems.extend(check_source(
            floors,
            &rel,
            &shown.display().to_string(),
            &source,
        ));
    }
    problems
}

/// The `.rs` files under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("a readable source folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The floor of each module and macro of `floors`.
fn floor_of(floors: &Floors) -> BTreeMap<&'static str, usize> {
    let mut of = BTreeMap::new();
    for (i, modules) in floors.floors.iter().enumerate() {
        for m in modules.iter() {
            of.insert(*m, i + 1);
        }
    }
    for (mac, module) in floors.macros {
        if let Some(&f) = of.get(module) {
            of.insert(*mac, f);
        }
    }
    of
}

/// The problems of one file (`rel`: its path under the crate's source folder), as
/// `name:line: ...`.
fn check_source(floors: &Floors, rel: &Path, name: &str, source: &str) -> Vec<String> {
    let of = floor_of(floors);
    let mut module: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    if module.last().is_some_and(|m| m == "mod") {
        module.pop();
    }
    let Some(own) = module.first().cloned() else {
        return Vec::new();
    };
    let Some(&own_floor) = of.get(own.as_str()) else {
        return vec![format!(
            "{name}:1: the top-level module `{own}` is on no floor (add it to tests/floors.rs)"
        )];
    };
    let mut problems = Vec::new();
    for (line, target) in imports(&module, source) {
        let Some(&floor) = of.get(target.as_str()) else {
            problems.push(format!(
                "{name}:{line}: `{target}` is on no floor (add it to tests/floors.rs)"
            ));
            continue;
        };
        let module = floors
            .macros
            .iter()
            .find(|(m, _)| *m == target)
            .map_or(target.as_str(), |(_, module)| module);
        if module != own && floor >= own_floor {
            problems.push(format!(
                "{name}:{line}: `{target}` (floor {floor}) from `{own}` (floor {own_floor})"
            ));
        }
    }
    problems.dedup();
    problems
}

/// The top-level modules the code of a file names through the crate root, with their
/// lines: `crate::m`, each `m` of `crate::{m::.., ..}`, and `super::` paths that climb to
/// the root (`module`: the file's module path; inline `mod` blocks are followed).
fn imports(module: &[String], source: &str) -> Vec<(usize, String)> {
    let code = strip(source);
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut line = 1;
    let mut depth = 0usize;
    // Inline modules: (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut pending_mod: Option<String> = None;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\n' => line += 1,
            b'{' => {
                depth += 1;
                if let Some(m) = pending_mod.take() {
                    inline.push((m, depth));
                }
            }
            b'}' => {
                if inline.last().is_some_and(|&(_, d)| d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            b';' => pending_mod = None,
            _ => {}
        }
        let boundary = i == 0 || !is_ident(bytes[i - 1]) && bytes[i - 1] != b'$';
        let rest = &bytes[i..];
        if boundary && rest.starts_with(b"mod ") {
            let name = ident_at(bytes, i + 4);
            if !name.is_empty() {
                pending_mod = Some(name);
            }
        }
        let after_path = i >= 2 && &bytes[i - 2..i] == b"::";
        if boundary && !after_path && rest.starts_with(b"crate::") {
            found.extend(names_at(bytes, i + 7).into_iter().map(|n| (line, n)));
        } else if boundary && !after_path && rest.starts_with(b"super::") {
            let mut n = 0;
            let mut j = i;
            while bytes[j..].starts_with(b"super::") {
                n += 1;
                j += 7;
            }
            let here = module.len() + inline.len();
            if n == here {
                found.extend(names_at(bytes, j).into_iter().map(|n| (line, n)));
            }
            i = j;
            continue;
        }
        i += 1;
    }
    found
}

/// The first segment of the path at `at`, or of each path of a `{..}` group there.
fn names_at(bytes: &[u8], at: usize) -> Vec<String> {
    if bytes.get(at) != Some(&b'{') {
        let name = ident_at(bytes, at);
        return if name.is_empty() { vec![] } else { vec![name] };
    }
    let mut names = Vec::new();
    let mut depth = 0;
    let mut expect = true;
    let mut i = at;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                depth += 1;
                expect = depth == 1;
            }
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            b',' if depth == 1 => expect = true,
            c if expect && is_ident(c) => {
                let name = ident_at(bytes, i);
                i += name.len();
                if name != "self" {
                    names.push(name);
                }
                expect = false;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    names
}

/// The identifier at `at` (empty if none).
fn ident_at(bytes: &[u8], at: usize) -> String {
    bytes
        .get(at..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&c| is_ident(c))
        .map(|&c| char::from(c))
        .collect()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The source with comments, string and character literals blanked (newlines kept).
fn strip(source: &str) -> String {
    let b = source.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if rest.starts_with(b"/*") {
            let mut nest = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    nest += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    nest -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if nest == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if (rest.starts_with(b"r\"") || rest.starts_with(b"r#"))
            && (i == 0 || !is_ident(b[i - 1]))
        {
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                out.push(b[i]);
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let start = i + 2 + hashes;
            out.extend(std::iter::repeat_n(b' ', start - i));
            i = start;
            while i < b.len() && !b[i..].starts_with(&close) {
                blank(&mut out, b[i]);
                i += 1;
            }
            let end = (i + close.len()).min(b.len());
            out.extend(std::iter::repeat_n(b' ', end - i));
            i = end;
        } else if b[i] == b'"' {
            out.push(b' ');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' && i + 1 < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                blank(&mut out, b[i]);
                i += 1;
            }
            if i < b.len() {
                out.push(b' ');
                i += 1;
            }
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            let lit = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..].iter().position(|&c| c == b'\'').map(|p| p + 3)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(3)
            } else {
                None
            };
            match lit {
                Some(n) => {
                    out.extend(std::iter::repeat_n(b' ', n));
                    i += n;
                }
                None => {
                    out.push(b'\'');
                    i += 1;
                }
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
