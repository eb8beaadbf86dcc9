//! `POST /v1/rank` through real HTTP against the binary: a top-k booster on the click
//! simulator's impressions ranks each impression; greedy is the model's own top k (as
//! `/v1/predict` scores it); epsilon-greedy and softmax answer the exact propensities
//! (those `Exploration::marginals` computes from the same scores), replay a request from
//! its id, and draw their slates with the stated frequencies; the refusals.

mod common;
mod serve_support;

use common::temp_dir;
use flowboost::connectors::generators::clicks::{ClickSimConfig, ClickSimulator};
use flowboost::eval::{ClickEncoder, click_schema};
use flowboost::model::Model;
use flowboost::operators::boosters::{Algorithm, BoosterConfig};
use flowboost::operators::learners::WeakKind;
use flowboost::serve::Exploration;
use serde_json::{Value, json};
use serve_support::{Server, agent, post};
use std::path::{Path, PathBuf};

/// An untrained top-k booster for the click simulator's impressions (46 items, k = 3).
fn fresh_click_model(dir: &Path, algorithm: Algorithm) -> PathBuf {
    let mut config = BoosterConfig::new(algorithm, WeakKind::Vfdt, 5);
    config.learners = 4;
    let schema = click_schema(&ClickSimConfig::new(0, 1)).unwrap();
    let path = dir.join(format!("{}.fbm", algorithm.name()));
    Model::new(config, schema)
        .unwrap()
        .save_file(&path)
        .unwrap();
    path
}

/// `n` impressions of the simulator (seed `seed`) as events; with `labeled`, each labeled
/// with the user's three most relevant items (to teach a model by `/v1/learn`).
fn impressions(n: u64, seed: u64, labeled: bool) -> Vec<Value> {
    let config = ClickSimConfig::new(n, seed);
    let mut encoder = ClickEncoder::new(&config).unwrap();
    ClickSimulator::new(config)
        .unwrap()
        .enumerate()
        .map(|(i, imp)| {
            let (mut event, _) = encoder.encode(i as u64, &imp);
            if labeled {
                let mut items: Vec<usize> = (0..imp.relevance.len()).collect();
                items.sort_by(|&a, &b| imp.relevance[b].total_cmp(&imp.relevance[a]));
                let labels: Vec<String> = items[..3].iter().map(|a| format!("item_{a}")).collect();
                event["labels"] = json!(labels);
            }
            event
        })
        .collect()
}

/// The scores of a `/v1/predict` answer, by item.
fn scores(record: &Value) -> Vec<f64> {
    let ranking = record["ranking"].as_array().expect("a ranking");
    let mut out = vec![f64::NAN; ranking.len()];
    for r in ranking {
        out[r["index"].as_u64().unwrap() as usize] = r["score"].as_f64().unwrap();
    }
    out
}

/// Teaches a served model (`--learn`) 400 labeled impressions.
fn teach(server: &Server) {
    let agent = agent();
    let batch = Value::Array(impressions(400, 11, true)).to_string();
    let a = post(&agent, &server.url("/v1/learn"), &batch);
    assert_eq!(a.status, 200, "{}", a.body);
}

