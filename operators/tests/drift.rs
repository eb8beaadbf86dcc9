//! The drift detectors (`flowboost_operators::drift`): hand-computed cases, ADWIN's cut
//! against a brute force over every split point, state round trips, parameter checks, and
//! River 0.26.1's change points on seeded sequences (`tests/fixtures/drift_river.json`,
//! written by `scripts/drift_river_fixture.py`), which must be reproduced index for index.

use flowboost_operators::drift::{
    Adwin, AdwinConfig, Bucket, Ddm, DdmConfig, Detector, DetectorConfig, DriftConfigError,
    DriftDetector, DriftState, PageHinkley, PageHinkleyConfig, PageHinkleyMode,
};
use serde_json::Value;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * (1.0 + b.abs())
}

/// The indices at which `d` reports `want`.
fn indices(d: &mut impl DriftDetector, xs: &[f64], want: DriftState) -> Vec<usize> {
    xs.iter()
        .enumerate()
        .filter(|&(_, &x)| d.update(x) == want)
        .map(|(i, _)| i)
        .collect()
}

// ---------------------------------------------------------------- Page-Hinkley by hand

/// x = 1 1 1 1 1 5 5 5 5 5, δ = 0.5, α = 1, λ = 3, min_instances 1.
///
/// ```text
/// t  x  x̄_t     x − x̄_t   U_t = U + dev − δ   m_t    U − m   L_t = L + dev + δ  M_t    M − L
/// 1  1  1        0         −0.5               −0.5   0       0.5                0.5    0
/// 2  1  1        0         −1.0               −1.0   0       1.0                1.0    0
/// 3  1  1        0         −1.5               −1.5   0       1.5                1.5    0
/// 4  1  1        0         −2.0               −2.0   0       2.0                2.0    0
/// 5  1  1        0         −2.5               −2.5   0       2.5                2.5    0
/// 6  5  10/6     10/3       1/3               −2.5   17/6    19/3               19/3   0
/// 7  5  15/7     20/7       1/3 + 20/7 − 1/2  −2.5   5.1904… (> 3: drift at index 6)
/// ```
/// The eighth value starts afresh: x̄ = 5, U = −0.5, L = 0.5, no drift on 5 5 5.
#[test]
fn page_hinkley_by_hand() {
    let config = PageHinkleyConfig {
        min_instances: 1,
        delta: 0.5,
        threshold: 3.0,
        alpha: 1.0,
        mode: PageHinkleyMode::Both,
    };
    let mut ph = PageHinkley::new(config).unwrap();
    let xs = [1.0, 1.0, 1.0, 1.0, 1.0, 5.0, 5.0, 5.0, 5.0, 5.0];
    let mut states = Vec::new();
    for (t, &x) in xs.iter().enumerate().take(5) {
        states.push(ph.update(x));
        let t = (t + 1) as f64;
        assert!(close(ph.sum_increase(), -0.5 * t));
        assert!(close(ph.sum_decrease(), 0.5 * t));
        assert_eq!(ph.increase_statistic(), 0.0);
        assert_eq!(ph.decrease_statistic(), 0.0);
    }
    states.push(ph.update(5.0));
    assert!(close(ph.estimate(), 10.0 / 6.0));
    assert!(close(ph.sum_increase(), 1.0 / 3.0));
    assert!(close(ph.increase_statistic(), 17.0 / 6.0));
    assert!(close(ph.sum_decrease(), 19.0 / 3.0));
    assert_eq!(ph.decrease_statistic(), 0.0);
    states.push(ph.update(5.0));
    assert!(close(ph.sum_increase(), 1.0 / 3.0 + 20.0 / 7.0 - 0.5));
    assert!(close(
        ph.increase_statistic(),
        1.0 / 3.0 + 20.0 / 7.0 - 0.5 + 2.5
    ));
    for &x in &xs[7..] {
        states.push(ph.update(x));
    }
    assert_eq!(ph.count(), 3, "reset after the drift");
    assert!(close(ph.sum_increase(), -1.5));
    let drifts: Vec<usize> = (0..10)
        .filter(|&i| states[i] == DriftState::Drift)
        .collect();
    assert_eq!(drifts, [6]);
}