#[test]
fn rankings_carry_the_exact_propensities_of_their_policy() {
    let dir = temp_dir("serve-rank");
    for algorithm in [Algorithm::TopkBbm, Algorithm::TopkAdaptive] {
        let model = fresh_click_model(&dir, algorithm);
        let model = model.to_str().unwrap();
        let queries = impressions(30, 99, false);
        for explore in ["greedy", "epsilon-greedy:0.2", "softmax:0.5"] {
            let server = Server::start(&[
                "--model",
                model,
                "--learn",
                "--explore",
                explore,
                "--explore-seed",
                "4",
            ]);
            teach(&server);
            let policy: Exploration = explore.parse().unwrap();
            let agent = agent();
            for q in &queries {
                let body = q.to_string();
                let ranked = post(&agent, &server.url("/v1/rank"), &body);
                assert_eq!(ranked.status, 200, "{}", ranked.body);
                // Replayed: the same id, the same model, the same answer.
                let again = post(&agent, &server.url("/v1/rank"), &body);
                assert_eq!(again.body, ranked.body);
                let r = ranked.json();
                let predicted = post(&agent, &server.url("/v1/predict"), &body).json();
                let s = scores(&predicted);
                let items: Vec<u32> = r["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap() as u32)
                    .collect();
                assert_eq!(items.len(), 3, "{r}");
                assert_eq!(r["id"], q["id"]);
                assert_eq!(r["explore"], explore);
                assert_eq!(r["model_version"], 400);
                // The same slate and propensities as the library draws from these scores.
                let want = policy.draw(&s, 3, q["id"].as_u64().unwrap(), 4);
                assert_eq!(items, want.items, "{algorithm:?} {explore}: {r}");
                let props: Vec<f64> = r["propensities"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap())
                    .collect();
                assert_eq!(props, want.propensities, "{r}");
                assert_eq!(r["slate_propensity"].as_f64(), Some(want.slate_propensity));
                for (j, &a) in items.iter().enumerate() {
                    assert_eq!(r["shown"][j], format!("item_{a}"));
                    assert_eq!(r["scores"][j].as_f64(), Some(s[a as usize]));
                }
                if explore == "greedy" {
                    let mut top: Vec<u32> = (0..s.len() as u32).collect();
                    top.sort_by(|&a, &b| s[b as usize].total_cmp(&s[a as usize]).then(a.cmp(&b)));
                    assert_eq!(items, top[..3], "greedy is the model's top 3");
                    assert_eq!(props, vec![1.0; 3]);
                }
            }
            // A batch answers each impression as alone.
            let batch = Value::Array(queries[..5].to_vec()).to_string();
            let answers = post(&agent, &server.url("/v1/rank"), &batch).json();
            for (q, a) in queries[..5].iter().zip(answers.as_array().unwrap()) {
                let one = post(&agent, &server.url("/v1/rank"), &q.to_string()).json();
                assert_eq!(&one, a);
            }
            let _ = server.stop();
        }
    }
}

/// Over many request ids, the slates shown for one impression follow the propensities
/// the answers state (the first position's frequencies within 5 standard errors).
#[test]
fn drawn_slates_follow_their_propensities() {
    let dir = temp_dir("serve-rank-freq");
    let model = fresh_click_model(&dir, Algorithm::TopkBbm);
    for explore in ["epsilon-greedy:0.3", "softmax:0.3"] {
        let server = Server::start(&[
            "--model",
            model.to_str().unwrap(),
            "--learn",
            "--explore",
            explore,
        ]);
        teach(&server);
        let mut q = impressions(1, 5, false).remove(0);
        let n = 3_000u64;
        let batch: Vec<Value> = (0..n)
            .map(|id| {
                q["id"] = json!(id);
                q.clone()
            })
            .collect();
        let agent = agent();
        let answers = post(
            &agent,
            &server.url("/v1/rank"),
            &Value::Array(batch).to_string(),
        );
        assert_eq!(answers.status, 200, "{}", answers.body);
        let mut counts = std::collections::HashMap::<u64, (f64, f64)>::new();
        for a in answers.json().as_array().unwrap() {
            let e = counts
                .entry(a["items"][0].as_u64().unwrap())
                .or_insert((0.0, 0.0));
            e.0 += 1.0;
            e.1 = a["propensities"][0].as_f64().unwrap();
        }
        assert!(counts.len() > 3, "{explore}: it explores: {counts:?}");
        for (item, (c, p)) in counts {
            let se = (p * (1.0 - p) / n as f64).sqrt();
            assert!(
                (c / n as f64 - p).abs() < 5.0 * se + 1e-9,
                "{explore}: item {item} first {c} times in {n}, propensity {p}"
            );
        }
        let _ = server.stop();
    }
}

#[test]
fn ranking_is_refused_where_it_cannot_be_answered() {
    let dir = temp_dir("serve-rank-refusals");
    let topk = fresh_click_model(&dir, Algorithm::TopkBbm);
    // A model that is not a top-k booster: 422 not_topk, and --explore refused at start.
    let mut config = BoosterConfig::new(Algorithm::AdaOlmr, WeakKind::Vfdt, 1);
    config.learners = 2;
    let schema = click_schema(&ClickSimConfig::new(0, 1)).unwrap();
    let plain = dir.join("ada-olmr.fbm");
    Model::new(config, schema)
        .unwrap()
        .save_file(&plain)
        .unwrap();
    let server = Server::start(&["--model", plain.to_str().unwrap()]);
    let agent = agent();
    let q = impressions(1, 1, false).remove(0).to_string();
    let a = post(&agent, &server.url("/v1/rank"), &q);
    assert_eq!(a.status, 422, "{}", a.body);
    assert_eq!(a.json()["error"]["reason"], "not_topk");
    drop(server);
    let out = common::flowboost(&[
        "serve",
        "--model",
        plain.to_str().unwrap(),
        "--explore",
        "softmax:1",
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a top-k booster"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = common::flowboost(&[
        "serve",
        "--model",
        topk.to_str().unwrap(),
        "--explore",
        "epsilon-greedy:2",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("[0, 1]"));
    // A bad impression: the field and the reason, as /v1/predict names them.
    let server = Server::start(&["--model", topk.to_str().unwrap(), "--explore", "softmax:1"]);
    let a = post(
        &agent,
        &server.url("/v1/rank"),
        r#"{"id": 3, "features": {"colour": 1}}"#,
    );
    assert_eq!(a.status, 422, "{}", a.body);
    assert_eq!(a.json()["error"]["reason"], "unknown_feature");
    let a = post(&agent, &server.url("/v1/rank"), r#"{"features": {}}"#);
    assert_eq!(a.json()["error"]["reason"], "missing_id");
    let a = post(&agent, &server.url("/v1/rank"), "not json");
    assert_eq!(a.status, 400);
}

/// A keyed file of top-k boosters: each key's impressions are ranked by its own model.
#[test]
fn a_keyed_model_ranks_each_key_with_its_own_model() {
    let dir = temp_dir("serve-rank-keyed");
    let one = fresh_click_model(&dir, Algorithm::TopkBbm);
    let model = Model::load_file(&one).unwrap();
    let mut saved = model.to_saved().unwrap();
    let other = model.to_saved().unwrap();
    saved.body.keyed.push(flowboost::model::KeyModel {
        stages: other.body.stages,
        terminal: other.body.terminal,
        position: other.body.position,
    });
    let path = dir.join("keyed.fbm");
    saved
        .with_keys(vec!["men".into(), "women".into()], Vec::new())
        .write(&path)
        .unwrap();
    let server = Server::start(&["--model", path.to_str().unwrap(), "--learn"]);
    let agent = agent();
    // Each key learns its own three items for every user.
    let mut batch = Vec::new();
    for (n, mut e) in impressions(300, 2, false).into_iter().enumerate() {
        let (key, items) = if n % 2 == 0 {
            ("men", ["item_1", "item_2", "item_3"])
        } else {
            ("women", ["item_40", "item_41", "item_42"])
        };
        e["key"] = json!(key);
        e["labels"] = json!(items);
        batch.push(e);
    }
    let a = post(
        &agent,
        &server.url("/v1/learn"),
        &Value::Array(batch).to_string(),
    );
    assert_eq!(a.status, 200, "{}", a.body);
    let mut q = impressions(1, 8, false).remove(0);
    for (key, want) in [("men", [1, 2, 3]), ("women", [40, 41, 42])] {
        q["key"] = json!(key);
        let r = post(&agent, &server.url("/v1/rank"), &q.to_string()).json();
        assert_eq!(r["key"], key, "{r}");
        let mut items: Vec<u64> = r["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        items.sort_unstable();
        assert_eq!(items, want, "{r}");
        assert_eq!(r["model_version"], 150, "{r}");
    }
    q.as_object_mut().unwrap().remove("key");
    let a = post(&agent, &server.url("/v1/rank"), &q.to_string());
    assert_eq!(a.status, 422);
    assert_eq!(a.json()["error"]["reason"], "missing_key");
}