/// Decreases only, α = 1/2, δ = 0, λ = 1, min_instances 3: x = 2 2 2 0 0.
///
/// ```text
/// t  x  x̄     dev     L_t = L/2 + dev   M_t = max(−1, L…)   M − L
/// 1  2  2     0       0                 0                   0
/// 2  2  2     0       0                 0                   0
/// 3  2  2     0       0                 0                   0
/// 4  0  3/2   −3/2    −3/2              0                   3/2  (> 1: drift at index 3)
/// ```
/// The same values under mode Up: U_4 = −3/2 is a new minimum, no drift.
#[test]
fn page_hinkley_down_with_fading_by_hand() {
    let config = PageHinkleyConfig {
        min_instances: 3,
        delta: 0.0,
        threshold: 1.0,
        alpha: 0.5,
        mode: PageHinkleyMode::Down,
    };
    let xs = [2.0, 2.0, 2.0, 0.0];
    let mut ph = PageHinkley::new(config.clone()).unwrap();
    assert_eq!(indices(&mut ph, &xs, DriftState::Drift), [3]);
    assert!(close(ph.decrease_statistic(), 1.5));
    let mut up = PageHinkley::new(PageHinkleyConfig {
        mode: PageHinkleyMode::Up,
        ..config
    })
    .unwrap();
    assert!(indices(&mut up, &xs, DriftState::Drift).is_empty());
    assert_eq!(up.increase_statistic(), 0.0);
}

// ---------------------------------------------------------------------- DDM by hand

/// Errors 1 0 0 0 then eleven 1s, warm_start 2 (tested from t = 3 on):
///
/// ```text
/// t   p_t     s_t = sqrt(p(1−p)/t)   p + s     (p_min, s_min)       state
/// 3   1/3     sqrt(2/27) = .272166   .605499   (1/3, .272166)       (warning at .877665)
/// 4   1/4     sqrt(3/64) = .216506   .466506   (1/4, .216506)       stable
/// 5   2/5     .219089                .619089   kept                 warning at .683013
/// 6   1/2     .204124                .704124                        warning (> .683013)
/// …   …                                                             warning, drift at .899519
/// 14  11/14   .109664                .895378                        warning
/// 15  4/5     .103280                .903280                        drift (index 14)
/// ```
#[test]
fn ddm_by_hand() {
    let mut ddm = Ddm::new(DdmConfig {
        warm_start: 2,
        ..DdmConfig::default()
    })
    .unwrap();
    let mut xs = vec![1.0, 0.0, 0.0, 0.0];
    xs.extend([1.0; 11]);
    let states: Vec<DriftState> = xs
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let s = ddm.update(x);
            if i == 3 {
                let (p_min, s_min) = ddm.minimum().unwrap();
                assert!(close(p_min, 0.25));
                assert!(close(s_min, (3.0f64 / 64.0).sqrt()));
            }
            s
        })
        .collect();
    let at = |want| {
        (0..xs.len())
            .filter(|&i| states[i] == want)
            .collect::<Vec<_>>()
    };
    assert_eq!(at(DriftState::Warning), (5..14).collect::<Vec<_>>());
    assert_eq!(at(DriftState::Drift), [14]);
    assert!(close(ddm.error_rate(), 0.8));
    assert!(close(ddm.std_dev(), (0.16f64 / 15.0).sqrt()));
    // The next value starts afresh.
    ddm.update(0.0);
    assert_eq!(
        (ddm.count(), ddm.error_rate(), ddm.minimum()),
        (1, 0.0, None)
    );
}

/// An error-free warm start leaves p_min = s_min = 0: the first mistake is a drift (as in
/// River and MOA).
#[test]
fn ddm_first_mistake_after_a_clean_warm_start() {
    let mut ddm = Ddm::default();
    let mut xs = vec![0.0; 40];
    xs.push(1.0);
    assert_eq!(indices(&mut ddm, &xs, DriftState::Drift), [40]);
}

// --------------------------------------------------------------------- ADWIN by hand

/// M = 2: a row merges its two oldest buckets when it holds 3.
///
/// ```text
/// after 1, 2       row 0: [1] [2]
/// after 3          row 0: [1][2][3] -> row 1: [1+2]; row 0: [3]
/// after 4, 5       row 0: [3][4][5] -> row 1: [3] [3+4]; row 0: [5]
/// after 6, 7       row 0: [5][6][7] -> row 1: [3][7][11] -> row 2: [3+7]; row 1: [11]; row 0: [7]
/// ```
/// Variances: a pair (a, b) has (a − b)²/2 = 0.5; row 2's [1, 2, 3, 4]: 0.5 + 0.5 + 2 · ½ ·
/// (1.5 − 3.5)² = 5 (= 2.25 + 0.25 + 0.25 + 2.25). The window: 1..7, mean 4, sum of squared
/// deviations 28, variance 4.
#[test]
fn adwin_buckets_by_hand() {
    let mut adwin = Adwin::new(AdwinConfig {
        max_buckets: 2,
        ..AdwinConfig::default()
    })
    .unwrap();
    let b = |total, variance| Bucket { total, variance };
    adwin.update(1.0);
    adwin.update(2.0);
    assert_eq!(adwin.rows(), [vec![b(1.0, 0.0), b(2.0, 0.0)]]);
    adwin.update(3.0);
    assert_eq!(adwin.rows(), [vec![b(3.0, 0.0)], vec![b(3.0, 0.5)]]);
    adwin.update(4.0);
    adwin.update(5.0);
    assert_eq!(
        adwin.rows(),
        [vec![b(5.0, 0.0)], vec![b(3.0, 0.5), b(7.0, 0.5)]]
    );
    adwin.update(6.0);
    adwin.update(7.0);
    assert_eq!(
        adwin.rows(),
        [vec![b(7.0, 0.0)], vec![b(11.0, 0.5)], vec![b(10.0, 5.0)]]
    );
    assert_eq!((adwin.width(), adwin.total()), (7, 28.0));
    assert!(close(adwin.variance(), 4.0));
    assert!(close(adwin.estimate(), 4.0));
    assert_eq!(adwin.bucket_count(), 3);
}

/// The memory stays O(M log(W/M)): at most M + 1 buckets a row, and about log2(W/M) rows.
#[test]
fn adwin_memory_is_logarithmic() {
    let mut adwin = Adwin::default();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..200_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        adwin.update((x % 2) as f64);
    }
    assert_eq!(adwin.width(), 200_000, "a stationary stream: no cut");
    let rows = adwin.rows().len();
    assert!(rows <= 17, "{rows} rows for 200000 values");
    assert!(adwin.rows().iter().all(|r| r.len() <= 5));
    assert!(adwin.bucket_count() <= 5 * 17);
}

/// `ε_cut` computed apart from the detector (see `Adwin`'s documentation): `δ'' = ln(2 ln
/// W / δ)`, `1/m = 1/(n0 − mwl + 1) + 1/(n1 − mwl + 1)`, `ε = sqrt(2/m σ² δ'') + 2/(3m) δ''`.
fn eps_cut(window: &[f64], n0: usize, delta: f64, mwl: usize) -> f64 {
    let w = window.len() as f64;
    let mean = window.iter().sum::<f64>() / w;
    let var = window.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / w;
    let n1 = window.len() - n0;
    let dd = (2.0 * w.ln() / delta).ln();
    let m_recip = 1.0 / (n0 - mwl + 1) as f64 + 1.0 / (n1 - mwl + 1) as f64;
    (2.0 * m_recip * var * dd).sqrt() + 2.0 / 3.0 * dd * m_recip
}

/// The largest `|μ0 − μ1| − ε_cut` over every split with both parts at least `mwl` long.
fn best_cut(window: &[f64], delta: f64, mwl: usize) -> Option<f64> {
    (mwl..=window.len().saturating_sub(mwl))
        .map(|n0| {
            let (w0, w1) = window.split_at(n0);
            let mean = |w: &[f64]| w.iter().sum::<f64>() / w.len() as f64;
            (mean(w0) - mean(w1)).abs() - eps_cut(window, n0, delta, mwl)
        })
        .max_by(f64::total_cmp)
}

/// With `clock` 1 and rows large enough never to merge (every value its own bucket),
/// ADWIN's cut is the brute force over all split points: a drift exactly when some split
/// exceeds `ε_cut`, after which the oldest values are dropped one by one until none does
/// (the paper's form, `reset_on_drift` off, so the shrinking is visible).
#[test]
fn adwin_cut_is_the_brute_force_over_all_splits() {
    let (delta, mwl, grace) = (0.05, 3usize, 4u64);
    let mut adwin = Adwin::new(AdwinConfig {
        delta,
        clock: 1,
        max_buckets: 1000,
        min_window_length: mwl as u64,
        grace_period: grace,
        reset_on_drift: false,
    })
    .unwrap();
    // A seeded sequence: Bernoulli(0.2) for 150 values, Bernoulli(0.7) for 150, then
    // Bernoulli(0.1).
    let mut s = 12345u64;
    let mut uniform = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let xs: Vec<f64> = (0..450)
        .map(|i| {
            let p = if i < 150 {
                0.2
            } else if i < 300 {
                0.7
            } else {
                0.1
            };
            f64::from(u8::from(uniform() < p))
        })
        .collect();
    let mut window: Vec<f64> = Vec::new();
    let (mut drifts, mut brute) = (Vec::new(), Vec::new());
    let mut ambiguous = 0;
    for (i, &x) in xs.iter().enumerate() {
        if adwin.update(x) == DriftState::Drift {
            drifts.push(i);
        }
        window.push(x);
        if window.len() as u64 > grace {
            let mut cut = false;
            while let Some(margin) = best_cut(&window, delta, mwl) {
                if margin.abs() < 1e-9 {
                    ambiguous += 1;
                }
                if margin <= 0.0 {
                    break;
                }
                cut = true;
                window.remove(0);
            }
            if cut {
                brute.push(i);
            }
        }
        assert_eq!(adwin.width(), window.len() as u64, "the window at {i}");
    }
    assert_eq!(ambiguous, 0, "a split too close to the bound to compare");
    assert_eq!(drifts, brute);
    assert!(drifts.len() >= 2, "both changes found: {drifts:?}");
}

// ------------------------------------------------------------- state, parameters, input

/// A detector saved mid-window and loaded again continues exactly as the original.
#[test]
fn state_round_trips_mid_window() {
    let xs: Vec<f64> = (0..3000)
        .map(|i| f64::from(u8::from((i * 7919 % 101) < if i < 1500 { 20 } else { 60 })))
        .collect();
    let configs = [
        DetectorConfig::Adwin(AdwinConfig::default()),
        DetectorConfig::PageHinkley(PageHinkleyConfig::default()),
        DetectorConfig::Ddm(DdmConfig::default()),
    ];
    for config in configs {
        let mut a = config.build().unwrap();
        for &x in &xs[..1510] {
            a.update(x);
        }
        let json = serde_json::to_string(&a).unwrap();
        let mut b: Detector = serde_json::from_str(&json).unwrap();
        let bytes = postcard::to_allocvec(&a).unwrap();
        let mut c: Detector = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
        for &x in &xs[1510..] {
            let s = a.update(x);
            assert_eq!(s, b.update(x));
            assert_eq!(s, c.update(x));
        }
        assert_eq!(a, b);
        assert_eq!(a, c);
    }
}

#[test]
fn parameters_out_of_range_are_refused() {
    let adwin = |c: AdwinConfig| Adwin::new(c).err();
    let d = AdwinConfig::default();
    for delta in [0.0, 1.0, -0.1, f64::NAN] {
        assert!(matches!(
            adwin(AdwinConfig { delta, ..d.clone() }),
            Some(DriftConfigError::Confidence { name: "delta", .. })
        ));
    }
    assert!(matches!(
        adwin(AdwinConfig {
            clock: 0,
            ..d.clone()
        }),
        Some(DriftConfigError::TooSmall { name: "clock", .. })
    ));
    assert!(matches!(
        adwin(AdwinConfig {
            max_buckets: 1,
            ..d.clone()
        }),
        Some(DriftConfigError::TooSmall {
            name: "max_buckets",
            ..
        })
    ));
    assert!(matches!(
        adwin(AdwinConfig {
            min_window_length: 0,
            ..d
        }),
        Some(DriftConfigError::TooSmall {
            name: "min_window_length",
            ..
        })
    ));
    let ph = PageHinkleyConfig::default();
    for bad in [
        PageHinkleyConfig {
            alpha: 0.0,
            ..ph.clone()
        },
        PageHinkleyConfig {
            alpha: 1.5,
            ..ph.clone()
        },
        PageHinkleyConfig {
            threshold: f64::INFINITY,
            ..ph.clone()
        },
        PageHinkleyConfig {
            delta: -1.0,
            ..ph.clone()
        },
    ] {
        assert!(matches!(
            PageHinkley::new(bad),
            Err(DriftConfigError::OutOfRange { .. })
        ));
    }
    let ddm = DdmConfig::default();
    assert!(matches!(
        Ddm::new(DdmConfig {
            warning_threshold: 4.0,
            ..ddm.clone()
        }),
        Err(DriftConfigError::WarningAboveDrift { .. })
    ));
    assert!(matches!(
        Ddm::new(DdmConfig {
            warning_threshold: 0.0,
            ..ddm
        }),
        Err(DriftConfigError::OutOfRange { .. })
    ));
    let e = Adwin::new(AdwinConfig {
        delta: 2.0,
        ..AdwinConfig::default()
    })
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "ADWIN: the confidence delta must lie strictly between 0 and 1, not 2"
    );
}

#[test]
fn values_that_are_not_finite_are_ignored() {
    for config in [
        DetectorConfig::Adwin(AdwinConfig::default()),
        DetectorConfig::PageHinkley(PageHinkleyConfig::default()),
        DetectorConfig::Ddm(DdmConfig::default()),
    ] {
        let mut a = config.build().unwrap();
        for i in 0..100 {
            a.update(f64::from(i % 2));
        }
        let before = a.clone();
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(a.update(x), DriftState::Stable);
        }
        assert_eq!(a, before);
    }
}

// ------------------------------------------------------------------ River's change points

struct Fixture {
    river_version: String,
    sequences: std::collections::BTreeMap<String, Vec<f64>>,
    runs: Vec<Value>,
}

fn fixture() -> Fixture {
    let text = include_str!("fixtures/drift_river.json");
    let doc: Value = serde_json::from_str(text).unwrap();
    let scale = doc["dyadic_scale"].as_f64().unwrap();
    let mut sequences = std::collections::BTreeMap::new();
    for (name, seq) in doc["sequences"].as_object().unwrap() {
        let values: Vec<f64> = match seq["kind"].as_str().unwrap() {
            "bits" => seq["values"]
                .as_str()
                .unwrap()
                .bytes()
                .map(|b| f64::from(b - b'0'))
                .collect(),
            "dyadic" => seq["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_i64().unwrap() as f64 / scale)
                .collect(),
            other => panic!("unknown sequence kind {other}"),
        };
        sequences.insert(name.clone(), values);
    }
    Fixture {
        river_version: doc["river_version"].as_str().unwrap().to_string(),
        sequences,
        runs: doc["runs"].as_array().unwrap().clone(),
    }
}

/// The detector of a fixture run, from River's parameter names (absent: River's default,
/// which is ours).
fn detector(name: &str, params: &Value) -> Detector {
    let f = |k: &str| params.get(k).and_then(Value::as_f64);
    let u = |k: &str| params.get(k).and_then(Value::as_u64);
    let config = match name {
        "adwin" => {
            let d = AdwinConfig::default();
            DetectorConfig::Adwin(AdwinConfig {
                delta: f("delta").unwrap_or(d.delta),
                clock: u("clock").unwrap_or(d.clock),
                max_buckets: u("max_buckets").map_or(d.max_buckets, |m| m as usize),
                min_window_length: u("min_window_length").unwrap_or(d.min_window_length),
                grace_period: u("grace_period").unwrap_or(d.grace_period),
                reset_on_drift: true,
            })
        }
        "page_hinkley" => {
            let d = PageHinkleyConfig::default();
            let mode = match params.get("mode").and_then(Value::as_str) {
                None | Some("both") => PageHinkleyMode::Both,
                Some("up") => PageHinkleyMode::Up,
                Some("down") => PageHinkleyMode::Down,
                Some(other) => panic!("unknown mode {other}"),
            };
            DetectorConfig::PageHinkley(PageHinkleyConfig {
                min_instances: u("min_instances").unwrap_or(d.min_instances),
                delta: f("delta").unwrap_or(d.delta),
                threshold: f("threshold").unwrap_or(d.threshold),
                alpha: f("alpha").unwrap_or(d.alpha),
                mode,
            })
        }
        "ddm" => {
            let d = DdmConfig::default();
            DetectorConfig::Ddm(DdmConfig {
                warm_start: u("warm_start").unwrap_or(d.warm_start),
                warning_threshold: f("warning_threshold").unwrap_or(d.warning_threshold),
                drift_threshold: f("drift_threshold").unwrap_or(d.drift_threshold),
            })
        }
        other => panic!("unknown detector {other}"),
    };
    config.build().unwrap()
}

/// Consecutive indices as `[first, last]` runs (the fixture's form for DDM's warnings).
fn runs_of(indices: &[usize]) -> Vec<[usize; 2]> {
    let mut out: Vec<[usize; 2]> = Vec::new();
    for &i in indices {
        match out.last_mut() {
            Some(last) if last[1] + 1 == i => last[1] = i,
            _ => out.push([i, i]),
        }
    }
    out
}

#[test]
fn the_same_change_points_as_river() {
    let fx = fixture();
    assert_eq!(fx.river_version, "0.26.1");
    assert_eq!(fx.runs.len(), 19);
    let mut failures = Vec::new();
    for run in &fx.runs {
        let name = run["detector"].as_str().unwrap();
        let seq = run["sequence"].as_str().unwrap();
        let xs = &fx.sequences[seq];
        let mut d = detector(name, &run["params"]);
        let mut drifts = Vec::new();
        let mut warnings = Vec::new();
        for (i, &x) in xs.iter().enumerate() {
            match d.update(x) {
                DriftState::Drift => drifts.push(i),
                DriftState::Warning => warnings.push(i),
                DriftState::Stable => {}
            }
        }
        let want: Vec<usize> = serde_json::from_value(run["drifts"].clone()).unwrap();
        let label = format!("{name} {} on {seq}", run["params"]);
        if drifts != want {
            failures.push(format!("{label}: drifts {drifts:?}, River {want:?}"));
        }
        if let Some(w) = run.get("warning_runs") {
            let want: Vec<[usize; 2]> = serde_json::from_value(w.clone()).unwrap();
            if runs_of(&warnings) != want {
                failures.push(format!("{label}: warnings differ"));
            }
        }
        if let (Some(width), Detector::Adwin(a)) = (run.get("final_width"), &d) {
            let total = run["final_total"].as_f64().unwrap();
            if (a.width() as f64, a.total()) != (width.as_f64().unwrap(), total) {
                failures.push(format!(
                    "{label}: final window {} / {}, River {width} / {total}",
                    a.width(),
                    a.total()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
